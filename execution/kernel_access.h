// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Lets selection construct a Kernel around what it selected, and tests reach it, without widening the public
// class.
#ifndef ROIALIGN_EXECUTION_KERNEL_ACCESS_H_
#define ROIALIGN_EXECUTION_KERNEL_ACCESS_H_

#include <memory>
#include <utility>

#include "execution/selected_kernel.h"
#include "core/library.h"

namespace roialign {

struct KernelAccess {
  static Kernel Make(std::shared_ptr<const internal::SelectedKernel> selected, const Params& params) {
    Kernel k;
    k.selected_ = std::move(selected);
    k.params_ = params;
    return k;
  }
  static const internal::SelectedKernel* Selected(const Kernel& k) { return k.selected_.get(); }
  static MultiLevelKernel MakeMultiLevel(Kernel kernel, const MultiLevelParams& params) {
    MultiLevelKernel k;
    k.kernel_ = std::move(kernel);
    k.params_ = params;
    return k;
  }
  static const Kernel& Inner(const MultiLevelKernel& k) { return k.kernel_; }
};

}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_KERNEL_ACCESS_H_
