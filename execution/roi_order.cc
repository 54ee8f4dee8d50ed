// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "execution/roi_order.h"

#include <algorithm>
#include <cmath>
#include <utility>  // std::swap
#include <vector>

#include "kernels/roi_geometry.h"

namespace roialign {
namespace internal {

uint64_t HilbertIndex(int bits, uint32_t x, uint32_t y) {
  const uint32_t n = uint32_t{1} << bits;
  uint64_t d = 0;
  // From the coarsest quadrant down: add the quadrant's rank along the curve, then rotate (x, y) into the
  // quadrant's own frame so that the next level sees the curve's standard orientation.
  for (uint32_t s = n / 2; s > 0; s /= 2) {
    const uint32_t rx = (x & s) != 0 ? 1 : 0, ry = (y & s) != 0 ? 1 : 0;
    d += static_cast<uint64_t>(s) * s * ((3 * rx) ^ ry);
    if (ry == 0) {
      if (rx == 1) {
        x = n - 1 - x;
        y = n - 1 - y;
      }
      std::swap(x, y);
    }
  }
  return d;
}

std::pmr::vector<int64_t> LocalityOrder(const Problem& p, std::pmr::memory_resource* memory) {
  // 1024 cells per axis over the span of the centres: finer than any RoI that shares pixels with its neighbours.
  constexpr int kBits = 10;
  constexpr double kCells = 1 << kBits;
  const int64_t n = RunCount(p);
  // Each RoI's image and box centre, doubled (x1 + x2), in double: the sum of two finite floats may overflow float.
  struct Centre {
    int64_t batch;
    double x, y;
  };
  std::pmr::vector<Centre> centres(static_cast<size_t>(n), memory);
  double lo_x = HUGE_VAL, hi_x = -HUGE_VAL, lo_y = HUGE_VAL, hi_y = -HUGE_VAL;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = RunRoi(p, i);
    // F64 RoIs in double; the others in float, widened. A rotated RoI's row holds its centre (cx, cy, w, h, angle).
    const bool rotated = p.params.roi_kind == RoiKind::kRotated;
    auto centre = [&](const auto* rois) {
      const auto row = RoiRowAt(rois, p.batch_indices, p.params.roi_kind, k);
      const double x1 = row.values[0], y1 = row.values[1];
      return rotated ? Centre{row.batch, 2.0 * x1, 2.0 * y1}
                     : Centre{row.batch, x1 + static_cast<double>(row.values[2]), y1 + static_cast<double>(row.values[3])};
    };
    const Centre m = p.rois_f64 != nullptr ? centre(p.rois_f64) : centre(p.rois);
    const double cx = m.x, cy = m.y;
    centres[static_cast<size_t>(i)] = m;
    if (!std::isfinite(cx) || !std::isfinite(cy)) continue;  // validated away before a plan; cell 0 if not
    lo_x = std::min(lo_x, cx), hi_x = std::max(hi_x, cx);
    lo_y = std::min(lo_y, cy), hi_y = std::max(hi_y, cy);
  }
  auto cell = [&](double v, double lo, double hi) {
    if (!std::isfinite(v) || !(hi > lo)) return uint32_t{0};
    return static_cast<uint32_t>(std::min(kCells - 1, std::floor((v - lo) / (hi - lo) * kCells)));
  };
  // (image, position on the curve, position in the input): sorting them with the input position as the last key
  // keeps ties in input order as a stable sort would, without the buffer std::stable_sort allocates.
  struct Key {
    int64_t batch;
    uint64_t curve;
    int64_t i;
    bool operator<(const Key& o) const {
      return batch != o.batch ? batch < o.batch : curve != o.curve ? curve < o.curve : i < o.i;
    }
  };
  std::pmr::vector<Key> keys(static_cast<size_t>(n), memory);
  std::pmr::vector<int64_t> order(static_cast<size_t>(n), memory);
  for (int64_t i = 0; i < n; ++i) {
    const Centre& m = centres[static_cast<size_t>(i)];
    keys[static_cast<size_t>(i)] = {m.batch, HilbertIndex(kBits, cell(m.x, lo_x, hi_x), cell(m.y, lo_y, hi_y)), i};
  }
  std::sort(keys.begin(), keys.end());
  for (int64_t i = 0; i < n; ++i) {  // positions in the subset -> RoI indices
    order[static_cast<size_t>(i)] = RunRoi(p, keys[static_cast<size_t>(i)].i);
  }
  return order;
}

}  // namespace internal
}  // namespace roialign
