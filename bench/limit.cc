// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "bench/limit.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/enums.h"

namespace roialign {
namespace bench {
namespace {

// Along one axis: the distinct pixel indices with a nonzero weight in some bin (the RoI's rows or columns), and
// the number of bins with at least one.
void AxisDependence(const internal::AxisGeometry& g, int64_t pooled, int64_t size, int64_t* pixels, int64_t* bins) {
  std::vector<internal::AxisTap> taps(static_cast<size_t>(pooled * g.grid));
  internal::FillAxisTaps(g, pooled, size, taps.data());
  std::vector<int64_t> all;
  *bins = 0;
  for (int64_t b = 0; b < pooled; ++b) {
    const size_t before = all.size();
    for (int64_t i = 0; i < g.grid; ++i) {
      const internal::AxisTap& t = taps[static_cast<size_t>(b * g.grid + i)];
      if (!t.valid) continue;  // an outside sample contributes a constant 0
      if (t.w_lo != 0.0f) all.push_back(t.lo);
      if (t.w_hi != 0.0f) all.push_back(t.hi);
    }
    *bins += all.size() > before ? 1 : 0;
  }
  std::sort(all.begin(), all.end());
  *pixels = std::unique(all.begin(), all.end()) - all.begin();
}

// The distinct valid tap pixels of each bin along one axis, ascending: bin b's are out[b].
std::vector<std::vector<int64_t>> BinPixels(const internal::AxisGeometry& g, int64_t pooled, int64_t size) {
  std::vector<internal::AxisTap> taps(static_cast<size_t>(pooled * g.grid));
  internal::FillAxisTaps(g, pooled, size, taps.data());
  std::vector<std::vector<int64_t>> out(static_cast<size_t>(pooled));
  for (int64_t b = 0; b < pooled; ++b) {
    std::vector<int64_t>& px = out[static_cast<size_t>(b)];
    for (int64_t i = 0; i < g.grid; ++i) {
      const internal::AxisTap& t = taps[static_cast<size_t>(b * g.grid + i)];
      if (!t.valid) continue;
      px.push_back(t.lo);
      px.push_back(t.hi);
    }
    std::sort(px.begin(), px.end());
    px.erase(std::unique(px.begin(), px.end()), px.end());
  }
  return out;
}

// Lines that pixels `cols` (ascending) of `pixel_bytes` each cover in a row whose pixel 0 starts at byte `row`.
int64_t RowLines(int64_t row, const std::vector<int64_t>& cols, int64_t pixel_bytes) {
  int64_t lines = 0, last = -1;
  for (int64_t x : cols) {
    const int64_t first = (row + x * pixel_bytes) / 64, end = (row + (x + 1) * pixel_bytes - 1) / 64;
    if (end > last) lines += end - std::max(first, last + 1) + 1;
    last = std::max(last, end);
  }
  return lines;
}

}  // namespace

double RoiBinLines(const internal::AxisGeometry& gy, const internal::AxisGeometry& gx, int64_t pooled, int64_t H,
                   int64_t W, int64_t C, Layout layout) {
  if (C <= 0) return 0.0;
  const int64_t b = internal::EnumTraits<Layout>::kChannelBlock[static_cast<size_t>(layout)];
  const int64_t block = b == 0 ? C : b;  // NHWC: one plane of whole pixels
  const int64_t planes = (C + block - 1) / block, pixel_bytes = block * 4;
  const std::vector<std::vector<int64_t>> rows = BinPixels(gy, pooled, H), cols = BinPixels(gx, pooled, W);
  double lines = 0;
  for (const std::vector<int64_t>& bin_rows : rows) {
    for (const std::vector<int64_t>& bin_cols : cols) {
      for (int64_t j = 0; j < planes; ++j) {
        for (int64_t y : bin_rows) {
          lines += static_cast<double>(RowLines((j * H + y) * W * pixel_bytes, bin_cols, pixel_bytes));
        }
      }
    }
  }
  return lines;
}

double BinPixelLines(const std::vector<int64_t>& pixels, int64_t H, int64_t W, int64_t C, Layout layout) {
  if (C <= 0) return 0.0;
  const int64_t b = internal::EnumTraits<Layout>::kChannelBlock[static_cast<size_t>(layout)];
  const int64_t block = b == 0 ? C : b;
  const int64_t planes = (C + block - 1) / block, pixel_bytes = block * 4;
  double lines = 0;
  std::vector<int64_t> cols;
  for (size_t i = 0; i < pixels.size();) {  // row by row: the pixels are ascending, so a row's are consecutive
    const int64_t y = pixels[i] / W;
    cols.clear();
    for (; i < pixels.size() && pixels[i] / W == y; ++i) cols.push_back(pixels[i] % W);
    for (int64_t j = 0; j < planes; ++j) {
      lines += static_cast<double>(RowLines((j * H + y) * W * pixel_bytes, cols, pixel_bytes));
    }
  }
  return lines;
}

double RoiOpsLowerBound(const internal::AxisGeometry& gy, const internal::AxisGeometry& gx, int64_t pooled, int64_t H,
                        int64_t W) {
  // A bin depends on pixel (r, c) iff r has a nonzero weight along y and c along x in that bin (every pair of a
  // valid y sample and a valid x sample is a sample), so the RoI's pixels and bins are products of the axes'.
  int64_t rows, bins_y, cols, bins_x;
  AxisDependence(gy, pooled, H, &rows, &bins_y);
  AxisDependence(gx, pooled, W, &cols, &bins_x);
  return static_cast<double>(std::max<int64_t>(0, rows * cols - bins_y * bins_x));
}

Peaks Best(const std::vector<Peaks>& measurements) {
  Peaks best = measurements.at(0);
  for (const Peaks& p : measurements) {
    best.gfma_per_s = std::max(best.gfma_per_s, p.gfma_per_s);
    best.gadd_per_s = std::max(best.gadd_per_s, p.gadd_per_s);
    best.move_seconds = std::min(best.move_seconds, p.move_seconds);
  }
  return best;
}

namespace {
Limit LimitOfOps(double ops_bound, const Peaks& peaks) {
  Limit l;
  l.compute_seconds = ops_bound / ((peaks.gfma_per_s + peaks.gadd_per_s) * 1e9);
  l.memory_seconds = peaks.move_seconds;
  l.seconds = std::max(l.compute_seconds, l.memory_seconds);
  return l;
}
}  // namespace

Limit LimitOf(const Accounting& w, const Peaks& peaks) { return LimitOfOps(w.ops_bound, peaks); }

Limit LimitOf(const BackwardAccounting& b, const Peaks& peaks) { return LimitOfOps(b.ops_bound, peaks); }

}  // namespace bench
}  // namespace roialign
