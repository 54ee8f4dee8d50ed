// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Per-RoI geometry of docs/semantics.md, shared by the reference, the SIMD kernels and validation so that every
// implementation computes bit-identical sample positions and tap weights.
#ifndef ROIALIGN_KERNELS_ROI_GEOMETRY_H_
#define ROIALIGN_KERNELS_ROI_GEOMETRY_H_

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/enums.h"
#include "roialign/roialign.hpp"

namespace roialign {
namespace internal {

// Every function here is a template on R, the precision a call computes its geometry in: float for the f32 and
// 16-bit dtypes, double for F64 (docs/semantics.md#float64). The float forms keep their names (AxisGeometry, ...).

// Where a RoI's bins start and how they are sampled along one axis.
template <typename R>
struct AxisGeometryOf {
  R start = 0;        // first edge on the feature map
  R bin = 0;          // bin size (may be negative for inverted boxes with a fixed grid)
  R roi = 0;          // roi size after the LEGACY clamp
  int64_t grid = 0;   // samples per bin along this axis (0: empty grid)
};
using AxisGeometry = AxisGeometryOf<float>;

// (a, b, clamp) of the coordinate mode: a and b are 0 or +-0.5, exact in either precision.
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

// The spatial scale in precision R: F64 calls read the double one (0 there means spatial_scale).
template <typename R>
inline R ScaleOf(const Params& p) {
  if constexpr (std::is_same_v<R, double>) {
    return p.spatial_scale_f64 != 0.0 ? p.spatial_scale_f64 : p.spatial_scale;
  } else {
    return p.spatial_scale;
  }
}

// Grid size for a RoI extent; returns -1 when a non-finite or huge extent would exceed any cap (the caller
// refuses it). `sampling_ratio` > 0 is the fixed grid.
template <typename R>
inline int64_t GridSize(R roi, int64_t pooled, int32_t sampling_ratio) {
  if (sampling_ratio > 0) return sampling_ratio;
  const R g = std::ceil(roi / static_cast<R>(pooled));
  if (!(g <= R(1e9))) return -1;  // also catches NaN
  return g > R(0) ? static_cast<int64_t>(g) : 0;
}

// Geometry along one axis for coordinates (c1, c2) of a RoI.
template <typename R>
inline AxisGeometryOf<R> AxisOf(R c1, R c2, int64_t pooled, const Params& p) {
  const CoordinateTransform t = TransformOf(p.coordinate_mode);
  const R scale = ScaleOf<R>(p), offset = t.offset, shift = t.shift;
  AxisGeometryOf<R> g;
  g.start = (c1 + offset) * scale + shift;
  const R end = (c2 + offset) * scale + shift;
  g.roi = end - g.start;
  if (t.clamp) g.roi = std::fmax(g.roi, R(1));
  g.bin = g.roi / static_cast<R>(pooled);
  g.grid = GridSize(g.roi, pooled, p.sampling_ratio);
  return g;
}

// A rotated RoI's frame (docs/semantics.md#rotated-rois): its centre on the map and its angle's cosine and sine. An
// axis-aligned RoI has none (the identity).
template <typename R>
struct RotationOf {
  R centre_y = 0, centre_x = 0, cos = 1, sin = 0;
};

// One RoI's batch index and the geometry of both axes: computed once per call, by validation, which must check
// them anyway; the planner and the kernels read this result. A rotated RoI's axes are its own (y along h, x along w,
// from -h'/2 and -w'/2), and `rotation` turns and moves each sample onto the map.
template <typename R>
struct RoiAxesOf {
  int64_t batch = 0;
  AxisGeometryOf<R> gy, gx;
  RotationOf<R> rotation;
};
using RoiAxes = RoiAxesOf<float>;

// Sample position i (0 <= i < grid) of bin b along an axis.
template <typename R>
inline R SamplePosition(const AxisGeometryOf<R>& g, int64_t b, int64_t i) {
  return g.start + static_cast<R>(b) * g.bin + (static_cast<R>(i) + R(0.5)) * g.bin / static_cast<R>(g.grid);
}

// Sample (iy, ix) of bin (ph, pw) of a rotated RoI, on the map: the point in the box's frame, turned by the angle
// and moved to the centre, in the order docs/semantics.md writes it (each product and sum rounded on its own).
template <typename R>
struct MapPointOf {
  R y, x;
};
// A position along one of the box's axes times the angle's cosine and sine: taken once per sample row (yy) or
// column (xx) where many samples share it.
template <typename R>
struct TurnedOf {
  R cos, sin;
};
template <typename R>
inline TurnedOf<R> Turned(R position, const RotationOf<R>& t) {
  return {position * t.cos, position * t.sin};
}
// The map point of the sample at yy, xx: (yy cos - xx sin + centre_y, yy sin + xx cos + centre_x).
template <typename R>
inline MapPointOf<R> RotatedPoint(const TurnedOf<R>& yy, const TurnedOf<R>& xx, const RotationOf<R>& t) {
  return {yy.cos - xx.sin + t.centre_y, yy.sin + xx.cos + t.centre_x};
}
template <typename R>
inline MapPointOf<R> RotatedSample(const RoiAxesOf<R>& a, int64_t ph, int64_t pw, int64_t iy, int64_t ix) {
  const RotationOf<R>& t = a.rotation;
  return RotatedPoint(Turned(SamplePosition(a.gy, ph, iy), t), Turned(SamplePosition(a.gx, pw, ix), t), t);
}

// A rotated RoI's row (cx, cy, w, h, angle), its batch index given, as geometry: the centre scaled and moved by the
// coordinate mode (HALF_PIXEL: -0.5, aligned; LEGACY: not, and w and h at least 1), the bins along the box's own
// axes, and the angle as a cosine and sine. The angle in DEGREES becomes radians in double, rounded once to R.
// Validation refuses what is not finite and a negative size (HALF_PIXEL) before kernels read the result.
template <typename R>
inline RoiAxesOf<R> RotatedAxesOf(const R* box, int64_t batch, int64_t pooled_h, int64_t pooled_w, const Params& p) {
  const R scale = ScaleOf<R>(p);
  const bool aligned = p.coordinate_mode == CoordinateMode::kHalfPixel;
  const R offset = aligned ? R(0.5) : R(0);
  R w = box[2] * scale, h = box[3] * scale;
  if (!aligned) {
    w = std::fmax(w, R(1));
    h = std::fmax(h, R(1));
  }
  R theta = p.angle_unit == AngleUnit::kDegrees ? static_cast<R>(static_cast<double>(box[4]) * M_PI / 180.0) : box[4];
  if (p.rotation == Rotation::kClockwise) theta = -theta;
  RoiAxesOf<R> a;
  a.batch = batch;
  a.gy = {-h / R(2), h / static_cast<R>(pooled_h), h, GridSize(h, pooled_h, p.sampling_ratio)};
  a.gx = {-w / R(2), w / static_cast<R>(pooled_w), w, GridSize(w, pooled_w, p.sampling_ratio)};
  a.rotation = {box[1] * scale - offset, box[0] * scale - offset, std::cos(theta), std::sin(theta)};
  return a;
}

// The two taps of a sample along one axis: indices lo <= hi and weights (1 - l, l).
template <typename R>
struct AxisTapOf {
  int64_t lo = 0, hi = 0;
  R w_lo = 0, w_hi = 0;
  bool valid = false;  // false: the sample lies outside [-1, size] and contributes 0
};
using AxisTap = AxisTapOf<float>;

// Bilinear taps along one axis of extent `size` >= 1 at position `pos`.
template <typename R>
inline AxisTapOf<R> TapOf(R pos, int64_t size) {
  AxisTapOf<R> t;
  if (!(pos >= R(-1) && pos <= static_cast<R>(size))) return t;
  t.valid = true;
  if (pos < R(0)) pos = 0;
  int64_t lo = static_cast<int64_t>(pos);  // pos >= 0: truncation is floor
  int64_t hi;
  if (lo >= size - 1) {
    lo = hi = size - 1;
    pos = static_cast<R>(lo);
  } else {
    hi = lo + 1;
  }
  const R l = pos - static_cast<R>(lo);
  t.lo = lo;
  t.hi = hi;
  t.w_hi = l;
  t.w_lo = R(1) - l;
  return t;
}

// The taps along y and x of sample (iy, ix) of bin (ph, pw) of a rotated RoI, on a height x width map.
template <typename R>
inline void RotatedSampleTaps(const RoiAxesOf<R>& a, int64_t ph, int64_t pw, int64_t iy, int64_t ix, int64_t height,
                              int64_t width, AxisTapOf<R>* ty, AxisTapOf<R>* tx) {
  const MapPointOf<R> at = RotatedSample(a, ph, pw, iy, ix);
  *ty = TapOf(at.y, height);
  *tx = TapOf(at.x, width);
}

// One sample's taps along y and x as the call's table of rotated samples holds them (Problem::rotated_taps):
// AxisTapOf's indices, in 32 bits, and weights; y_lo < 0 marks a sample outside the map (it reads no pixel).
template <typename R>
struct RotatedSampleOf {
  int32_t y_lo = -1, y_hi = -1, x_lo = -1, x_hi = -1;
  R wy_lo = 0, wy_hi = 0, wx_lo = 0, wx_hi = 0;
};

// The map rows [first, last] that a set of samples' taps reach (first > last: none).
struct RowExtent {
  int32_t first = INT32_MAX, last = -1;
  void Add(int32_t lo, int32_t hi) {
    first = std::min(first, lo);
    last = std::max(last, hi);
  }
  bool Meets(int64_t begin, int64_t end) const { return first < end && last >= begin; }
};

// Every sample of a rotated RoI, bin-major ((ph, pw), then (iy, ix)), into out[0, ph * pw * grid_h * grid_w), and the
// rows their taps reach: of the RoI, extents[0]; of bin row ph, extents[1 + ph]; of bin (ph, pw), extents[1 +
// pooled_h + ph * pooled_w + pw]. Each map point is RotatedSample's, rounded as it rounds them; its products are
// taken once: a sample row's once per row, a sample column's once per RoI where the RoI's columns fit on the stack
// (the fill is serial work before a call's tasks).
template <typename R>
inline void FillRotatedSampleTaps(const RoiAxesOf<R>& a, int64_t pooled_h, int64_t pooled_w, int64_t height,
                                  int64_t width, RotatedSampleOf<R>* out, RowExtent* extents) {
  std::fill(extents, extents + 1 + pooled_h + pooled_h * pooled_w, RowExtent());
  const RotationOf<R>& t = a.rotation;
  const int64_t grid_h = a.gy.grid, grid_w = a.gx.grid, columns = pooled_w * grid_w;
  constexpr int64_t kStackColumns = 256;
  TurnedOf<R> stacked_columns[kStackColumns];
  const bool stacked = columns <= kStackColumns;
  for (int64_t c = 0; stacked && c < columns; ++c) {
    stacked_columns[c] = Turned(SamplePosition(a.gx, c / grid_w, c % grid_w), t);
  }
  for (int64_t ph = 0; ph < pooled_h; ++ph) {
    RowExtent* const bins = extents + 1 + pooled_h + ph * pooled_w;
    for (int64_t iy = 0; iy < grid_h; ++iy) {
      const TurnedOf<R> yy = Turned(SamplePosition(a.gy, ph, iy), t);
      for (int64_t pw = 0; pw < pooled_w; ++pw) {
        RotatedSampleOf<R>* const row = out + ((ph * pooled_w + pw) * grid_h + iy) * grid_w;
        for (int64_t ix = 0; ix < grid_w; ++ix) {
          const TurnedOf<R> xx =
              stacked ? stacked_columns[pw * grid_w + ix] : Turned(SamplePosition(a.gx, pw, ix), t);
          const MapPointOf<R> at = RotatedPoint(yy, xx, t);
          const AxisTapOf<R> y = TapOf(at.y, height), x = TapOf(at.x, width);
          if (!y.valid || !x.valid) {
            row[ix] = RotatedSampleOf<R>();
            continue;
          }
          row[ix] = {static_cast<int32_t>(y.lo), static_cast<int32_t>(y.hi), static_cast<int32_t>(x.lo),
                     static_cast<int32_t>(x.hi), y.w_lo, y.w_hi, x.w_lo, x.w_hi};
          bins[pw].Add(row[ix].y_lo, row[ix].y_hi);
        }
      }
    }
    for (int64_t pw = 0; pw < pooled_w; ++pw) extents[1 + ph].Add(bins[pw].first, bins[pw].last);
    extents[0].Add(extents[1 + ph].first, extents[1 + ph].last);
  }
}

// A table's sample as the taps along each axis; both invalid when the sample lies outside the map.
template <typename R>
inline void AxisTapsOf(const RotatedSampleOf<R>& s, AxisTapOf<R>* y, AxisTapOf<R>* x) {
  const bool valid = s.y_lo >= 0;
  *y = {s.y_lo, s.y_hi, s.wy_lo, s.wy_hi, valid};
  *x = {s.x_lo, s.x_hi, s.wx_lo, s.wx_hi, valid};
}

// Fills taps[b * grid + i] for every sample of an axis of `size` pixels.
template <typename R>
inline void FillAxisTaps(const AxisGeometryOf<R>& g, int64_t pooled, int64_t size, AxisTapOf<R>* taps) {
  for (int64_t b = 0; b < pooled; ++b) {
    for (int64_t i = 0; i < g.grid; ++i) taps[b * g.grid + i] = TapOf(SamplePosition(g, b, i), size);
  }
}

// The batch index of RoI k and its values after the batch column (already validated): x1, y1, x2, y2, or a rotated
// RoI's cx, cy, w, h, angle.
template <typename R>
struct RoiRowOf {
  int64_t batch;
  const R* values;
};
template <typename R>
inline RoiRowOf<R> RoiRowAt(const R* rois, const int64_t* batch_indices, RoiKind kind, int64_t k) {
  const int64_t columns = RoiColumns(kind, batch_indices != nullptr);
  const R* const row = rois + columns * k;
  if (batch_indices != nullptr) return {batch_indices[k], row};
  return {static_cast<int64_t>(row[0]), row + 1};
}

// The four coordinates (x1, y1, x2, y2) of RoI k and its batch index (already validated).
template <typename R>
struct RoiRecordOf {
  int64_t batch;
  R x1, y1, x2, y2;
};
using RoiRecord = RoiRecordOf<float>;
template <typename R>
inline RoiRecordOf<R> RoiAt(const R* rois, const int64_t* batch_indices, int64_t k) {
  if (batch_indices != nullptr) {
    const R* r = rois + 4 * k;
    return {batch_indices[k], r[0], r[1], r[2], r[3]};
  }
  const R* r = rois + 5 * k;
  return {static_cast<int64_t>(r[0]), r[1], r[2], r[3], r[4]};
}

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_KERNELS_ROI_GEOMETRY_H_
