// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Per-RoI geometry of docs/semantics.md, shared by the reference, the SIMD kernels and validation so that every
// implementation computes bit-identical sample positions and tap weights.
#ifndef ROIALIGN_KERNELS_ROI_GEOMETRY_H_
#define ROIALIGN_KERNELS_ROI_GEOMETRY_H_

#include <cmath>
#include <cstdint>

#include "core/library.h"

namespace roialign {
namespace internal {

// Where a RoI's bins start and how they are sampled along one axis.
struct AxisGeometry {
  float start = 0.0f;   // first edge on the feature map
  float bin = 0.0f;     // bin size (may be negative for inverted boxes with a fixed grid)
  float roi = 0.0f;     // roi size after the LEGACY clamp
  int64_t grid = 0;     // samples per bin along this axis (0: empty grid)
};

// (a, b, clamp) of the coordinate mode.
struct CoordinateTransform {
  float offset;  // a: added to the input coordinate before scaling
  float shift;   // b: added after scaling
  bool clamp;    // LEGACY: roi size at least 1
};

inline CoordinateTransform TransformOf(CoordinateMode mode) {
  switch (mode) {
    case CoordinateMode::kLegacy:
      return {0.0f, 0.0f, true};
    case CoordinateMode::kHalfPixel:
      return {0.0f, -0.5f, false};
    case CoordinateMode::kHalfPixelCentered:
      return {0.5f, -0.5f, false};
    case CoordinateMode::kLegacyUnclamped:
      return {0.0f, 0.0f, false};
  }
  __builtin_unreachable();  // selection refuses values outside the enum
}

// Grid size for a RoI extent; returns -1 when a non-finite or huge extent would exceed any cap (the caller
// refuses it). `sampling_ratio` > 0 is the fixed grid.
inline int64_t GridSize(float roi, int64_t pooled, int32_t sampling_ratio) {
  if (sampling_ratio > 0) return sampling_ratio;
  const float g = std::ceil(roi / static_cast<float>(pooled));
  if (!(g <= 1e9f)) return -1;  // also catches NaN
  return g > 0.0f ? static_cast<int64_t>(g) : 0;
}

// Geometry along one axis for coordinates (c1, c2) of a RoI.
inline AxisGeometry AxisOf(float c1, float c2, int64_t pooled, const Params& p) {
  const CoordinateTransform t = TransformOf(p.coordinate_mode);
  AxisGeometry g;
  g.start = (c1 + t.offset) * p.spatial_scale + t.shift;
  const float end = (c2 + t.offset) * p.spatial_scale + t.shift;
  g.roi = end - g.start;
  if (t.clamp) g.roi = std::fmax(g.roi, 1.0f);
  g.bin = g.roi / static_cast<float>(pooled);
  g.grid = GridSize(g.roi, pooled, p.sampling_ratio);
  return g;
}

// One RoI's batch index and the geometry of both axes: computed once per call, by validation, which must check
// them anyway; the planner and the kernels read this result.
struct RoiAxes {
  int64_t batch = 0;
  AxisGeometry gy, gx;
};

// Sample position i (0 <= i < grid) of bin b along an axis.
inline float SamplePosition(const AxisGeometry& g, int64_t b, int64_t i) {
  return g.start + static_cast<float>(b) * g.bin +
         (static_cast<float>(i) + 0.5f) * g.bin / static_cast<float>(g.grid);
}

// The two taps of a sample along one axis: indices lo <= hi and weights (1 - l, l).
struct AxisTap {
  int64_t lo = 0, hi = 0;
  float w_lo = 0.0f, w_hi = 0.0f;
  bool valid = false;  // false: the sample lies outside [-1, size] and contributes 0
};

// Bilinear taps along one axis of extent `size` >= 1 at position `pos`.
inline AxisTap TapOf(float pos, int64_t size) {
  AxisTap t;
  if (!(pos >= -1.0f && pos <= static_cast<float>(size))) return t;
  t.valid = true;
  if (pos < 0.0f) pos = 0.0f;
  int64_t lo = static_cast<int64_t>(pos);  // pos >= 0: truncation is floor
  int64_t hi;
  if (lo >= size - 1) {
    lo = hi = size - 1;
    pos = static_cast<float>(lo);
  } else {
    hi = lo + 1;
  }
  const float l = pos - static_cast<float>(lo);
  t.lo = lo;
  t.hi = hi;
  t.w_hi = l;
  t.w_lo = 1.0f - l;
  return t;
}

// Fills taps[b * grid + i] for every sample of an axis of `size` pixels.
inline void FillAxisTaps(const AxisGeometry& g, int64_t pooled, int64_t size, AxisTap* taps) {
  for (int64_t b = 0; b < pooled; ++b) {
    for (int64_t i = 0; i < g.grid; ++i) taps[b * g.grid + i] = TapOf(SamplePosition(g, b, i), size);
  }
}

// The four coordinates (x1, y1, x2, y2) of RoI k and its batch index (already validated).
struct RoiRecord {
  int64_t batch;
  float x1, y1, x2, y2;
};
inline RoiRecord RoiAt(const float* rois, const int64_t* batch_indices, int64_t k) {
  if (batch_indices != nullptr) {
    const float* r = rois + 4 * k;
    return {batch_indices[k], r[0], r[1], r[2], r[3]};
  }
  const float* r = rois + 5 * k;
  return {static_cast<int64_t>(r[0]), r[1], r[2], r[3], r[4]};
}

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_KERNELS_ROI_GEOMETRY_H_
