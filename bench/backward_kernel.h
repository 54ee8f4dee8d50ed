// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The backward (dX from dY) for the benchmarks, through the C API: core/library.h's Kernel runs the forward only,
// and roialign.hpp, which wraps the backward, cannot be included beside it (both declare roialign::Params).
#ifndef ROIALIGN_BENCH_BACKWARD_KERNEL_H_
#define ROIALIGN_BENCH_BACKWARD_KERNEL_H_

#include <memory>
#include <string>

#include "core/library.h"
#include "roialign/roialign.h"

namespace roialign {
namespace bench {

// A kernel selected with ROIALIGN_PARAMS_BACKWARD on `target` for `params`; immutable, cheap to copy.
class BackwardKernel {
 public:
  BackwardKernel(const std::string& target, const Params& params);
  // Whether selection succeeded; if not, status() says why.
  bool ok() const { return kernel_ != nullptr; }
  const Status& status() const { return status_; }
  std::string name() const;
  // dX (the map's shape and layout, dense) from dY (the output's) with the forward's inputs `in`, on `threads`
  // threads (0: OpenMP's default).
  Status Run(const Inputs& in, const void* dy, void* dx, int threads) const;

 private:
  std::shared_ptr<roialign_kernel> kernel_;
  Status status_;
};

// The same for a multi-level kernel: dx[l] is level l's dX.
class MultiLevelBackwardKernel {
 public:
  MultiLevelBackwardKernel(const std::string& target, const MultiLevelParams& params);
  bool ok() const { return kernel_ != nullptr; }
  const Status& status() const { return status_; }
  Status Run(const MultiLevelInputs& in, const void* dy, void* const* dx, int threads) const;

 private:
  std::shared_ptr<roialign_multi_level_kernel> kernel_;
  Status status_;
};

// `params` as the C API's struct (ROIALIGN_PARAMS_BACKWARD set when params.backward).
roialign_params ToC(const Params& params);

}  // namespace bench
}  // namespace roialign

#endif  // ROIALIGN_BENCH_BACKWARD_KERNEL_H_
