// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Everything Run executes, resolved once at selection: the functions of the selected ISA, how they reach the
// pixels (which the planner plans for), and the kernel's working memory; and the access through which selection
// wraps it in a KernelHandle, and Run and tests reach it, without widening the class.
#ifndef ROIALIGN_EXECUTION_SELECTED_KERNEL_H_
#define ROIALIGN_EXECUTION_SELECTED_KERNEL_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "core/library.h"
#include "execution/plan.h"
#include "execution/working_memory.h"
#include "kernels/kernel_descriptor.h"

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

struct KernelAccess {
  static KernelHandle Make(std::shared_ptr<const internal::SelectedKernel> selected, const Params& params) {
    KernelHandle k;
    k.selected_ = std::move(selected);
    k.params_ = params;
    return k;
  }
  static const internal::SelectedKernel* Selected(const KernelHandle& k) { return k.selected_.get(); }
  static PyramidKernelHandle MakePyramid(KernelHandle kernel, const MultiLevelParams& params) {
    PyramidKernelHandle k;
    k.kernel_ = std::move(kernel);
    k.params_ = params;
    return k;
  }
  static const KernelHandle& Inner(const PyramidKernelHandle& k) { return k.kernel_; }
};

}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_SELECTED_KERNEL_H_
