// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The scalar reference's backward (docs/semantics.md#backward): the oracle every backward kernel is tested
// against. It computes one owned range of dX (GradientRange) from nothing but the problem, adding every
// contribution to an element in the documented order, so any split of dX into ranges gives the bits of the whole.
// Every layout, pool mode and dtype; written for clarity, not speed.
#include <algorithm>
#include <cassert>
#include <cstdint>
#include <type_traits>

#include "core/enums.h"
#include "kernels/half_float.h"
#include "kernels/kernel_descriptor.h"
#include "kernels/problem.h"
#include "kernels/roi_align_reference.h"
#include "kernels/roi_geometry.h"

namespace roialign {
namespace internal {
namespace {

// dX is accumulated a tile at a time, in memory of a fixed size on the stack, so that the reference allocates
// nothing and a 16-bit dX is still rounded once: each tile is one channel's rows [y_begin, y_end) by columns
// [x_begin, x_end), and walks every RoI for its own elements only. That is the ownership scheme of
// GradientRange applied once more, inside the range.
constexpr int64_t kTileElements = 4096;

template <typename Acc>
struct Tile {
  int64_t c, y_begin, y_end, x_begin, x_end;
  Acc* acc;  // row-major, (y_end - y_begin) x (x_end - x_begin)
  // Adds a contribution at map pixel (y, x) if the tile owns it.
  void Add(int64_t y, int64_t x, Acc v) const {
    if (y >= y_begin && y < y_end && x >= x_begin && x < x_end) acc[Index(y, x)] += v;
  }
  // Where pixel (y, x) of the tile is in `acc`.
  int64_t Index(int64_t y, int64_t x) const { return (y - y_begin) * (x_end - x_begin) + x - x_begin; }
};

// Whether any tap of a RoI's samples along one axis can land in [begin, end), so that a tile skips the RoIs that
// cannot reach it. Sample positions are monotone in (bin, sample), rounding included, so the extremes are the
// first sample of the first bin and the last of the last; a tap lies on the floor of its sample's position clamped
// to the map, or one pixel past it. A superset: no contributing RoI is skipped.
template <typename R>
bool AxisReaches(const AxisGeometryOf<R>& g, int64_t pooled, int64_t size, int64_t begin, int64_t end) {
  const R a = SamplePosition(g, 0, 0), b = SamplePosition(g, pooled - 1, g.grid - 1);
  const R top = static_cast<R>(size - 1);
  // Clamped before the conversion: a position may be far outside the map (or, for an inverted box, b < a).
  const int64_t lo = static_cast<int64_t>(std::floor(std::clamp(std::min(a, b), R(0), top)));
  const int64_t hi = std::min(static_cast<int64_t>(std::floor(std::clamp(std::max(a, b), R(0), top))) + 1, size - 1);
  return lo < end && hi >= begin;
}

// Adds to `tile` every contribution of the RoIs of image `image` to its elements, in the order of
// docs/semantics.md#backward: RoIs ascending, then ph, pw, iy, ix, then the taps in SampleTaps order.
template <typename T, typename Acc = ComputeOf<T>>
void AccumulateTile(const Problem& p, int64_t image, const Tile<Acc>& tile) {
  const int64_t H = p.height, W = p.width, C = p.channels;
  const int64_t PH = p.params.pooled_height, PW = p.params.pooled_width;
  const PoolMode mode = p.params.pool_mode;
  const MapStrides map = StridesOf(p.params.layout, C, H, W);
  const MapStrides grad = StridesOf(p.params.layout, C, PH, PW);
  const T* const dy = static_cast<const T*>(p.grad_output);
  const int64_t c = tile.c;
  for (int64_t i = 0; i < RunCount(p); ++i) {
    const int64_t k = RunRoi(p, i);
    assert(i == 0 || RunRoi(p, i - 1) < k);  // the order of the sum is the order of the RoI indices
    const RoiSamplingOf<Acc> roi = ReferenceSampling<Acc>(p, k);
    if (roi.axes.batch != image) continue;
    const AxisGeometryOf<Acc>& gy = roi.axes.gy;
    const AxisGeometryOf<Acc>& gx = roi.axes.gx;
    if (gy.grid * gx.grid == 0) continue;  // no samples: the bins are constant 0, nothing flows back
    // Axis-aligned RoIs out of the tile's reach are skipped; a rotated one is walked whole.
    if (!roi.rotated &&
        (!AxisReaches(gy, PH, H, tile.y_begin, tile.y_end) || !AxisReaches(gx, PW, W, tile.x_begin, tile.x_end))) {
      continue;
    }
    const Acc count = static_cast<Acc>(gy.grid * gx.grid);
    for (int64_t ph = 0; ph < PH; ++ph) {
      for (int64_t pw = 0; pw < PW; ++pw) {
        const Acc g = Widen(dy[grad.Offset(k, c, ph, pw)]);
        BilinearTaps<Acc> taps;
        switch (mode) {
          case PoolMode::kAvg: {
            // The forward divides the bin's sum by the count; its transpose scales dY once per bin.
            const Acc d = g / count;
            for (int64_t iy = 0; iy < gy.grid; ++iy) {
              for (int64_t ix = 0; ix < gx.grid; ++ix) {
                const MapPointOf<Acc> at = roi.Point(ph, pw, iy, ix);
                if (!TapsOfSample(H, W, at.y, at.x, &taps)) continue;  // outside: no pixels
                for (int t = 0; t < 4; ++t) tile.Add(taps.y[t], taps.x[t], static_cast<Acc>(taps.w[t]) * d);
              }
            }
            break;
          }
          case PoolMode::kMax:
          case PoolMode::kMaxOnnx: {
            const PooledBinOf<Acc> bin = PoolBinOf<T>(p, map, c, roi, ph, pw);
            if (bin.arg_sample < 0) break;  // every value NaN: no sample attains the maximum
            const MapPointOf<Acc> at = roi.Point(ph, pw, bin.arg_sample / gx.grid, bin.arg_sample % gx.grid);
            // An argmax outside the map was a sample (or tap) of value 0 that reads no pixel.
            if (!TapsOfSample(H, W, at.y, at.x, &taps)) break;
            for (int t = 0; t < 4; ++t) {
              if (mode == PoolMode::kMax || t == bin.arg_tap) {
                tile.Add(taps.y[t], taps.x[t], static_cast<Acc>(taps.w[t]) * g);
              }
            }
            break;
          }
        }
      }
    }
  }
}

template <typename T>
void RoiAlignBackwardReference(const Problem& p, const GradientRange& r, const BackwardScratch&) {
  using Acc = ComputeOf<T>;
  const int64_t W = p.width, C = p.channels;
  assert(0 <= r.c_begin && r.c_begin <= r.c_end && r.c_end <= C && 0 <= r.y_begin && r.y_begin <= r.y_end &&
         r.y_end <= p.height && 0 <= r.image && r.image < p.batch);
  const MapStrides map = StridesOf(p.params.layout, C, p.height, W);
  T* const dx = static_cast<T*>(p.grad_input);
  const int64_t tile_w = std::max<int64_t>(std::min(W, kTileElements), 1);
  const int64_t tile_h = kTileElements / tile_w;
  Acc acc[kTileElements];
  for (int64_t c = r.c_begin; c < r.c_end; ++c) {
    for (int64_t y0 = r.y_begin; y0 < r.y_end; y0 += tile_h) {
      for (int64_t x0 = 0; x0 < W; x0 += tile_w) {
        const Tile<Acc> tile = {c, y0, std::min(y0 + tile_h, r.y_end), x0, std::min(x0 + tile_w, W), acc};
        std::fill_n(acc, kTileElements, Acc{0});  // +0: an element nothing reaches is +0
        AccumulateTile<T>(p, r.image, tile);
        for (int64_t y = tile.y_begin; y < tile.y_end; ++y) {
          for (int64_t x = tile.x_begin; x < tile.x_end; ++x) {
            Narrow(acc[tile.Index(y, x)], dx + map.Offset(r.image, c, y, x));
          }
        }
      }
    }
  }
  // The padded lanes of a blocked layout's last block belong to the range holding the last channel (so an empty
  // range writes nothing); +0, as the forward writes its output's.
  if (r.c_begin < r.c_end && r.c_end == C) {
    for (int64_t c = C; c < StoredChannels(p.params.layout, C); ++c) {
      for (int64_t y = r.y_begin; y < r.y_end; ++y) {
        for (int64_t x = 0; x < W; ++x) Narrow(Acc{0}, dx + map.Offset(r.image, c, y, x));
      }
    }
  }
}

}  // namespace

std::array<WholeRoisBackwardFn, EnumTraits<DType>::kNames.size()> BackwardReferenceFns() {
  return PerDTypeTable<WholeRoisBackwardFn>(
      [](auto* type) { return &RoiAlignBackwardReference<std::remove_pointer_t<decltype(type)>>; });
}

}  // namespace internal
}  // namespace roialign
