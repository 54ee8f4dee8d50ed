// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// What the scalar reference's forward (roi_align_reference.cc) and backward (roi_align_backward_reference.cc)
// share: one bilinear rule and one pooled bin, so that the backward's argmax is the very sample or tap the
// forward's maximum came from, bit for bit. The rule stays local to the oracle: it shares the sample positions
// (roi_geometry.h) with the kernels it checks, not their taps.
#ifndef ROIALIGN_KERNELS_ROI_ALIGN_REFERENCE_H_
#define ROIALIGN_KERNELS_ROI_ALIGN_REFERENCE_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "core/enums.h"
#include "kernels/half_float.h"
#include "kernels/kernel_descriptor.h"
#include "kernels/problem.h"
#include "kernels/roi_geometry.h"

namespace roialign {
namespace internal {

// The four taps of one bilinear sample, in the order (y0,x0) (y0,x1) (y1,x0) (y1,x1): map row, column, weight.
template <typename R>
struct BilinearTaps {
  int64_t y[4], x[4];
  R w[4];
};

// The taps of the sample at (y, x) on an H x W map (docs/semantics.md, "Bilinear sample"). Returns false when
// the sample lies outside [-1, H] x [-1, W]: it is then 0 and has no taps.
template <typename R>
inline bool TapsOfSample(int64_t H, int64_t W, R y, R x, BilinearTaps<R>* taps) {
  if (!(y >= R(-1) && y <= static_cast<R>(H) && x >= R(-1) && x <= static_cast<R>(W))) return false;
  // The pixels on either side of `pos` along an axis of `size` pixels; beyond the last, pos moves onto it.
  auto neighbours = [](R& pos, int64_t size, int64_t* lo, int64_t* hi) {
    pos = std::max(pos, R(0));
    *lo = static_cast<int64_t>(std::floor(pos));
    if (*lo >= size - 1) {
      *lo = *hi = size - 1;
      pos = static_cast<R>(*lo);
    } else {
      *hi = *lo + 1;
    }
  };
  int64_t y0, y1, x0, x1;
  neighbours(y, H, &y0, &y1);
  neighbours(x, W, &x0, &x1);
  const R ly = y - static_cast<R>(y0), lx = x - static_cast<R>(x0);
  const R hy = R(1) - ly, hx = R(1) - lx;
  *taps = {{y0, y0, y1, y1}, {x0, x1, x0, x1}, {hy * hx, hy * lx, ly * hx, ly * lx}};
  return true;
}

// One RoI's sampling as the oracle computes it, from the RoI's own row rather than validation's geometry (so that a
// fault there cannot hide in both): its batch index, grid, and where each sample lies on the map.
template <typename R>
struct RoiSamplingOf {
  RoiAxesOf<R> axes;
  bool rotated = false;
  // Sample (iy, ix) of bin (ph, pw): separable for an axis-aligned RoI, turned for a rotated one.
  MapPointOf<R> Point(int64_t ph, int64_t pw, int64_t iy, int64_t ix) const {
    if (rotated) return RotatedSample(axes, ph, pw, iy, ix);
    return {SamplePosition(axes.gy, ph, iy), SamplePosition(axes.gx, pw, ix)};
  }
};
template <typename R>
RoiSamplingOf<R> ReferenceSampling(const Problem& p, int64_t k) {
  const int64_t PH = p.params.pooled_height, PW = p.params.pooled_width;
  const RoiRowOf<R> row = RoiRowAt(RoisOf<R>(p), p.batch_indices, p.params.roi_kind, k);
  if (p.params.roi_kind == RoiKind::kRotated) return {RotatedAxesOf(row.values, row.batch, PH, PW, p.params), true};
  const R* const v = row.values;  // x1, y1, x2, y2
  return {{row.batch, AxisOf(v[1], v[3], PH, p.params), AxisOf(v[0], v[2], PW, p.params), {}}, false};
}

// One bin of one channel, pooled as the forward defines it, and where its maximum came from.
template <typename R>
struct PooledBinOf {
  R sum = 0;                 // the samples' values added in (iy, ix) order, from +0
  R max = -INFINITY;         // MAX, MAX_ONNX: the running maximum, which a NaN never replaces
  int64_t arg_sample = -1;   // iy * grid_w + ix of the first sample (MAX) or of the first tap's sample (MAX_ONNX)
                             // attaining `max`; -1: none (AVG, an empty grid, or every value NaN)
  int arg_tap = -1;          // MAX_ONNX: that tap, 0..3 in the order of SampleTaps
};

// Pools bin (ph, pw) of channel c of image b for the problem's pool mode. The maximum keeps the running value
// unless a later one is larger, as std::max(running, value) does: so the first value attaining it is its
// argmax, a NaN is skipped, and on a bin of -Inf values the first of them attains the initial -Inf. Computed in
// the element type's precision R (ComputeOf<T>).
template <typename T, typename R = ComputeOf<T>>
PooledBinOf<R> PoolBinOf(const Problem& p, const MapStrides& map, int64_t c, const RoiSamplingOf<R>& roi, int64_t ph,
                         int64_t pw) {
  const int64_t b = roi.axes.batch;
  const AxisGeometryOf<R>& gy = roi.axes.gy;
  const AxisGeometryOf<R>& gx = roi.axes.gx;
  const PoolMode mode = p.params.pool_mode;
  const T* const input = static_cast<const T*>(p.input);
  PooledBinOf<R> bin;
  auto consider = [&bin](R value, int64_t sample, int tap) {
    if (bin.max < value || (bin.arg_sample < 0 && value == bin.max)) {
      bin.max = value;
      bin.arg_sample = sample;
      bin.arg_tap = tap;
    }
  };
  for (int64_t iy = 0; iy < gy.grid; ++iy) {
    for (int64_t ix = 0; ix < gx.grid; ++ix) {
      const MapPointOf<R> at = roi.Point(ph, pw, iy, ix);
      R t[4] = {0, 0, 0, 0};  // outside: four taps of value 0
      BilinearTaps<R> taps;
      if (TapsOfSample(p.height, p.width, at.y, at.x, &taps)) {
        for (int i = 0; i < 4; ++i) t[i] = taps.w[i] * Widen(input[map.Offset(b, c, taps.y[i], taps.x[i])]);
      }
      const R value = t[0] + t[1] + t[2] + t[3];
      bin.sum += value;
      const int64_t sample = iy * gx.grid + ix;
      if (mode == PoolMode::kMax) consider(value, sample, -1);
      if (mode == PoolMode::kMaxOnnx) {
        for (int i = 0; i < 4; ++i) consider(t[i], sample, i);
      }
    }
  }
  return bin;
}

// The backward reference for every DType, indexed by DType (roi_align_backward_reference.cc).
std::array<WholeRoisBackwardFn, EnumTraits<DType>::kNames.size()> BackwardReferenceFns();

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_KERNELS_ROI_ALIGN_REFERENCE_H_
