// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "bench/backward_dy.h"

#include <iterator>

#include "kernels/half_float.h"

namespace roialign {
namespace bench {

BackwardDy::BackwardDy(const AlignedVector<float>& values, int64_t num_rois, int64_t channels, int64_t pooled)
    : K_(num_rois), C_(channels), P_(pooled), nchw_(static_cast<size_t>(num_rois * channels * pooled * pooled)) {
  for (size_t i = 0; i < nchw_.size(); ++i) nchw_[i] = values[i % values.size()];
}

const void* BackwardDy::Get(Layout layout, DType dtype) {
  const AlignedBuffer& f32 = F32(layout);
  if (dtype == DType::kF32) return f32.data();
  if (dtype == DType::kF64) {  // widened
    AlignedVector<double>& wide = f64_[layout];
    if (wide.empty()) wide.assign(f32.begin(), f32.end());
    return wide.data();
  }
  AlignedVector<uint16_t>& half = half_[{layout, dtype}];
  if (half.empty()) {
    half.resize(f32.size());
    for (size_t i = 0; i < f32.size(); ++i) {
      half[i] = dtype == DType::kF16 ? internal::F16BitsFromF32(f32[i]) : internal::BF16BitsFromF32(f32[i]);
    }
  }
  return half.data();
}

const AlignedBuffer& BackwardDy::F32(Layout layout) {
  if (layout == Layout::kNCHW) return nchw_;
  AlignedBuffer& b = f32_[layout];
  if (b.empty()) b = FromNchw(nchw_.data(), K_, C_, P_, P_, layout);
  return b;
}

std::vector<Layout> BackwardLayouts(DType dtype) {
  std::vector<Layout> layouts = {Layout::kNCHW, Layout::kNHWC};
  if (dtype == DType::kF32) layouts.insert(layouts.end(), std::begin(kBlockedLayouts), std::end(kBlockedLayouts));
  return layouts;
}

}  // namespace bench
}  // namespace roialign
