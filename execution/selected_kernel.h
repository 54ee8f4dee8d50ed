// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Everything Run executes, resolved once at selection: the functions of the selected ISA, how they reach the
// pixels (which the planner plans for), and the kernel's working memory.
#ifndef ROIALIGN_EXECUTION_SELECTED_KERNEL_H_
#define ROIALIGN_EXECUTION_SELECTED_KERNEL_H_

#include <functional>
#include <string>

#include "execution/plan.h"
#include "execution/working_memory.h"
#include "kernels/kernel_descriptor.h"
#include "core/library.h"

namespace roialign {
namespace internal {

struct SelectedKernel {
  std::string name;  // e.g. "roi_align_nhwc.avx2"
  // A built-in kernel: its target's functions per dtype.
  PerDType fns{};
  PixelAccess access = PixelAccess::kWholeRois;
  // A registered implementation: receives the validated call as is.
  std::function<Status(const roialign_problem&)> custom;
  mutable WorkingMemoryPool memory;
};

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_SELECTED_KERNEL_H_
