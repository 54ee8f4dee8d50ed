// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The float64 forward of every layout (docs/semantics.md#float64), compiled once per Highway target: whole RoIs,
// vectorized over channels, in double. It follows the scalar reference's order of operations (each sample's four
// products, their sum, then the samples in (iy, ix) order), so every target gives the reference's bits; float64
// is the precision users check gradients and results in, and the backward (roi_align_backward.cc) is bitwise the
// reference's too. Channels of a pixel are loaded whole where they are contiguous (NHWC, a block of a blocked
// layout) and gathered where they are not (NCHW's planes, a vector crossing blocks). Built with
// -ffp-contract=off (CMakeLists.txt), as the reference is.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/roi_align_f64.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/kernel_descriptor.h"
#include "kernels/problem.h"
#include "kernels/roi_geometry.h"

HWY_BEFORE_NAMESPACE();
namespace roialign {
namespace internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using D64 = hn::ScalableTag<double>;
using V64 = hn::Vec<D64>;

// Where one vector of `count` channels starting at channel c sits in a layout: whole at an offset (contiguous) or
// lane j at offset + index[j] (lanes past count repeat channel c and are never stored). The indices are kept as
// integers: SVE's sizeless vectors cannot be struct members.
struct ChannelVector {
  int64_t offset;  // of channel c in pixel (0, 0) of image 0
  int64_t count;
  bool contiguous;
  HWY_ALIGN int64_t index[hn::MaxLanes(D64())];
};

HWY_INLINE void ChannelVectorAt(const MapStrides& m, int64_t c, int64_t count, ChannelVector* v) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(D64()));
  v->offset = m.Offset(0, c, 0, 0);
  v->count = count;
  v->contiguous = count == lanes;
  for (int64_t j = 0; j < lanes; ++j) {
    v->index[j] = j < count ? m.Offset(0, c + j, 0, 0) - v->offset : 0;
    v->contiguous &= v->index[j] == j;
  }
}

// The channels of v at `pixel` (the element offset of channel 0 of a pixel).
HWY_INLINE V64 LoadAt(const double* map, const ChannelVector& v, int64_t pixel) {
  const D64 d;
  const double* const p = map + pixel + v.offset;
  if (v.contiguous) return hn::LoadU(d, p);
  return hn::GatherIndex(d, p, hn::Load(hn::RebindToSigned<D64>(), v.index));
}

// Stores the valid lanes of x at `at` (the element offset of channel 0 of an output bin).
HWY_INLINE void StoreAt(V64 x, const ChannelVector& v, int64_t at, double* out) {
  const D64 d;
  double* const p = out + at + v.offset;
  if (v.contiguous) return hn::StoreU(x, d, p);
  HWY_ALIGN double lanes[hn::MaxLanes(d)];
  hn::Store(x, d, lanes);
  for (int64_t j = 0; j < v.count; ++j) p[v.index[j]] = lanes[j];
}

// One bin of one vector of channels, as the reference pools it (roi_align_reference.h PoolBinOf): AVG sums the
// samples and divides by their count; MAX keeps the first largest sample, MAX_ONNX the first largest tap; a NaN
// never replaces the running maximum. taps(iy, ix, &ty, &tx) gives a sample's taps along y and x.
template <PoolMode M, class Taps>
HWY_INLINE V64 PoolBin(const double* map, const ChannelVector& v, const MapStrides& m, int64_t image, int64_t grid_h,
                       int64_t grid_w, const Taps& taps) {
  const D64 d;
  V64 acc = M == PoolMode::kAvg ? hn::Zero(d) : hn::Set(d, -HUGE_VAL);
  auto raise = [&](V64 value) { acc = hn::IfThenElse(hn::Lt(acc, value), value, acc); };
  const int64_t image_offset = image * m.image;
  for (int64_t iy = 0; iy < grid_h; ++iy) {
    for (int64_t ix = 0; ix < grid_w; ++ix) {
      AxisTapOf<double> ty, tx;
      taps(iy, ix, &ty, &tx);
      if (!ty.valid || !tx.valid) {  // outside: four taps of value 0
        if (M == PoolMode::kAvg) acc = hn::Add(acc, hn::Zero(d));
        if (M != PoolMode::kAvg) raise(hn::Zero(d));
        continue;
      }
      const int64_t r0 = image_offset + ty.lo * m.row, r1 = image_offset + ty.hi * m.row;
      const int64_t x0 = tx.lo * m.pixel, x1 = tx.hi * m.pixel;
      const V64 t0 = hn::Mul(hn::Set(d, ty.w_lo * tx.w_lo), LoadAt(map, v, r0 + x0));
      const V64 t1 = hn::Mul(hn::Set(d, ty.w_lo * tx.w_hi), LoadAt(map, v, r0 + x1));
      const V64 t2 = hn::Mul(hn::Set(d, ty.w_hi * tx.w_lo), LoadAt(map, v, r1 + x0));
      const V64 t3 = hn::Mul(hn::Set(d, ty.w_hi * tx.w_hi), LoadAt(map, v, r1 + x1));
      if (M == PoolMode::kMaxOnnx) {
        raise(t0), raise(t1), raise(t2), raise(t3);
      } else {
        const V64 value = hn::Add(hn::Add(hn::Add(t0, t1), t2), t3);
        if (M == PoolMode::kAvg) acc = hn::Add(acc, value);
        if (M == PoolMode::kMax) raise(value);
      }
    }
  }
  if (grid_h * grid_w == 0) return hn::Zero(d);  // a bin with no samples is 0 in every mode
  if (M == PoolMode::kAvg) return hn::Div(acc, hn::Set(d, static_cast<double>(grid_h * grid_w)));
  return acc;
}

// A bin's x taps are precomputed when it has at most this many columns of samples (the usual grids), else
// computed per sample: the stack holds no more than this.
constexpr int64_t kPrecomputedColumns = 64;

template <PoolMode M>
void RoisOf(const Problem& p, int64_t roi_begin, int64_t roi_end, int64_t c_begin, int64_t c_end) {
  const D64 d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t H = p.height, W = p.width, PH = p.params.pooled_height, PW = p.params.pooled_width;
  const MapStrides map = StridesOf(p.params.layout, p.channels, H, W);
  const MapStrides output = StridesOf(p.params.layout, p.channels, PH, PW);
  const double* const in = static_cast<const double*>(p.input);
  double* const out = static_cast<double*>(p.output);
  AxisTapOf<double> xs[kPrecomputedColumns];
  const bool rotated = p.params.roi_kind == RoiKind::kRotated;
  for (int64_t k = roi_begin; k < roi_end; ++k) {
    const RoiAxesOf<double>& a = p.axes_f64[k];
    const bool precomputed = !rotated && a.gx.grid <= kPrecomputedColumns;
    for (int64_t c = c_begin; c < c_end; c += lanes) {
      ChannelVector in_v, out_v;
      ChannelVectorAt(map, c, std::min(lanes, c_end - c), &in_v);
      ChannelVectorAt(output, c, in_v.count, &out_v);
      for (int64_t pw = 0; pw < PW; ++pw) {
        for (int64_t ix = 0; precomputed && ix < a.gx.grid; ++ix) xs[ix] = TapOf(SamplePosition(a.gx, pw, ix), W);
        for (int64_t ph = 0; ph < PH; ++ph) {
          // Separable taps (x's precomputed for the bin column when they fit), or a rotated sample's own.
          auto taps = [&](int64_t iy, int64_t ix, AxisTapOf<double>* ty, AxisTapOf<double>* tx) HWY_ATTR {
            if (rotated) return RotatedSampleTaps(a, ph, pw, iy, ix, H, W, ty, tx);
            *ty = TapOf(SamplePosition(a.gy, ph, iy), H);
            *tx = precomputed ? xs[ix] : TapOf(SamplePosition(a.gx, pw, ix), W);
          };
          const V64 bin = PoolBin<M>(in, in_v, map, a.batch, a.gy.grid, a.gx.grid, taps);
          StoreAt(bin, out_v, output.Offset(k, 0, ph, pw), out);
        }
      }
    }
  }
}

void RoiAlignF64(const Problem& p, int64_t roi_begin, int64_t roi_end, int64_t c_begin, int64_t c_end) {
  switch (p.params.pool_mode) {
    case PoolMode::kAvg:
      return RoisOf<PoolMode::kAvg>(p, roi_begin, roi_end, c_begin, c_end);
    case PoolMode::kMax:
      return RoisOf<PoolMode::kMax>(p, roi_begin, roi_end, c_begin, c_end);
    case PoolMode::kMaxOnnx:
      return RoisOf<PoolMode::kMaxOnnx>(p, roi_begin, roi_end, c_begin, c_end);
  }
}

// This target's entry point, which the target table (pool_bin.cc) takes.
extern constexpr WholeRoisFn kF64Forward = &RoiAlignF64;

}  // namespace HWY_NAMESPACE
}  // namespace internal
}  // namespace roialign
HWY_AFTER_NAMESPACE();
