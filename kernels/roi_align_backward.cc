// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The SIMD backward of every layout (docs/semantics.md#backward), compiled once per Highway target. A task owns a
// range of dX (an image, channels, rows) and accumulates it in f32, channels-last in its scratch, vectorized over
// the channels: every RoI of the image in index order, then its bins, samples and taps in the documented order,
// so each element's sum is the scalar reference's, bit for bit. The range is then written to dX in its layout and
// dtype, each element rounded once. Built with -ffp-contract=off (CMakeLists.txt), as the reference is: every
// product and every sum is rounded on its own on every target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/roi_align_backward.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kernels/half_float.h"
#include "kernels/kernel_descriptor.h"
#include "kernels/problem.h"
#include "kernels/roi_geometry.h"
#include "kernels/transpose-inl.h"

#ifndef ROIALIGN_KERNELS_ROI_ALIGN_BACKWARD_ONCE_
#define ROIALIGN_KERNELS_ROI_ALIGN_BACKWARD_ONCE_
namespace roialign {
namespace internal {


// Where a task's scratch holds what (floats from its start): the f32 accumulator of the range, channels-last with
// each pixel's channels padded to whole vectors ([rows][W][channels_padded]); the x positions of the current RoI's
// samples ([PW][grid_w]) and the y positions of one bin row ([grid_h]); one bin's gradient per channel and its argmax
// per channel (the MAX modes).
struct GradientScratchLayout {
  int64_t channels_padded = 0, acc = 0, x_axes = 0, y_axes = 0, gradient = 0, args = 0, total = 0;
};
inline GradientScratchLayout LayoutOf(const Problem& p, const GradientRange& r, int64_t lanes) {
  static_assert(sizeof(AxisTap) % sizeof(float) == 0 && alignof(AxisTap) <= 8, "floats of scratch");
  constexpr int64_t kAxisFloats = static_cast<int64_t>(sizeof(AxisTap) / sizeof(float));
  GradientScratchLayout s;
  const int64_t channels = r.c_end - r.c_begin;
  s.channels_padded = (channels + lanes - 1) / lanes * lanes;
  s.acc = 0;
  s.x_axes = (r.y_end - r.y_begin) * p.width * s.channels_padded;
  s.x_axes += s.x_axes % 2;  // 8-byte aligned
  s.y_axes = s.x_axes + p.params.pooled_width * p.max_grid_w * kAxisFloats;
  s.gradient = s.y_axes + p.max_grid_h * kAxisFloats;
  s.gradient += (lanes - s.gradient % lanes) % lanes;  // whole vectors from here on
  s.args = s.gradient + s.channels_padded;
  s.total = s.args + s.channels_padded;
  return s;
}

}  // namespace internal
}  // namespace roialign
#endif  // ROIALIGN_KERNELS_ROI_ALIGN_BACKWARD_ONCE_

HWY_BEFORE_NAMESPACE();
namespace roialign {
namespace internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Calls f(j, count, pointer offset of channel c + j) for the runs of consecutive channels [c, c + n) splits into in
// a layout: one run for channels last, a run per block for the blocked layouts, a run per channel for NCHW.
template <class F>
HWY_INLINE void ForChannelRuns(const MapStrides& m, int64_t b, int64_t c, int64_t n, int64_t y, int64_t x, F f) {
  for (int64_t j = 0; j < n;) {
    const int64_t count = std::min(n - j, m.block - (c + j) % m.block);
    f(j, count, m.Offset(b, c + j, y, x));
    j += count;
  }
}

// Channels [c, c + n) of pixel (y, x) of image b, widened to f32 into out[0 .. n).
template <typename T>
HWY_INLINE void LoadChannels(const T* map, const MapStrides& m, int64_t b, int64_t c, int64_t n, int64_t y, int64_t x,
                             float* out) {
  if (m.block == 1) {  // planar: a plane apart
    const T* const from = map + m.Offset(b, c, y, x);
    for (int64_t j = 0; j < n; ++j) out[j] = ToF32(from[j * m.planes]);
    return;
  }
  ForChannelRuns(m, b, c, n, y, x, [&](int64_t j, int64_t count, int64_t offset) {
    for (int64_t i = 0; i < count; ++i) out[j + i] = ToF32(map[offset + i]);
  });
}

// Whether a tap of the RoI's samples along y can land in rows [begin, end): the positions are monotone in (bin,
// sample), so the extremes are the first sample of the first bin and the last of the last, and a tap lies on the
// floor of its position clamped to the map or one pixel past it. A superset: no contributing RoI is skipped.
HWY_INLINE bool RowsReach(const AxisGeometry& g, int64_t pooled, int64_t size, int64_t begin, int64_t end) {
  const float a = SamplePosition(g, 0, 0), z = SamplePosition(g, pooled - 1, g.grid - 1);
  const float top = static_cast<float>(size - 1);
  // Clamped before the conversion: a position may be far outside the map, or NaN-free but huge.
  const int64_t lo = static_cast<int64_t>(std::floor(std::clamp(std::min(a, z), 0.0f, top)));
  const int64_t hi = std::min(static_cast<int64_t>(std::floor(std::clamp(std::max(a, z), 0.0f, top))) + 1, size - 1);
  return lo < end && hi >= begin;
}

// acc_t[0 .. n) += w_t * d[0 .. n) for the taps t = 0 .. kTaps-1 in order, each a product rounded, then a sum (n a
// multiple of the vector). Taps may share a pixel (the edge rule folds them): each vector is stored before the next
// tap loads, so a shared pixel adds its taps one after the other, as the reference does.
template <int kTaps>
HWY_INLINE void AddScaledTaps(const float* w, float* const* acc, const float* HWY_RESTRICT d, int64_t n) {
  const hn::ScalableTag<float> df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  static_assert(kTaps == 2 || kTaps == 4, "a sample's taps in one row, or in both");
  // Separate vectors, not an array: SVE's sizeless vectors cannot be array elements.
  const auto w0 = hn::Set(df, w[0]), w1 = hn::Set(df, w[1]);
  const auto w2 = hn::Set(df, kTaps == 4 ? w[2] : 0.0f), w3 = hn::Set(df, kTaps == 4 ? w[3] : 0.0f);
  for (int64_t j = 0; j < n; j += lanes) {
    const auto vd = hn::Load(df, d + j);
    hn::Store(hn::Add(hn::Load(df, acc[0] + j), hn::Mul(w0, vd)), df, acc[0] + j);
    hn::Store(hn::Add(hn::Load(df, acc[1] + j), hn::Mul(w1, vd)), df, acc[1] + j);
    if constexpr (kTaps == 4) {
      hn::Store(hn::Add(hn::Load(df, acc[2] + j), hn::Mul(w2, vd)), df, acc[2] + j);
      hn::Store(hn::Add(hn::Load(df, acc[3] + j), hn::Mul(w3, vd)), df, acc[3] + j);
    }
  }
}

// For every channel, the first sample (MAX) or tap (MAX_ONNX, as 4 * sample + tap) of the bin attaining its
// maximum, as PoolBinOf finds it, into args[0 .. np) (-1: none). ys: the bin row's y positions, xs: the bin's x.
template <typename T>
void ArgmaxOfBin(const Problem& p, const MapStrides& m, int64_t b, int64_t c, int64_t n, int64_t np,
                 const AxisTap* ys, const AxisTap* xs, int64_t grid_h, int64_t grid_w, float* args) {
  const hn::ScalableTag<float> df;
  using V = hn::Vec<decltype(df)>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const bool onnx = p.params.pool_mode == PoolMode::kMaxOnnx;
  const T* const map = static_cast<const T*>(p.input);
  HWY_ALIGN float values[hn::MaxLanes(df)];
  for (int64_t j0 = 0; j0 < np; j0 += lanes) {
    const int64_t count = std::min(lanes, n - j0);  // channels of this vector; the rest are padding
    V best = hn::Set(df, -HUGE_VALF), arg = hn::Set(df, -1.0f);
    // PoolBinOf's rule: a larger value, or the first value equal to the running maximum while none is held.
    auto consider = [&](V value, float index) {
      const auto take = hn::Or(hn::Lt(best, value), hn::And(hn::Lt(arg, hn::Zero(df)), hn::Eq(value, best)));
      best = hn::IfThenElse(take, value, best);
      arg = hn::IfThenElse(take, hn::Set(df, index), arg);
    };
    for (int64_t iy = 0; iy < grid_h; ++iy) {
      const AxisTap& sy = ys[iy];
      for (int64_t ix = 0; ix < grid_w; ++ix) {
        const AxisTap& sx = xs[ix];
        // The four weighted taps (separate vectors: SVE's cannot be array elements); outside, four of value 0.
        V t0 = hn::Zero(df), t1 = hn::Zero(df), t2 = hn::Zero(df), t3 = hn::Zero(df);
        if (sy.valid && sx.valid) {
          auto tap = [&](int64_t ty, int64_t tx, float w) {
            LoadChannels(map, m, b, c + j0, count, ty, tx, values);
            for (int64_t j = count; j < lanes; ++j) values[j] = 0.0f;
            return hn::Mul(hn::Set(df, w), hn::Load(df, values));
          };
          t0 = tap(sy.lo, sx.lo, sy.w_lo * sx.w_lo);
          t1 = tap(sy.lo, sx.hi, sy.w_lo * sx.w_hi);
          t2 = tap(sy.hi, sx.lo, sy.w_hi * sx.w_lo);
          t3 = tap(sy.hi, sx.hi, sy.w_hi * sx.w_hi);
        }
        const float sample = static_cast<float>(iy * grid_w + ix);
        if (onnx) {
          consider(t0, 4.0f * sample);
          consider(t1, 4.0f * sample + 1.0f);
          consider(t2, 4.0f * sample + 2.0f);
          consider(t3, 4.0f * sample + 3.0f);
        } else {
          consider(hn::Add(hn::Add(hn::Add(t0, t1), t2), t3), sample);
        }
      }
    }
    hn::Store(arg, df, args + j0);
  }
}

template <typename T>
void RoiAlignBackward(const Problem& p, const GradientRange& r, const BackwardScratch& scratch) {
  const hn::ScalableTag<float> df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const int64_t H = p.height, W = p.width, C = p.channels;
  const int64_t PH = p.params.pooled_height, PW = p.params.pooled_width;
  const int64_t c0 = r.c_begin, n = r.c_end - r.c_begin, y_begin = r.y_begin, y_end = r.y_end;
  if (n <= 0 || y_end <= y_begin) return;
  const GradientScratchLayout layout = LayoutOf(p, r, lanes);
  const int64_t np = layout.channels_padded;
  float* const acc = scratch.data + layout.acc;
  AxisTap* const xs = reinterpret_cast<AxisTap*>(scratch.data + layout.x_axes);
  AxisTap* const ys = reinterpret_cast<AxisTap*>(scratch.data + layout.y_axes);
  float* const gradient = scratch.data + layout.gradient;
  float* const args = scratch.data + layout.args;
  const PoolMode mode = p.params.pool_mode;
  const MapStrides map = StridesOf(p.params.layout, C, H, W);
  const MapStrides grad = StridesOf(p.params.layout, C, PH, PW);
  const T* const dy = static_cast<const T*>(p.grad_output);

  std::fill_n(acc, (y_end - y_begin) * W * np, 0.0f);  // +0: an element nothing reaches is +0
  for (int64_t j = n; j < np; ++j) gradient[j] = 0.0f;  // padded channels add w * 0 to padded accumulators
  auto in_band = [&](int64_t y) { return y >= y_begin && y < y_end; };
  auto pixel = [&](int64_t y, int64_t x) { return acc + ((y - y_begin) * W + x) * np; };
  for (int64_t i = 0; i < RunCount(p); ++i) {
    const int64_t k = RunRoi(p, i);
    const RoiAxes& axes = p.axes[k];  // validation's geometry of the RoI
    if (axes.batch != r.image) continue;
    const AxisGeometry& gy = axes.gy;
    const AxisGeometry& gx = axes.gx;
    if (gy.grid * gx.grid == 0) continue;  // no samples: nothing flows back
    if (!RowsReach(gy, PH, H, y_begin, y_end)) continue;
    for (int64_t pw = 0; pw < PW; ++pw) {
      for (int64_t ix = 0; ix < gx.grid; ++ix) {
        xs[pw * gx.grid + ix] = TapOf(SamplePosition(gx, pw, ix), W);
      }
    }
    const float count = static_cast<float>(gy.grid * gx.grid);
    for (int64_t ph = 0; ph < PH; ++ph) {
      bool reaches = false;  // whether a tap of the bin row lands in the range's rows
      for (int64_t iy = 0; iy < gy.grid; ++iy) {
        const AxisTap& s = ys[iy] = TapOf(SamplePosition(gy, ph, iy), H);
        reaches |= s.valid && (in_band(s.lo) || in_band(s.hi));
      }
      if (!reaches) continue;
      for (int64_t pw = 0; pw < PW; ++pw) {
        const AxisTap* const xrow = xs + pw * gx.grid;
        LoadChannels(dy, grad, k, c0, n, ph, pw, gradient);
        if (mode == PoolMode::kAvg) {
          // The forward divides the bin's sum by the count; its transpose scales dY once per bin.
          const auto vcount = hn::Set(df, count);
          for (int64_t j = 0; j < np; j += lanes) hn::Store(hn::Div(hn::Load(df, gradient + j), vcount), df, gradient + j);
          for (int64_t iy = 0; iy < gy.grid; ++iy) {
            const AxisTap& sy = ys[iy];
            const bool top = sy.valid && in_band(sy.lo), bottom = sy.valid && in_band(sy.hi);
            if (!top && !bottom) continue;
            for (int64_t ix = 0; ix < gx.grid; ++ix) {
              const AxisTap& sx = xrow[ix];
              if (!sx.valid) continue;
              // The taps in the band, in the order (y0,x0) (y0,x1) (y1,x0) (y1,x1).
              const float w[4] = {sy.w_lo * sx.w_lo, sy.w_lo * sx.w_hi, sy.w_hi * sx.w_lo, sy.w_hi * sx.w_hi};
              float* const at[4] = {top ? pixel(sy.lo, sx.lo) : nullptr, top ? pixel(sy.lo, sx.hi) : nullptr,
                                    bottom ? pixel(sy.hi, sx.lo) : nullptr, bottom ? pixel(sy.hi, sx.hi) : nullptr};
              if (top && bottom) {
                AddScaledTaps<4>(w, at, gradient, np);
              } else {
                AddScaledTaps<2>(w + (top ? 0 : 2), at + (top ? 0 : 2), gradient, np);
              }
            }
          }
          continue;
        }
        ArgmaxOfBin<T>(p, map, r.image, c0, n, np, ys, xrow, gy.grid, gx.grid, args);
        for (int64_t j = 0; j < n; ++j) {
          if (args[j] < 0.0f) continue;  // every value NaN: no sample attains the maximum
          const int64_t a = static_cast<int64_t>(args[j]);
          const int64_t sample = mode == PoolMode::kMaxOnnx ? a / 4 : a;
          const AxisTap& sy = ys[sample / gx.grid];
          const AxisTap& sx = xrow[sample % gx.grid];
          if (!sy.valid || !sx.valid) continue;  // an argmax outside the map read no pixel
          const int64_t ty[4] = {sy.lo, sy.lo, sy.hi, sy.hi};
          const int64_t tx[4] = {sx.lo, sx.hi, sx.lo, sx.hi};
          const float w[4] = {sy.w_lo * sx.w_lo, sy.w_lo * sx.w_hi, sy.w_hi * sx.w_lo, sy.w_hi * sx.w_hi};
          for (int t = 0; t < 4; ++t) {
            if ((mode == PoolMode::kMax || t == a % 4) && in_band(ty[t])) pixel(ty[t], tx[t])[j] += w[t] * gradient[j];
          }
        }
      }
    }
  }

  // The range, rounded once into dX's layout and dtype.
  T* const dx = static_cast<T*>(p.grad_input);
  if (map.block == 1) {
    // Planar: the accumulator's channels-last pixels transposed into each channel's rows of the range, a register
    // tile of channels at a time (the stores then run along the planes).
    T* const planes = dx + map.Offset(r.image, c0, y_begin, 0);
    for (int64_t j = 0; j < n; j += kTransposeTileF32) {
      TransposeTile(acc, np, map.planes, 0, (y_end - y_begin) * W, j, std::min(n, j + kTransposeTileF32), planes);
    }
    return;  // no padded lanes
  }
  for (int64_t y = y_begin; y < y_end; ++y) {
    for (int64_t x = 0; x < W; ++x) {
      const float* const from = pixel(y, x);
      ForChannelRuns(map, r.image, c0, n, y, x, [&](int64_t j, int64_t count, int64_t offset) {
        for (int64_t i = 0; i < count; ++i) StoreF32As(from[j + i], dx + offset + i);
      });
    }
  }
  // The padded lanes of a blocked layout's last block belong to the range holding the last channel.
  if (r.c_end == C) {
    for (int64_t c = C; c < StoredChannels(p.params.layout, C); ++c) {
      for (int64_t y = y_begin; y < y_end; ++y) {
        for (int64_t x = 0; x < W; ++x) StoreF32As(0.0f, dx + map.Offset(r.image, c, y, x));
      }
    }
  }
}

int64_t BackwardScratchFloats(const Problem& p, const GradientRange& r) {
  return LayoutOf(p, r, static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()))).total;
}

}  // namespace HWY_NAMESPACE
}  // namespace internal
}  // namespace roialign
HWY_AFTER_NAMESPACE();

namespace roialign {
namespace internal {
namespace HWY_NAMESPACE {
using BackwardPair = std::pair<WholeRoisBackwardFn, BackwardScratchFn>;
using BackwardTable = std::array<BackwardPair, EnumTraits<DType>::kNames.size()>;
// This target's entry points; outside HWY_BEFORE_NAMESPACE, so compiled for the baseline (any CPU may ask).
std::pair<int64_t, BackwardTable> ThisTargetBackward() {
  return {HWY_TARGET, PerDTypeTable<BackwardPair>([](auto* type) -> BackwardPair {
            using T = std::remove_pointer_t<decltype(type)>;
            return {&RoiAlignBackward<T>, &BackwardScratchFloats};
          })};
}
}  // namespace HWY_NAMESPACE
}  // namespace internal
}  // namespace roialign

#if HWY_ONCE
namespace roialign {
namespace internal {

HWY_EXPORT(ThisTargetBackward);

std::array<std::pair<WholeRoisBackwardFn, BackwardScratchFn>, EnumTraits<DType>::kNames.size()> SimdBackwardFns(
    int64_t hwy_target) {
  static std::pair<int64_t, HWY_NAMESPACE::BackwardTable> (*const kMakers[])() = {
      HWY_CHOOSE_TARGET_LIST(ThisTargetBackward), HWY_CHOOSE_FALLBACK(ThisTargetBackward)};
  for (auto* make : kMakers) {
    if (make == nullptr) continue;
    const auto table = make();
    if (table.first == hwy_target) return table.second;
  }
  return {};
}

}  // namespace internal
}  // namespace roialign
#endif  // HWY_ONCE
