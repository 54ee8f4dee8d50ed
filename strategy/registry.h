// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The registry of roi_align implementations: one list, read by selection, the tests and the benchmarks.
#ifndef ROIALIGN_STRATEGY_REGISTRY_H_
#define ROIALIGN_STRATEGY_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/enums.h"
#include "kernels/kernel_descriptor.h"
#include "core/library.h"

namespace roialign {
namespace internal {

struct Implementation {
  std::string target;     // the target it serves, e.g. "x86-avx2" or a user's "npu"
  std::string name;       // e.g. "roi_align_nhwc.avx2"
  int64_t hwy_target = 0; // the ISA it needs (a Highway target bit); 0: any CPU
  int32_t priority = 0;
  uint32_t layouts = 0, dtypes = 0, pool_modes = 0, coordinate_modes = 0;  // masks of Bit(value)
  // Built-in kernels serve both kinds of RoI; registered implementations (roialign_implementation) axis-aligned ones.
  uint32_t roi_kinds = Bit(RoiKind::kAxisAligned);
  uint32_t backward_dtypes = 0;  // the dtypes it also runs the backward of (built-in kernels only)
  // Built-in kernels, from their descriptor: the functions of their target per dtype (null where not served).
  PerDType builtin{};
  std::function<Status(const roialign_problem&)> custom;  // registered by a user
  bool is_builtin() const { return !custom; }
};

using ImplementationPtr = std::shared_ptr<const Implementation>;

// Every implementation compiled into this build plus those registered by users, best first within a target.
std::vector<ImplementationPtr> AllImplementations();
// Adds a user implementation; refuses built-in target names, duplicate names and empty masks.
Status RegisterImplementation(Implementation impl);

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_STRATEGY_REGISTRY_H_
