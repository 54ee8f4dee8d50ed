// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Merged taps for AVG pooling: a bin's average is separable, sum_samples sum_taps wy*wx*v = sum_r sum_c Wy[r] *
// Wx[c] * v(r, c), where Wy[r] sums the y weights all of the bin's samples give pixel row r (likewise Wx). Samples
// closer than a pixel share rows and columns, so a bin then reads each distinct pixel once instead of once per
// sample that touches it (adaptive grids: about (g+1)^2 loads instead of 4g^2).
#ifndef ROIALIGN_KERNELS_MERGED_TAPS_H_
#define ROIALIGN_KERNELS_MERGED_TAPS_H_

#include <algorithm>
#include <cstdint>

#include "kernels/roi_geometry.h"
#include "roialign/roialign.h"

namespace roialign {
namespace internal {

// One distinct pixel row (or column) of a bin: its offset in the data and its summed weight.
struct MergedTap {
  int64_t offset;
  float weight;
};

// Merges the valid taps[0, n) of one axis into out (room for 2n entries) and returns the entry count; pixel `index`
// is at offset (index - first) * stride. Taps of consecutive samples touching the same pixel are summed in sample
// order, so the weights depend only on the geometry (never on threads or channel blocks). Positions are monotonic
// in the sample index, so on the usual boxes each pixel appears once. A tap of weight 0 stays an entry of its own
// and nothing merges into it: the direct form multiplies it too, and 0 * Inf is NaN, which a summed weight would
// lose (weights are >= 0, so a sum of positive weights is never 0).
inline int64_t MergeTaps(const AxisTap* taps, int64_t n, int64_t stride, MergedTap* out, int64_t first = 0) {
  int64_t m = 0;
  auto add = [&](int64_t index, float weight) {
    const int64_t offset = (index - first) * stride;
    if (m > 0 && out[m - 1].offset == offset && weight != 0.0f && out[m - 1].weight != 0.0f) {
      out[m - 1].weight += weight;
    } else {
      out[m++] = {offset, weight};
    }
  };
  for (int64_t i = 0; i < n; ++i) {
    if (!taps[i].valid) continue;  // an outside sample contributes exactly 0
    add(taps[i].lo, taps[i].w_lo);
    add(taps[i].hi, taps[i].w_hi);
  }
  return m;
}

// One tap as the bin microkernel reads it: an element offset from the data's base and its weight (a merged tap
// with its stride applied is one). A MAX sample outside the map is four kOutsideTap entries, and counts as 0.
using PixelTap = MergedTap;
inline constexpr int64_t kOutsideTap = -1;

// One bin, or a piece of one, for the microkernel. AVG reads the distinct pixels taps[r] + cols[j] (offsets add,
// weights multiply), row-major as the reference sums them; MAX reads count / 4 samples of four taps each. A bin
// may be pooled in pieces with the same result as in one: `first` starts from nothing, else from the f32 partial
// state; `last` finishes into the output (a bin without samples is 0), else leaves the partial state.
struct BinTaps {
  const PixelTap* taps;
  int64_t count;
  const PixelTap* cols;  // AVG only
  int64_t nx;
  int64_t samples;  // of the whole bin: AVG divides by it
  bool first, last;
};

// The largest offset a bin reads: one bounds check per bin covers the loads of a partial vector.
inline int64_t MaxOffset(const BinTaps& b) {
  int64_t row = 0, col = 0;
  for (int64_t i = 0; i < b.count; ++i) row = std::max(row, b.taps[i].offset);
  for (int64_t j = 0; j < b.nx; ++j) col = std::max(col, b.cols[j].offset);
  return row + col;
}

// Room for one piece's MAX taps: a sample row (4 * grid_w) always fits.
inline constexpr int64_t kBinTaps = 4 * ROIALIGN_MAX_SAMPLING_GRID;

// A sample's four pixel taps from its valid taps along y and x, in the order (y0,x0) (y0,x1) (y1,x0) (y1,x1): the
// offsets with the strides applied (rows counted from first_row), the weights the axes' products.
inline void PixelTapsOf(const AxisTap& y, const AxisTap& x, int64_t row_stride, int64_t pixel_stride,
                        int64_t first_row, PixelTap* out) {
  const int64_t lo = (y.lo - first_row) * row_stride, hi = (y.hi - first_row) * row_stride;
  out[0] = {lo + x.lo * pixel_stride, y.w_lo * x.w_lo};
  out[1] = {lo + x.hi * pixel_stride, y.w_lo * x.w_hi};
  out[2] = {hi + x.lo * pixel_stride, y.w_hi * x.w_lo};
  out[3] = {hi + x.hi * pixel_stride, y.w_hi * x.w_hi};
}

// MAX: the four taps (lo/hi rows by lo/hi columns) of each sample of sample rows ty[i0, i1) by columns tx[0, gw),
// row r at offset (r - first_row) * row_stride.
inline int64_t SampleTapsOf(const AxisTap* ty, int64_t i0, int64_t i1, const AxisTap* tx, int64_t gw,
                            int64_t row_stride, int64_t pixel_stride, PixelTap* out, int64_t first_row = 0) {
  int64_t n = 0;
  for (int64_t iy = i0; iy < i1; ++iy) {
    for (int64_t ix = 0; ix < gw; ++ix, n += 4) {
      const AxisTap &y = ty[iy], &x = tx[ix];
      if (!y.valid || !x.valid) {
        std::fill(out + n, out + n + 4, PixelTap{kOutsideTap, 0.0f});
        continue;
      }
      PixelTapsOf(y, x, row_stride, pixel_stride, first_row, out + n);
    }
  }
  return n;
}

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_KERNELS_MERGED_TAPS_H_
