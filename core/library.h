/* Copyright 2026 The roialign Authors
 * SPDX-License-Identifier: Apache-2.0 */
// The library's internal C++ API: what strategy/ and execution/ implement, api/c_api.cc wraps as the C API, and the
// C++ tests, the benchmarks and the static library's internal users call. Not installed, not exported from
// libroialign.so (the C API is its only ABI). No SIMD or Highway here.
// Its values (Status, Params, Inputs, the enums, ...) are the public header's (include/roialign/roialign.hpp): one
// vocabulary. What it adds are the operations behind the C API, under names of their own: a KernelHandle holds what
// selection resolved, where the public roialign::Kernel holds a C roialign_kernel that wraps one.
#ifndef ROIALIGN_CORE_LIBRARY_H_
#define ROIALIGN_CORE_LIBRARY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "roialign/roialign.h"
#include "roialign/roialign.hpp"

namespace roialign {

namespace internal {
struct SelectedKernel;
}

// A selected implementation: immutable, cheap to copy, safe to run from many threads at once.
class KernelHandle {
 public:
  KernelHandle() = default;
  // Validates the data (docs/errors-and-limits.md), then computes; on error `output` is untouched.
  // `output` holds K*C*PH*PW elements; num_threads <= 0 uses OpenMP's default.
  Status Run(const Inputs& inputs, void* output, int32_t num_threads = 0) const;
  // The same on the caller's pool; bit-identical results. A null parallel_for or num_threads < 1 is
  // INVALID_ARGUMENT (output untouched).
  Status Run(const Inputs& inputs, void* output, const roialign_threadpool& pool) const;
  // The implementation's name, e.g. "roi_align_nhwc.avx512".
  const std::string& name() const;
  // Frees the working memory kept between Runs (Runs in progress keep theirs); noexcept.
  void ReleaseWorkingMemory() const noexcept;
  const Params& params() const { return params_; }
  bool valid() const { return selected_ != nullptr; }

 private:
  friend struct KernelAccess;
  // What selection resolved (the function for this dtype and ISA, the planner's options) and the kernel's
  // working memory, shared by copies.
  std::shared_ptr<const internal::SelectedKernel> selected_;
  Params params_;
};

// A KernelHandle or the Status explaining why there is none.
class Selection {
 public:
  Selection(KernelHandle kernel) : kernel_(std::move(kernel)) {}  // NOLINT: implicit by design
  Selection(Status status) : status_(std::move(status)) {}  // NOLINT
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  const KernelHandle& value() const { return kernel_; }
  const KernelHandle& operator*() const { return kernel_; }
  const KernelHandle* operator->() const { return &kernel_; }

 private:
  Status status_;
  KernelHandle kernel_;
};

// Validates `params` and picks the highest-priority implementation serving them on `target`, or refuses with
// INVALID_ARGUMENT (bad attributes or unknown target) or UNSUPPORTED (nothing serves them; the message lists
// what the target does support).
Selection SelectKernel(const std::string& target, const Params& params);

// A selected multi-level (feature pyramid) implementation: immutable, cheap to copy, safe to run from many threads
// at once.
class PyramidKernelHandle {
 public:
  PyramidKernelHandle() = default;
  // Validates the data (each level's shape, the given levels, every RoI on its level), then pools each RoI from
  // its level into output[k]; on error `output` is untouched.
  Status Run(const MultiLevelInputs& inputs, void* output, int32_t num_threads = 0) const;
  Status Run(const MultiLevelInputs& inputs, void* output, const roialign_threadpool& pool) const;
  const std::string& name() const { return kernel_.name(); }
  void ReleaseWorkingMemory() const noexcept { kernel_.ReleaseWorkingMemory(); }
  const MultiLevelParams& params() const { return params_; }
  bool valid() const { return kernel_.valid(); }

 private:
  friend struct KernelAccess;
  KernelHandle kernel_;  // the single-level kernel every level runs (its spatial_scale is level 0's)
  MultiLevelParams params_;
};

// A PyramidKernelHandle or the Status explaining why there is none.
struct PyramidSelection {
  Status status;
  PyramidKernelHandle kernel;
  bool ok() const { return status.ok(); }
};

// Validates the level count, the scales and the rule, then selects as SelectKernel does (built-in implementations
// only: a registered implementation is UNSUPPORTED).
PyramidSelection SelectPyramidKernel(const std::string& target, const MultiLevelParams& params);

// What a target serves (for layout planning), or why it cannot serve anything here.
Status DescribeTarget(const std::string& target, TargetInfo* info);

// Every known target name: the built-in ones, then registered ones.
std::vector<std::string> TargetNames();
// Names of all implementations registered for `target` that this CPU and build can run, best first.
std::vector<std::string> ImplementationsOf(const std::string& target);

// Adds a user implementation for a user target (e.g. an NHWC-only accelerator); it receives validated data.
Status RegisterCustomImplementation(CustomImplementation impl);

}  // namespace roialign

#endif  // ROIALIGN_CORE_LIBRARY_H_
