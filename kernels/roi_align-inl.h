// Per-target core shared by both layouts: pools one bin over channels-last data, vectorized over channels.
// Included once per Highway target (toggle guard), by roi_align_nhwc.cc and roi_align_nchw.cc.
#if defined(ROIALIGN_KERNELS_ROI_ALIGN_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ROIALIGN_KERNELS_ROI_ALIGN_INL_H_
#undef ROIALIGN_KERNELS_ROI_ALIGN_INL_H_
#else
#define ROIALIGN_KERNELS_ROI_ALIGN_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>
#include <cstring>

#include "kernels/roi_geometry.h"

HWY_BEFORE_NAMESPACE();
namespace roialign {
namespace internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Channels-last data: element (row, col, c) is at base[row * row_stride + col * pixel_stride + c], and no
// element at or past `end` may be read.
struct ChannelsLast {
  const float* base;
  const float* end;
  int64_t row_stride, pixel_stride;
};

// The samples of one bin: taps along y (grid_h of them, of which rows [iy_begin, iy_end) are processed now)
// and along x (grid_w).
struct BinSamples {
  const AxisTap* y;
  const AxisTap* x;
  int64_t grid_h, grid_w, iy_begin, iy_end;
};

// Loads `n` <= Lanes(d) floats at p: a full vector when that stays inside the buffer (extra lanes are ignored by
// the caller), else through a zero-padded copy, so that the last pixel is never over-read.
template <class D>
HWY_INLINE hn::Vec<D> LoadPartial(D d, const float* p, size_t n, const float* end) {
  const size_t lanes = hn::Lanes(d);
  if (p + lanes <= end) return hn::LoadU(d, p);
  HWY_ALIGN float buf[hn::MaxLanes(d)] = {};
  std::memcpy(buf, p, n * sizeof(float));
  return hn::Load(d, buf);
}

// Stores the first n lanes of v at p without touching p[n..]: other threads may own those elements.
template <class D>
HWY_INLINE void StorePartial(D d, hn::Vec<D> v, float* p, size_t n) {
  HWY_ALIGN float buf[hn::MaxLanes(d)];
  hn::Store(v, d, buf);
  std::memcpy(p, buf, n * sizeof(float));
}

// One pooling step for vector u of a sample: the 4 taps at p00..p11 (+ o) with weights w00..w11.
template <PoolMode M, class D, class V>
HWY_INLINE V PoolStep(D d, V acc, V w00, V w01, V w10, V w11, const float* p00, const float* p01, const float* p10,
                      const float* p11, size_t n, const float* end) {
  const V v00 = LoadPartial(d, p00, n, end), v01 = LoadPartial(d, p01, n, end);
  const V v10 = LoadPartial(d, p10, n, end), v11 = LoadPartial(d, p11, n, end);
  if (M == PoolMode::kAvg) {
    acc = hn::MulAdd(w00, v00, acc);
    acc = hn::MulAdd(w01, v01, acc);
    acc = hn::MulAdd(w10, v10, acc);
    return hn::MulAdd(w11, v11, acc);
  }
  if (M == PoolMode::kMax) {
    V v = hn::Mul(w00, v00);
    v = hn::MulAdd(w01, v01, v);
    v = hn::MulAdd(w10, v10, v);
    v = hn::MulAdd(w11, v11, v);
    return hn::Max(acc, v);
  }
  const V a = hn::Max(hn::Mul(w00, v00), hn::Mul(w01, v01));
  const V b = hn::Max(hn::Mul(w10, v10), hn::Mul(w11, v11));
  return hn::Max(acc, hn::Max(a, b));
}

// Accumulates the samples of `s` into U (1 or 4) vectors of channels starting at c, held in a0..a3 (SVE
// vectors cannot be array elements); the last vector holds `tail` valid lanes. The accumulators carry the state
// between calls over row ranges: AVG keeps sums, MAX/MAX_ONNX running maxima (an outside sample counts as 0).
template <PoolMode M, int U, class D, class V>
HWY_INLINE void AccumulateSamples(D d, const ChannelsLast& in, const BinSamples& s, int64_t c, size_t tail, V& a0,
                                  V& a1, V& a2, V& a3) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const size_t full = static_cast<size_t>(lanes);
  for (int64_t iy = s.iy_begin; iy < s.iy_end; ++iy) {
    const AxisTap& ty = s.y[iy];
    for (int64_t ix = 0; ix < s.grid_w; ++ix) {
      const AxisTap& tx = s.x[ix];
      if (!ty.valid || !tx.valid) {
        if (M != PoolMode::kAvg) {
          a0 = hn::Max(a0, hn::Zero(d));
          if (U > 1) {
            a1 = hn::Max(a1, hn::Zero(d));
            a2 = hn::Max(a2, hn::Zero(d));
            a3 = hn::Max(a3, hn::Zero(d));
          }
        }
        continue;
      }
      // The same weight products, in the same order, as the reference.
      const V w00 = hn::Set(d, ty.w_lo * tx.w_lo), w01 = hn::Set(d, ty.w_lo * tx.w_hi);
      const V w10 = hn::Set(d, ty.w_hi * tx.w_lo), w11 = hn::Set(d, ty.w_hi * tx.w_hi);
      const float* p00 = in.base + ty.lo * in.row_stride + tx.lo * in.pixel_stride + c;
      const float* p01 = in.base + ty.lo * in.row_stride + tx.hi * in.pixel_stride + c;
      const float* p10 = in.base + ty.hi * in.row_stride + tx.lo * in.pixel_stride + c;
      const float* p11 = in.base + ty.hi * in.row_stride + tx.hi * in.pixel_stride + c;
      if (U == 1) {
        a0 = PoolStep<M>(d, a0, w00, w01, w10, w11, p00, p01, p10, p11, tail, in.end);
      } else {
        a0 = PoolStep<M>(d, a0, w00, w01, w10, w11, p00, p01, p10, p11, full, in.end);
        a1 = PoolStep<M>(d, a1, w00, w01, w10, w11, p00 + lanes, p01 + lanes, p10 + lanes, p11 + lanes, full, in.end);
        a2 = PoolStep<M>(d, a2, w00, w01, w10, w11, p00 + 2 * lanes, p01 + 2 * lanes, p10 + 2 * lanes,
                         p11 + 2 * lanes, full, in.end);
        a3 = PoolStep<M>(d, a3, w00, w01, w10, w11, p00 + 3 * lanes, p01 + 3 * lanes, p10 + 3 * lanes,
                         p11 + 3 * lanes, tail, in.end);
      }
    }
  }
}

// Pools channels [0, channels) of one bin into out[0, channels). `first`: start from the mode's identity, else
// resume from the partial state in `out`; `last`: finish (divide by the count) — a bin may be processed in
// several calls over sample-row ranges with the exact same arithmetic as one call.
template <PoolMode M, class D>
HWY_NOINLINE void PoolBin(D d, const ChannelsLast& in, const BinSamples& s, int64_t channels, bool first, bool last,
                          float* out) {
  using V = hn::Vec<D>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const size_t full = static_cast<size_t>(lanes);
  const bool empty = s.grid_h * s.grid_w == 0;
  const V identity = M == PoolMode::kAvg ? hn::Zero(d) : hn::Set(d, -HUGE_VALF);
  const V count = hn::Set(d, static_cast<float>(s.grid_h * s.grid_w));
  const float* const out_end = out + channels;

  auto finish = [&](V acc) {
    if (empty) return hn::Zero(d);
    return M == PoolMode::kAvg ? hn::Div(acc, count) : acc;
  };
  int64_t c = 0;
  // Four independent accumulators hide FMA latency without spilling on 16-register ISAs.
  for (; c + 4 * lanes <= channels; c += 4 * lanes) {
    float* o = out + c;
    V a0 = first ? identity : hn::LoadU(d, o), a1 = first ? identity : hn::LoadU(d, o + lanes);
    V a2 = first ? identity : hn::LoadU(d, o + 2 * lanes), a3 = first ? identity : hn::LoadU(d, o + 3 * lanes);
    AccumulateSamples<M, 4>(d, in, s, c, full, a0, a1, a2, a3);
    hn::StoreU(last ? finish(a0) : a0, d, o);
    hn::StoreU(last ? finish(a1) : a1, d, o + lanes);
    hn::StoreU(last ? finish(a2) : a2, d, o + 2 * lanes);
    hn::StoreU(last ? finish(a3) : a3, d, o + 3 * lanes);
  }
  for (; c < channels; c += lanes) {
    const size_t n = static_cast<size_t>(HWY_MIN(lanes, channels - c));
    V a0 = first ? identity : LoadPartial(d, out + c, n, out_end);
    V unused = a0;
    AccumulateSamples<M, 1>(d, in, s, c, n, a0, unused, unused, unused);
    StorePartial(d, last ? finish(a0) : a0, out + c, n);
  }
}

// PoolBin for a run-time pool mode.
template <class D>
HWY_INLINE void PoolBinAnyMode(D d, PoolMode mode, const ChannelsLast& in, const BinSamples& s, int64_t channels,
                               bool first, bool last, float* out) {
  switch (mode) {
    case PoolMode::kMax:
      return PoolBin<PoolMode::kMax>(d, in, s, channels, first, last, out);
    case PoolMode::kMaxOnnx:
      return PoolBin<PoolMode::kMaxOnnx>(d, in, s, channels, first, last, out);
    case PoolMode::kAvg:
    default:
      return PoolBin<PoolMode::kAvg>(d, in, s, channels, first, last, out);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace internal
}  // namespace roialign
HWY_AFTER_NAMESPACE();

#endif  // ROIALIGN_KERNELS_ROI_ALIGN_INL_H_
