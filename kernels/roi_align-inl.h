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

// Accumulates the samples of `s` into U vectors of channels starting at c (U*Lanes channels, the last vector
// holding `tail` valid lanes when tail < Lanes). `acc` carries the state between calls over row ranges: AVG
// keeps sums, MAX/MAX_ONNX running maxima (an outside sample counts as 0 in every mode).
template <PoolMode M, int U, class D>
HWY_INLINE void AccumulateSamples(D d, const ChannelsLast& in, const BinSamples& s, int64_t c, size_t tail,
                                  hn::Vec<D>* acc) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t iy = s.iy_begin; iy < s.iy_end; ++iy) {
    const AxisTap& ty = s.y[iy];
    for (int64_t ix = 0; ix < s.grid_w; ++ix) {
      const AxisTap& tx = s.x[ix];
      if (!ty.valid || !tx.valid) {
        if (M != PoolMode::kAvg) {
          for (int u = 0; u < U; ++u) acc[u] = hn::Max(acc[u], hn::Zero(d));
        }
        continue;
      }
      // The same weight products, in the same order, as the reference.
      const auto w00 = hn::Set(d, ty.w_lo * tx.w_lo), w01 = hn::Set(d, ty.w_lo * tx.w_hi);
      const auto w10 = hn::Set(d, ty.w_hi * tx.w_lo), w11 = hn::Set(d, ty.w_hi * tx.w_hi);
      const float* p00 = in.base + ty.lo * in.row_stride + tx.lo * in.pixel_stride + c;
      const float* p01 = in.base + ty.lo * in.row_stride + tx.hi * in.pixel_stride + c;
      const float* p10 = in.base + ty.hi * in.row_stride + tx.lo * in.pixel_stride + c;
      const float* p11 = in.base + ty.hi * in.row_stride + tx.hi * in.pixel_stride + c;
      for (int u = 0; u < U; ++u) {
        const int64_t o = u * lanes;
        const size_t n = (u == U - 1) ? tail : static_cast<size_t>(lanes);
        const auto v00 = LoadPartial(d, p00 + o, n, in.end), v01 = LoadPartial(d, p01 + o, n, in.end);
        const auto v10 = LoadPartial(d, p10 + o, n, in.end), v11 = LoadPartial(d, p11 + o, n, in.end);
        if (M == PoolMode::kAvg) {
          acc[u] = hn::MulAdd(w00, v00, acc[u]);
          acc[u] = hn::MulAdd(w01, v01, acc[u]);
          acc[u] = hn::MulAdd(w10, v10, acc[u]);
          acc[u] = hn::MulAdd(w11, v11, acc[u]);
        } else if (M == PoolMode::kMax) {
          auto v = hn::Mul(w00, v00);
          v = hn::MulAdd(w01, v01, v);
          v = hn::MulAdd(w10, v10, v);
          v = hn::MulAdd(w11, v11, v);
          acc[u] = hn::Max(acc[u], v);
        } else {
          const auto a = hn::Max(hn::Mul(w00, v00), hn::Mul(w01, v01));
          const auto b = hn::Max(hn::Mul(w10, v10), hn::Mul(w11, v11));
          acc[u] = hn::Max(acc[u], hn::Max(a, b));
        }
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
  constexpr int U = 4;  // independent accumulators: hide FMA latency without spilling on 16-register ISAs
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const bool empty = s.grid_h * s.grid_w == 0;
  const V identity = M == PoolMode::kAvg ? hn::Zero(d) : hn::Set(d, -HUGE_VALF);
  const V count = hn::Set(d, static_cast<float>(s.grid_h * s.grid_w));
  const float* const out_end = out + channels;

  auto finish = [&](V acc) {
    if (empty) return hn::Zero(d);
    return M == PoolMode::kAvg ? hn::Div(acc, count) : acc;
  };
  int64_t c = 0;
  for (; c + U * lanes <= channels; c += U * lanes) {
    V acc[U];
    for (int u = 0; u < U; ++u) acc[u] = first ? identity : hn::LoadU(d, out + c + u * lanes);
    AccumulateSamples<M, U>(d, in, s, c, static_cast<size_t>(lanes), acc);
    for (int u = 0; u < U; ++u) hn::StoreU(last ? finish(acc[u]) : acc[u], d, out + c + u * lanes);
  }
  for (; c < channels; c += lanes) {
    const size_t n = static_cast<size_t>(HWY_MIN(lanes, channels - c));
    V acc[1] = {first ? identity : LoadPartial(d, out + c, n, out_end)};
    AccumulateSamples<M, 1>(d, in, s, c, n, acc);
    StorePartial(d, last ? finish(acc[0]) : acc[0], out + c, n);
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
