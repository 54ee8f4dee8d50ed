// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// One call's validated data, immutable for the whole call, and where a layout puts each element.
#ifndef ROIALIGN_KERNELS_PROBLEM_H_
#define ROIALIGN_KERNELS_PROBLEM_H_

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/enums.h"
#include "kernels/roi_geometry.h"
#include "roialign/roialign.hpp"

namespace roialign {
namespace internal {

// One call, validated (execution/validate_data.h). Input and output are in params.dtype and params.layout.
struct Problem {
  Params params;
  const void* input = nullptr;
  int64_t batch = 0, channels = 0, height = 0, width = 0;
  const float* rois = nullptr;             // null for F64, whose RoIs are rois_f64
  const int64_t* batch_indices = nullptr;  // null: rois are [K,5]
  int64_t num_rois = 0;
  const RoiAxes* axes = nullptr;  // per RoI index, from validation (null for F64: axes_f64)
  // F64 (docs/semantics.md#float64): the RoIs and their geometry in double.
  const double* rois_f64 = nullptr;
  const RoiAxesOf<double>* axes_f64 = nullptr;
  void* output = nullptr;
  // A backward call's gradients (null in a forward call): dY, read, in the output's shape, layout and dtype, and
  // dX, written, in the map's.
  const void* grad_output = nullptr;
  void* grad_input = nullptr;
  // Rotated RoIs' sample taps, computed once per call before its tasks run (execution/rotated_table.h): RoI k's
  // samples, bin-major, at rotated_taps + rotated_first[k], RotatedSampleOf<float> (<double> for F64), and the rows
  // they reach at rotated_extents + k * (1 + PH + PH * PW) (FillRotatedSampleTaps). Null: a kernel or driver finds
  // each sample's taps, and which bins reach its rows, itself.
  const int64_t* rotated_first = nullptr;
  const void* rotated_taps = nullptr;
  const RowExtent* rotated_extents = nullptr;
  int64_t max_grid_h = 0, max_grid_w = 0;  // largest sampling grid of any RoI (sizes scratch)
  double footprint_pixels = 0;             // sum over RoIs of an upper bound on the pixels their taps read
  // The RoIs the call computes: null for all of [0, num_rois), else `subset_size` indices into rois and output
  // (a multi-level call runs each level's RoIs on that level's map, writing their outputs in place). The planner
  // reads it; kernels compute whichever RoI indices the plan hands them. max_grid_* and footprint_pixels then
  // cover the subset only.
  const int64_t* roi_subset = nullptr;
  int64_t subset_size = 0;
};

// How many RoIs the call computes, and the i-th of them.
inline int64_t RunCount(const Problem& p) { return p.roi_subset ? p.subset_size : p.num_rois; }
inline int64_t RunRoi(const Problem& p, int64_t i) { return p.roi_subset ? p.roi_subset[i] : i; }

// The RoIs and validation's geometry in precision R (double for F64, float otherwise).
template <typename R>
inline const R* RoisOf(const Problem& p) {
  if constexpr (std::is_same_v<R, double>) {
    return p.rois_f64;
  } else {
    return p.rois;
  }
}
template <typename R>
inline const RoiAxesOf<R>& AxesOf(const Problem& p, int64_t k) {
  if constexpr (std::is_same_v<R, double>) {
    return p.axes_f64[k];
  } else {
    return p.axes[k];
  }
}

// Elements of the output, padded lanes of a blocked layout included.
inline int64_t OutputElements(const Problem& p) {
  return p.num_rois * StoredChannels(p.params.layout, p.channels) * p.params.pooled_height * p.params.pooled_width;
}

// Where a layout puts element (b, c, y, x) of an [N, C, H, W] tensor: channels in blocks of `block` contiguous
// ones (1: planar, C: channels last), at b * image + (c / block) * planes + y * row + x * pixel + c % block.
// Maps and outputs ([K, C, PH, PW]) alike; the layout table (core/enums.h) is the one source.
struct MapStrides {
  int64_t block, image, planes, row, pixel;
  int64_t Offset(int64_t b, int64_t c, int64_t y, int64_t x) const {
    return b * image + c / block * planes + y * row + x * pixel + c % block;
  }
};
inline MapStrides StridesOf(Layout layout, int64_t channels, int64_t height, int64_t width) {
  const int64_t fixed = EnumTraits<Layout>::kChannelBlock[static_cast<size_t>(layout)];
  const int64_t block = fixed > 0 ? fixed : std::max<int64_t>(channels, 1);
  const int64_t planes = height * width * block;
  return {block, (channels + block - 1) / block * planes, planes, width * block, block};
}

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_KERNELS_PROBLEM_H_
