// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The SIMD backward of every layout (docs/semantics.md#backward), compiled once per Highway target. A task owns a
// range of dX (an image, channels, rows) and accumulates it in f32 (f64 for float64), channels-last in its scratch,
// vectorized over the channels: every RoI of the image in index order, then its bins, samples and taps in the
// documented order, so each element's sum is the scalar reference's, bit for bit. The range is then written to dX
// in its layout and dtype, each element rounded once. Built with -ffp-contract=off (CMakeLists.txt), as the
// reference is: every product and every sum is rounded on its own on every target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/roi_align_backward.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/half_float.h"
#include "kernels/kernel_descriptor.h"
#include "kernels/problem.h"
#include "kernels/roi_geometry.h"
#include "kernels/transpose-inl.h"

#ifndef ROIALIGN_KERNELS_ROI_ALIGN_BACKWARD_ONCE_
#define ROIALIGN_KERNELS_ROI_ALIGN_BACKWARD_ONCE_
namespace roialign {
namespace internal {


// Where a task's scratch holds what (elements of the accumulation type A from its start): the accumulator of the
// range, channels-last with each pixel's channels padded to whole vectors ([rows][W][channels_padded]); the x
// positions of the current RoI's samples ([PW][grid_w]) and the y positions of one bin row ([grid_h]); the bin
// row's dY per channel ([PW][channels_padded]) and one bin's argmax per channel (the MAX modes).
struct GradientScratchLayout {
  int64_t channels_padded = 0, acc = 0, x_axes = 0, y_axes = 0, gradient = 0, args = 0, total = 0;
};
template <typename A>
inline GradientScratchLayout LayoutOf(const Problem& p, const GradientRange& r, int64_t lanes) {
  static_assert(sizeof(AxisTapOf<A>) % sizeof(A) == 0 && alignof(AxisTapOf<A>) <= 8, "elements of scratch");
  constexpr int64_t kAxisElements = static_cast<int64_t>(sizeof(AxisTapOf<A>) / sizeof(A));
  GradientScratchLayout s;
  const int64_t channels = r.c_end - r.c_begin;
  s.channels_padded = (channels + lanes - 1) / lanes * lanes;
  s.acc = 0;
  s.x_axes = (r.y_end - r.y_begin) * p.width * s.channels_padded;
  if (sizeof(A) < 8) s.x_axes += s.x_axes % 2;  // 8-byte aligned
  s.y_axes = s.x_axes + p.params.pooled_width * p.max_grid_w * kAxisElements;
  s.gradient = s.y_axes + p.max_grid_h * kAxisElements;
  s.gradient += (lanes - s.gradient % lanes) % lanes;  // whole vectors from here on
  s.args = s.gradient + p.params.pooled_width * s.channels_padded;
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
// a layout: one run for channels last, a run per block for the blocked layouts, a run per channel for NCHW. After
// the first, a run starts a block's plane (one division per call, not per run).
template <class F>
HWY_INLINE void ForChannelRuns(const MapStrides& m, int64_t b, int64_t c, int64_t n, int64_t y, int64_t x, F f) {
  int64_t offset = m.Offset(b, c, y, x), lane = c % m.block;
  for (int64_t j = 0; j < n;) {
    const int64_t count = std::min(n - j, m.block - lane);
    f(j, count, offset);
    j += count;
    offset += m.planes - lane;
    lane = 0;
  }
}

// Channels [c, c + n) of pixel (y, x) of image b, widened to their compute type into out[0 .. n).
template <typename T>
HWY_INLINE void LoadChannels(const T* map, const MapStrides& m, int64_t b, int64_t c, int64_t n, int64_t y, int64_t x,
                             ComputeOf<T>* out) {
  if (m.block == 1) {  // planar: a plane apart
    const T* const from = map + m.Offset(b, c, y, x);
    for (int64_t j = 0; j < n; ++j) out[j] = Widen(from[j * m.planes]);
    return;
  }
  ForChannelRuns(m, b, c, n, y, x, [&](int64_t j, int64_t count, int64_t offset) {
    for (int64_t i = 0; i < count; ++i) out[j + i] = Widen(map[offset + i]);
  });
}

// Channels [c, c + n) of bins [pw_begin, pw_end) of bin row ph of RoI k's dY, widened, into out[pw * stride + j]:
// planar dY holds a channel's row of bins together, so its rows are transposed, in register tiles where dY is f32.
template <typename T>
HWY_INLINE void LoadGradientRow(const T* dy, const MapStrides& g, int64_t k, int64_t c, int64_t n, int64_t ph,
                                int64_t pw_begin, int64_t pw_end, int64_t stride, ComputeOf<T>* out) {
  if (g.block > 1) {
    for (int64_t pw = pw_begin; pw < pw_end; ++pw) LoadChannels(dy, g, k, c, n, ph, pw, out + pw * stride);
    return;
  }
  const T* const rows = dy + g.Offset(k, c, ph, 0);
  if constexpr (std::is_same_v<T, float>) {
    TransposeTile(rows, g.planes, stride, 0, n, pw_begin, pw_end, out);
  } else {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t pw = pw_begin; pw < pw_end; ++pw) out[pw * stride + j] = Widen(rows[j * g.planes + pw]);
    }
  }
}

// Asks the caches for the lines holding elements [begin, begin + count).
template <typename T>
HWY_INLINE void PrefetchElements(const T* begin, int64_t count) {
  const uintptr_t end = reinterpret_cast<uintptr_t>(begin + count);
  for (uintptr_t at = reinterpret_cast<uintptr_t>(begin) & ~uintptr_t{63}; at < end; at += 64) {
    hwy::Prefetch(reinterpret_cast<const T*>(at));
  }
}

// Asks the caches for channels [c, c + n) of bin row ph of RoI k's dY, a row ahead of its loads: the RoIs come in
// index order, so their dY rows are far apart and each would otherwise wait on memory. Always inlined, and without
// lambdas: GCC takes a function that only prefetches for one without effects, and drops its calls.
template <typename T>
HWY_INLINE void PrefetchGradientRow(const T* dy, const MapStrides& g, int64_t k, int64_t c, int64_t n, int64_t ph,
                                    int64_t pooled_width) {
  if (g.block == 1) {  // planar: the row of bins is contiguous in each channel's plane
    for (int64_t j = 0; j < n; ++j) PrefetchElements(dy + g.Offset(k, c + j, ph, 0), pooled_width);
    return;
  }
  const int64_t first = g.Offset(k, c, ph, 0), first_lane = c % g.block;
  for (int64_t pw = 0; pw < pooled_width; ++pw) {
    int64_t offset = first + pw * g.pixel, lane = first_lane;
    for (int64_t j = 0; j < n;) {  // the runs of ForChannelRuns
      const int64_t count = std::min(n - j, g.block - lane);
      PrefetchElements(dy + offset, count);
      j += count;
      offset += g.planes - lane;
      lane = 0;
    }
  }
}

// Asks the caches for the first samples of bin row ph of RoI k in the call's table of rotated samples, with the
// row's dY: each RoI's samples are far from the last one's. The caches' own prefetchers follow a longer row.
template <typename A>
HWY_INLINE void PrefetchTableRow(const Problem& p, const RotatedSampleOf<A>* table, int64_t k, int64_t ph) {
  constexpr int64_t kSamples = 64;
  const RoiAxesOf<A>& axes = AxesOf<A>(p, k);
  const int64_t row = p.params.pooled_width * axes.gy.grid * axes.gx.grid;
  PrefetchElements(table + p.rotated_first[k] + ph * row, std::min(row, kSamples));
}

// Whether a tap of the RoI's samples along y can land in rows [begin, end): the positions are monotone in (bin,
// sample), so the extremes are the first sample of the first bin and the last of the last, and a tap lies on the
// floor of its position clamped to the map or one pixel past it. A superset: no contributing RoI is skipped.
template <typename R>
HWY_INLINE bool RowsReach(const AxisGeometryOf<R>& g, int64_t pooled, int64_t size, int64_t begin, int64_t end) {
  const R a = SamplePosition(g, 0, 0), z = SamplePosition(g, pooled - 1, g.grid - 1);
  const R top = static_cast<R>(size - 1);
  // Clamped before the conversion: a position may be far outside the map, or NaN-free but huge.
  const int64_t lo = static_cast<int64_t>(std::floor(std::clamp(std::min(a, z), R(0), top)));
  const int64_t hi = std::min(static_cast<int64_t>(std::floor(std::clamp(std::max(a, z), R(0), top))) + 1, size - 1);
  return lo < end && hi >= begin;
}

// acc_t[0 .. n) += w_t * d[0 .. n) for the taps t = 0 .. kTaps-1 in order, each a product rounded, then a sum (n a
// multiple of the vector). Taps may share a pixel (the edge rule folds them): each vector is stored before the next
// tap loads, so a shared pixel adds its taps one after the other, as the reference does.
template <int kTaps, typename A>
HWY_INLINE void AddScaledTaps(const A* w, A* const* acc, const A* HWY_RESTRICT d, int64_t n) {
  const hn::ScalableTag<A> df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  static_assert(kTaps == 2 || kTaps == 4, "a sample's taps in one row, or in both");
  // Separate vectors, not an array: SVE's sizeless vectors cannot be array elements.
  const auto w0 = hn::Set(df, w[0]), w1 = hn::Set(df, w[1]);
  const auto w2 = hn::Set(df, kTaps == 4 ? w[2] : A(0)), w3 = hn::Set(df, kTaps == 4 ? w[3] : A(0));
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

// Whether the taps of a region of a rotated RoI can land in rows [begin, end): the region is centred at (yc, xc) in
// the box's frame with half extents (hy, hx), so its samples lie within hy |cos| + hx |sin| of its turned centre's
// row, and a tap on the floor of a sample's row or the row below. Two rows of margin cover the rounding of the
// samples' positions while every magnitude is below 2^20; beyond that (boxes far outside any real map) every
// region is taken to reach. A superset: no contributing sample is skipped.
template <typename R>
HWY_INLINE bool RotatedReach(const RoiAxesOf<R>& a, double yc, double xc, double hy, double hx, int64_t size,
                             int64_t begin, int64_t end) {
  const double cos = static_cast<double>(a.rotation.cos), sin = static_cast<double>(a.rotation.sin);
  const double cy = static_cast<double>(a.rotation.centre_y);
  if (std::fabs(cy) + std::fabs(yc) + std::fabs(xc) + hy + hx > 1048576.0) return true;
  const double centre = yc * cos - xc * sin + cy, half = hy * std::fabs(cos) + hx * std::fabs(sin) + 2.0;
  const double top = static_cast<double>(size - 1);
  const int64_t lo = static_cast<int64_t>(std::floor(std::clamp(centre - half, 0.0, top)));
  const int64_t hi = std::min(static_cast<int64_t>(std::floor(std::clamp(centre + half, 0.0, top))) + 1, size - 1);
  return lo < end && hi >= begin;
}
// The whole RoI, and bin (ph, pw) of it.
template <typename R>
HWY_INLINE bool RotatedRoiReaches(const RoiAxesOf<R>& a, int64_t size, int64_t begin, int64_t end) {
  const double h = static_cast<double>(a.gy.roi), w = static_cast<double>(a.gx.roi);
  return RotatedReach(a, 0.0, 0.0, 0.5 * h, 0.5 * w, size, begin, end);
}
template <typename R>
HWY_INLINE bool RotatedBinReaches(const RoiAxesOf<R>& a, int64_t ph, int64_t pw, int64_t size, int64_t begin,
                                  int64_t end) {
  const double bh = static_cast<double>(a.gy.bin), bw = static_cast<double>(a.gx.bin);
  const double yc = static_cast<double>(a.gy.start) + (static_cast<double>(ph) + 0.5) * bh;
  const double xc = static_cast<double>(a.gx.start) + (static_cast<double>(pw) + 0.5) * bw;
  return RotatedReach(a, yc, xc, 0.5 * std::fabs(bh), 0.5 * std::fabs(bw), size, begin, end);
}

// Bin row ph of a rotated RoI (all its bins).
template <typename R>
HWY_INLINE bool RotatedBinRowReaches(const RoiAxesOf<R>& a, int64_t ph, int64_t pooled_width, int64_t size,
                                     int64_t begin, int64_t end) {
  const double bh = static_cast<double>(a.gy.bin);
  const double w = static_cast<double>(a.gx.bin) * static_cast<double>(pooled_width);
  const double yc = static_cast<double>(a.gy.start) + (static_cast<double>(ph) + 0.5) * bh;
  const double xc = static_cast<double>(a.gx.start) + 0.5 * w;
  return RotatedReach(a, yc, xc, 0.5 * std::fabs(bh), 0.5 * std::fabs(w), size, begin, end);
}

// For every channel, the first sample (MAX) or tap (MAX_ONNX, as 4 * sample + tap) of the bin attaining its
// maximum, as PoolBinOf finds it, into args[0 .. np) (-1: none). taps(iy, ix, &sy, &sx): a sample's taps.
template <typename T, typename A, class Taps>
void ArgmaxOfBin(const Problem& p, const MapStrides& m, int64_t b, int64_t c, int64_t n, int64_t np,
                 const Taps& taps, int64_t grid_h, int64_t grid_w, A* args) {
  const hn::ScalableTag<A> df;
  using V = hn::Vec<decltype(df)>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const bool onnx = p.params.pool_mode == PoolMode::kMaxOnnx;
  const T* const map = static_cast<const T*>(p.input);
  HWY_ALIGN A values[hn::MaxLanes(df)];
  for (int64_t j0 = 0; j0 < np; j0 += lanes) {
    const int64_t count = std::min(lanes, n - j0);  // channels of this vector; the rest are padding
    V best = hn::Set(df, -static_cast<A>(HUGE_VAL)), arg = hn::Set(df, A(-1));
    // PoolBinOf's rule: a larger value, or the first value equal to the running maximum while none is held.
    auto consider = [&](V value, A index) {
      const auto take = hn::Or(hn::Lt(best, value), hn::And(hn::Lt(arg, hn::Zero(df)), hn::Eq(value, best)));
      best = hn::IfThenElse(take, value, best);
      arg = hn::IfThenElse(take, hn::Set(df, index), arg);
    };
    for (int64_t iy = 0; iy < grid_h; ++iy) {
      for (int64_t ix = 0; ix < grid_w; ++ix) {
        AxisTapOf<A> sy, sx;
        taps(iy, ix, &sy, &sx);
        // The four weighted taps (separate vectors: SVE's cannot be array elements); outside, four of value 0.
        V t0 = hn::Zero(df), t1 = hn::Zero(df), t2 = hn::Zero(df), t3 = hn::Zero(df);
        if (sy.valid && sx.valid) {
          auto tap = [&](int64_t ty, int64_t tx, A w) {
            LoadChannels(map, m, b, c + j0, count, ty, tx, values);
            for (int64_t j = count; j < lanes; ++j) values[j] = 0;
            return hn::Mul(hn::Set(df, w), hn::Load(df, values));
          };
          t0 = tap(sy.lo, sx.lo, sy.w_lo * sx.w_lo);
          t1 = tap(sy.lo, sx.hi, sy.w_lo * sx.w_hi);
          t2 = tap(sy.hi, sx.lo, sy.w_hi * sx.w_lo);
          t3 = tap(sy.hi, sx.hi, sy.w_hi * sx.w_hi);
        }
        const A sample = static_cast<A>(iy * grid_w + ix);
        if (onnx) {
          consider(t0, A(4) * sample);
          consider(t1, A(4) * sample + A(1));
          consider(t2, A(4) * sample + A(2));
          consider(t3, A(4) * sample + A(3));
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
  using A = ComputeOf<T>;  // f32, or f64 for float64: scratch.data then holds doubles
  const hn::ScalableTag<A> df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const int64_t H = p.height, W = p.width, C = p.channels;
  const int64_t PH = p.params.pooled_height, PW = p.params.pooled_width;
  const int64_t c0 = r.c_begin, n = r.c_end - r.c_begin, y_begin = r.y_begin, y_end = r.y_end;
  if (n <= 0 || y_end <= y_begin) return;
  const GradientScratchLayout layout = LayoutOf<A>(p, r, lanes);
  const int64_t np = layout.channels_padded;
  A* const data = reinterpret_cast<A*>(scratch.data);
  A* const acc = data + layout.acc;
  AxisTapOf<A>* const xs = reinterpret_cast<AxisTapOf<A>*>(data + layout.x_axes);
  AxisTapOf<A>* const ys = reinterpret_cast<AxisTapOf<A>*>(data + layout.y_axes);
  A* const gradients = data + layout.gradient;
  A* const args = data + layout.args;
  const PoolMode mode = p.params.pool_mode;
  const bool rotated = p.params.roi_kind == RoiKind::kRotated;
  const MapStrides map = StridesOf(p.params.layout, C, H, W);
  const MapStrides grad = StridesOf(p.params.layout, C, PH, PW);
  const T* const dy = static_cast<const T*>(p.grad_output);
  const auto* const table = static_cast<const RotatedSampleOf<A>*>(p.rotated_taps);

  std::fill_n(acc, (y_end - y_begin) * W * np, A(0));  // +0: an element nothing reaches is +0
  for (int64_t pw = 0; pw < PW; ++pw) {  // padded channels add w * 0 to padded accumulators
    for (int64_t j = n; j < np; ++j) gradients[pw * np + j] = 0;
  }
  auto in_band = [&](int64_t y) { return y >= y_begin && y < y_end; };
  auto pixel = [&](int64_t y, int64_t x) { return acc + ((y - y_begin) * W + x) * np; };
  // The rows a tabulated rotated RoI's samples reach (FillRotatedSampleTaps): of the RoI, of its bin rows, of its
  // bins.
  const int64_t extents_per_roi = 1 + PH * (1 + PW);
  auto extents_of = [&](int64_t k) { return p.rotated_extents + k * extents_per_roi; };
  // Whether a tap of bin row ph of a RoI lands in the range's rows (rotated: of a bin of the row, a superset).
  auto row_reaches = [&](const RoiAxesOf<A>& axes, int64_t k, int64_t ph) HWY_ATTR {
    if (table != nullptr) return extents_of(k)[1 + ph].Meets(y_begin, y_end);
    if (rotated) return RotatedBinRowReaches(axes, ph, PW, H, y_begin, y_end);
    for (int64_t iy = 0; iy < axes.gy.grid; ++iy) {
      const AxisTapOf<A> s = TapOf(SamplePosition(axes.gy, ph, iy), H);
      if (s.valid && (in_band(s.lo) || in_band(s.hi))) return true;
    }
    return false;
  };
  // Whether any tap of a RoI lands in the range's rows (a superset).
  auto roi_reaches = [&](const RoiAxesOf<A>& axes, int64_t k) HWY_ATTR {
    if (table != nullptr) return extents_of(k)[0].Meets(y_begin, y_end);
    return rotated ? RotatedRoiReaches(axes, H, y_begin, y_end) : RowsReach(axes.gy, PH, H, y_begin, y_end);
  };
  // The RoIs from run index i on that add to the range: the next one's run index and the bin rows [ph_begin,
  // ph_end) that reach the range. Computed taps' rows are consecutive: positions are monotone in (bin, sample),
  // and so are their taps (a rotated row's centre moves along a line). A table's are not (samples outside the map
  // reach no row): its rows run from the first that reaches the range to the last.
  struct Visit {
    int64_t i, ph_begin, ph_end;
  };
  auto visit_from = [&](int64_t i) HWY_ATTR {
    for (; i < RunCount(p); ++i) {
      const int64_t k = RunRoi(p, i);
      const RoiAxesOf<A>& axes = AxesOf<A>(p, k);
      if (axes.batch != r.image || axes.gy.grid * axes.gx.grid == 0) continue;  // no samples: nothing flows back
      if (!roi_reaches(axes, k)) continue;
      int64_t begin = 0;
      while (begin < PH && !row_reaches(axes, k, begin)) ++begin;
      if (begin == PH) continue;
      int64_t end = begin + 1;
      if (table != nullptr) {
        for (int64_t ph = end; ph < PH; ++ph) end = row_reaches(axes, k, ph) ? ph + 1 : end;
      } else {
        while (end < PH && row_reaches(axes, k, end)) ++end;
      }
      return Visit{i, begin, end};
    }
    return Visit{RunCount(p), 0, 0};
  };
  // While a RoI adds to the range, the first bin row of the next one's dY (and table) is prefetched; each row, the
  // next row's.
  const int64_t runs = RunCount(p);
  for (Visit visit = visit_from(0), next; visit.i < runs; visit = next) {
    const int64_t k = RunRoi(p, visit.i);
    next = visit_from(visit.i + 1);
    if (next.i < runs) {
      PrefetchGradientRow(dy, grad, RunRoi(p, next.i), c0, n, next.ph_begin, PW);
      if (table != nullptr) PrefetchTableRow(p, table, RunRoi(p, next.i), next.ph_begin);
    }
    const RoiAxesOf<A>& axes = AxesOf<A>(p, k);  // validation's geometry of the RoI
    const AxisGeometryOf<A>& gy = axes.gy;
    const AxisGeometryOf<A>& gx = axes.gx;
    for (int64_t pw = 0; pw < PW && !rotated; ++pw) {
      for (int64_t ix = 0; ix < gx.grid; ++ix) {
        xs[pw * gx.grid + ix] = TapOf(SamplePosition(gx, pw, ix), W);
      }
    }
    const int64_t samples = gy.grid * gx.grid;
    const A count = static_cast<A>(samples);
    for (int64_t ph = visit.ph_begin; ph < visit.ph_end; ++ph) {
      if (ph + 1 < visit.ph_end) {
        PrefetchGradientRow(dy, grad, k, c0, n, ph + 1, PW);
        if (table != nullptr) PrefetchTableRow(p, table, k, ph + 1);
      }
      for (int64_t iy = 0; iy < gy.grid && !rotated; ++iy) ys[iy] = TapOf(SamplePosition(gy, ph, iy), H);
      // The row's bins that reach the range: all of them, or a rotated row's consecutive few (their centres move
      // along a line).
      int64_t pw_begin = 0, pw_end = PW;
      if (table != nullptr) {  // from the first bin that reaches the range to the last
        const RowExtent* const bins = extents_of(k) + 1 + PH + ph * PW;
        while (pw_begin < PW && !bins[pw_begin].Meets(y_begin, y_end)) ++pw_begin;
        pw_end = pw_begin;
        for (int64_t pw = pw_begin; pw < PW; ++pw) pw_end = bins[pw].Meets(y_begin, y_end) ? pw + 1 : pw_end;
      } else if (rotated) {
        while (pw_begin < PW && !RotatedBinReaches(axes, ph, pw_begin, H, y_begin, y_end)) ++pw_begin;
        pw_end = pw_begin;
        while (pw_end < PW && RotatedBinReaches(axes, ph, pw_end, H, y_begin, y_end)) ++pw_end;
      }
      LoadGradientRow(dy, grad, k, c0, n, ph, pw_begin, pw_end, np, gradients);
      if (mode == PoolMode::kAvg) {
        // The forward divides a bin's sum by the count; its transpose scales the bin's dY, once per bin row. A power
        // of two's reciprocal is exact, and a product by it the quotient's bits.
        const bool exact = (samples & (samples - 1)) == 0;
        const auto v = hn::Set(df, exact ? A(1) / count : count);
        for (int64_t j = pw_begin * np; j < pw_end * np; j += lanes) {
          const auto g = hn::Load(df, gradients + j);
          hn::Store(exact ? hn::Mul(g, v) : hn::Div(g, v), df, gradients + j);
        }
      }
      for (int64_t pw = pw_begin; pw < pw_end; ++pw) {
        const AxisTapOf<A>* const xrow = xs + pw * gx.grid;
        const RotatedSampleOf<A>* const bin_samples =
            table != nullptr ? table + p.rotated_first[k] + (ph * PW + pw) * gy.grid * gx.grid : nullptr;
        // A sample's taps along y and x: the bin row's and column's (separable), or a rotated sample's own (the
        // call's table, else computed here).
        auto taps = [&](int64_t iy, int64_t ix, AxisTapOf<A>* sy, AxisTapOf<A>* sx) HWY_ATTR {
          if (bin_samples != nullptr) {
            AxisTapsOf(bin_samples[iy * gx.grid + ix], sy, sx);
          } else if (rotated) {
            RotatedSampleTaps(axes, ph, pw, iy, ix, H, W, sy, sx);
          } else {
            *sy = ys[iy];
            *sx = xrow[ix];
          }
        };
        const A* const gradient = gradients + pw * np;
        if (mode == PoolMode::kAvg) {
          for (int64_t iy = 0; iy < gy.grid; ++iy) {
            if (!rotated && !(ys[iy].valid && (in_band(ys[iy].lo) || in_band(ys[iy].hi)))) continue;
            for (int64_t ix = 0; ix < gx.grid; ++ix) {
              AxisTapOf<A> sy, sx;
              taps(iy, ix, &sy, &sx);
              const bool top = sy.valid && in_band(sy.lo), bottom = sy.valid && in_band(sy.hi);
              if (!sx.valid || (!top && !bottom)) continue;
              // The taps in the band, in the order (y0,x0) (y0,x1) (y1,x0) (y1,x1).
              const A w[4] = {sy.w_lo * sx.w_lo, sy.w_lo * sx.w_hi, sy.w_hi * sx.w_lo, sy.w_hi * sx.w_hi};
              A* const at[4] = {top ? pixel(sy.lo, sx.lo) : nullptr, top ? pixel(sy.lo, sx.hi) : nullptr,
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
        ArgmaxOfBin<T>(p, map, r.image, c0, n, np, taps, gy.grid, gx.grid, args);
        for (int64_t j = 0; j < n; ++j) {
          if (args[j] < A(0)) continue;  // every value NaN: no sample attains the maximum
          const int64_t a = static_cast<int64_t>(args[j]);
          const int64_t sample = mode == PoolMode::kMaxOnnx ? a / 4 : a;
          AxisTapOf<A> sy, sx;
          taps(sample / gx.grid, sample % gx.grid, &sy, &sx);
          if (!sy.valid || !sx.valid) continue;  // an argmax outside the map read no pixel
          const int64_t ty[4] = {sy.lo, sy.lo, sy.hi, sy.hi};
          const int64_t tx[4] = {sx.lo, sx.hi, sx.lo, sx.hi};
          const A w[4] = {sy.w_lo * sx.w_lo, sy.w_lo * sx.w_hi, sy.w_hi * sx.w_lo, sy.w_hi * sx.w_hi};
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
    if constexpr (std::is_same_v<T, double>) {  // moved as they are
      TransposeTile(reinterpret_cast<const uint64_t*>(acc), np, map.planes, 0, (y_end - y_begin) * W, 0, n,
                    reinterpret_cast<uint64_t*>(planes));
    } else {
      for (int64_t j = 0; j < n; j += kTransposeTileF32) {
        TransposeTile(acc, np, map.planes, 0, (y_end - y_begin) * W, j, std::min(n, j + kTransposeTileF32), planes);
      }
    }
    return;  // no padded lanes
  }
  // Whether a run of `count` elements from `to`, then every pixel's, is whole lines that whole vectors fill: a part
  // line streamed waits in a write-combining buffer, or goes to memory partial.
  auto streams = [&](const T* to, int64_t count) {
    const auto line = static_cast<uintptr_t>(std::max<int64_t>(64, lanes * static_cast<int64_t>(sizeof(T))));
    return r.stream && count % lanes == 0 && (count * static_cast<int64_t>(sizeof(T))) % 64 == 0 &&
           reinterpret_cast<uintptr_t>(to) % line == 0 && (map.pixel * static_cast<int64_t>(sizeof(T))) % 64 == 0;
  };
  // Channels last and blocked: each run of the range's channels (one, or one per block), a row at a time, its
  // pixels a pixel stride apart in dX; the offsets are found once per run and row.
  for (int64_t j = 0; j < n;) {
    const int64_t count = std::min(n - j, map.block - (c0 + j) % map.block);
    for (int64_t y = y_begin; y < y_end; ++y) {
      T* to = dx + map.Offset(r.image, c0 + j, y, 0);
      const A* from = pixel(y, 0) + j;
      if constexpr (std::is_same_v<T, A>) {  // f32 and f64: stored as accumulated
        if (streams(to, count)) {
          for (int64_t x = 0; x < W; ++x, to += map.pixel, from += np) {
            for (int64_t i = 0; i < count; i += lanes) hn::Stream(hn::LoadU(df, from + i), df, to + i);
          }
          continue;
        }
      }
      for (int64_t x = 0; x < W; ++x, to += map.pixel, from += np) {
        for (int64_t i = 0; i < count; ++i) Narrow(from[i], to + i);
      }
    }
    j += count;
  }
  // The padded lanes of a blocked layout's last block belong to the range holding the last channel.
  if (r.c_end == C) {
    for (int64_t c = C; c < StoredChannels(p.params.layout, C); ++c) {
      for (int64_t y = y_begin; y < y_end; ++y) {
        for (int64_t x = 0; x < W; ++x) Narrow(A(0), dx + map.Offset(r.image, c, y, x));
      }
    }
  }
  if (r.stream) hwy::FlushStream();  // the streamed lines reach memory before the task is seen to end
}

// In floats (BackwardScratch's unit), for the accumulation type of T.
template <typename T>
int64_t BackwardScratchFloats(const Problem& p, const GradientRange& r) {
  using A = ComputeOf<T>;
  const int64_t elements = LayoutOf<A>(p, r, static_cast<int64_t>(hn::Lanes(hn::ScalableTag<A>()))).total;
  return elements * static_cast<int64_t>(sizeof(A) / sizeof(float));
}

// This target's entry points per dtype, which the target table (pool_bin.cc) takes.
extern constexpr BackwardEntries kBackward = PerDTypeTable<BackwardEntry>([](auto* type) {
  using T = std::remove_pointer_t<decltype(type)>;
  return BackwardEntry{&RoiAlignBackward<T>, &BackwardScratchFloats<T>};
});

}  // namespace HWY_NAMESPACE
}  // namespace internal
}  // namespace roialign
HWY_AFTER_NAMESPACE();
