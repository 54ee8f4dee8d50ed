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

#include "kernels/merged_taps.h"
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
// and along x (grid_w), plus room for AVG's merged taps (2 * (grid_h + grid_w) entries).
struct BinSamples {
  const AxisTap* y;
  const AxisTap* x;
  int64_t grid_h, grid_w, iy_begin, iy_end;
  MergedTap* merged;
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

// Loads the 4 taps of one vector of channels; `Safe` = every full-vector load stays inside the buffer, checked
// once per sample instead of per load.
template <bool Safe, class D, class V>
HWY_INLINE void LoadTaps(D d, const float* p00, const float* p01, const float* p10, const float* p11, size_t n,
                         const float* end, V& v00, V& v01, V& v10, V& v11) {
  if (Safe) {
    v00 = hn::LoadU(d, p00);
    v01 = hn::LoadU(d, p01);
    v10 = hn::LoadU(d, p10);
    v11 = hn::LoadU(d, p11);
  } else {
    v00 = LoadPartial(d, p00, n, end);
    v01 = LoadPartial(d, p01, n, end);
    v10 = LoadPartial(d, p10, n, end);
    v11 = LoadPartial(d, p11, n, end);
  }
}

// One pooling step of one vector of channels. AVG accumulates the top and bottom tap pairs in two chains
// (lo, hi) so that two FMAs, not four, depend on each other per sample; MAX modes keep the running max in lo.
template <PoolMode M, bool Safe, class D, class V>
HWY_INLINE void PoolStep(D d, V& lo, V& hi, V w00, V w01, V w10, V w11, const float* p00, const float* p01,
                         const float* p10, const float* p11, size_t n, const float* end) {
  V v00, v01, v10, v11;
  LoadTaps<Safe>(d, p00, p01, p10, p11, n, end, v00, v01, v10, v11);
  if (M == PoolMode::kAvg) {
    lo = hn::MulAdd(w00, v00, lo);
    hi = hn::MulAdd(w10, v10, hi);
    lo = hn::MulAdd(w01, v01, lo);
    hi = hn::MulAdd(w11, v11, hi);
  } else if (M == PoolMode::kMax) {
    V v = hn::Mul(w00, v00);
    v = hn::MulAdd(w01, v01, v);
    v = hn::MulAdd(w10, v10, v);
    v = hn::MulAdd(w11, v11, v);
    lo = hn::Max(lo, v);
  } else {
    const V a = hn::Max(hn::Mul(w00, v00), hn::Mul(w01, v01));
    const V b = hn::Max(hn::Mul(w10, v10), hn::Mul(w11, v11));
    lo = hn::Max(lo, hn::Max(a, b));
  }
}

// PoolStep for 4 consecutive full vectors of channels.
template <PoolMode M, bool Safe, class D, class V>
HWY_INLINE void PoolStep4(D d, V& l0, V& l1, V& l2, V& l3, V& h0, V& h1, V& h2, V& h3, V w00, V w01, V w10, V w11, const float* p00, const float* p01,
                          const float* p10, const float* p11, int64_t lanes, const float* end) {
  const size_t n = static_cast<size_t>(lanes);
  PoolStep<M, Safe>(d, l0, h0, w00, w01, w10, w11, p00, p01, p10, p11, n, end);
  PoolStep<M, Safe>(d, l1, h1, w00, w01, w10, w11, p00 + lanes, p01 + lanes, p10 + lanes, p11 + lanes, n, end);
  PoolStep<M, Safe>(d, l2, h2, w00, w01, w10, w11, p00 + 2 * lanes, p01 + 2 * lanes, p10 + 2 * lanes,
                    p11 + 2 * lanes, n, end);
  PoolStep<M, Safe>(d, l3, h3, w00, w01, w10, w11, p00 + 3 * lanes, p01 + 3 * lanes, p10 + 3 * lanes,
                    p11 + 3 * lanes, n, end);
}

// Accumulates the samples of `s` into U (1 or 4) vectors of channels starting at c; the last vector holds
// `tail` valid lanes. The state is in separate vectors (SVE vectors cannot be array elements or struct members):
// AVG keeps sums in two chains (l*, h*), MAX/MAX_ONNX running maxima in l*. An outside sample counts as 0.
template <PoolMode M, int U, class D, class V>
HWY_INLINE void AccumulateSamples(D d, const ChannelsLast& in, const BinSamples& s, int64_t c, size_t tail, V& l0,
                                  V& l1, V& l2, V& l3, V& h0, V& h1, V& h2, V& h3) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t iy = s.iy_begin; iy < s.iy_end; ++iy) {
    const AxisTap& ty = s.y[iy];
    for (int64_t ix = 0; ix < s.grid_w; ++ix) {
      const AxisTap& tx = s.x[ix];
      if (!ty.valid || !tx.valid) {
        if (M != PoolMode::kAvg) {
          l0 = hn::Max(l0, hn::Zero(d));
          if (U > 1) {
            l1 = hn::Max(l1, hn::Zero(d));
            l2 = hn::Max(l2, hn::Zero(d));
            l3 = hn::Max(l3, hn::Zero(d));
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
      // p11 is the highest address: if its last vector fits, every load of this sample does.
      if (U == 1) {
        if (p11 + lanes <= in.end) {
          PoolStep<M, true>(d, l0, h0, w00, w01, w10, w11, p00, p01, p10, p11, tail, in.end);
        } else {
          PoolStep<M, false>(d, l0, h0, w00, w01, w10, w11, p00, p01, p10, p11, tail, in.end);
        }
      } else if (p11 + 4 * lanes <= in.end) {
        PoolStep4<M, true>(d, l0, l1, l2, l3, h0, h1, h2, h3, w00, w01, w10, w11, p00, p01, p10, p11, lanes, in.end);
      } else {
        PoolStep4<M, false>(d, l0, l1, l2, l3, h0, h1, h2, h3, w00, w01, w10, w11, p00, p01, p10, p11, lanes, in.end);
      }
    }
  }
}

// One merged tap (AVG) of U vectors of channels at p into a0..a3.
template <bool Safe, int U, class D, class V>
HWY_INLINE void MergedStep(D d, V w, const float* p, size_t tail, const float* end, V& a0, V& a1, V& a2, V& a3) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const size_t n = U == 1 ? tail : hn::Lanes(d);
  a0 = hn::MulAdd(w, Safe ? hn::LoadU(d, p) : LoadPartial(d, p, n, end), a0);
  if (U > 1) {
    a1 = hn::MulAdd(w, Safe ? hn::LoadU(d, p + lanes) : LoadPartial(d, p + lanes, n, end), a1);
    a2 = hn::MulAdd(w, Safe ? hn::LoadU(d, p + 2 * lanes) : LoadPartial(d, p + 2 * lanes, n, end), a2);
    a3 = hn::MulAdd(w, Safe ? hn::LoadU(d, p + 3 * lanes) : LoadPartial(d, p + 3 * lanes, n, end), a3);
  }
}

// One merged pixel row of a bin (AVG): even columns feed chain l, odd columns chain h, so consecutive taps'
// FMAs are independent.
template <bool Safe, int U, class D, class V>
HWY_INLINE void MergedRow(D d, const float* row, float wy, const MergedTap* cols, int64_t nx, size_t tail,
                          const float* end, V& l0, V& l1, V& l2, V& l3, V& h0, V& h1, V& h2, V& h3) {
  int64_t j = 0;
  for (; j + 1 < nx; j += 2) {
    const V wa = hn::Set(d, wy * cols[j].weight), wb = hn::Set(d, wy * cols[j + 1].weight);
    MergedStep<Safe, U>(d, wa, row + cols[j].offset, tail, end, l0, l1, l2, l3);
    MergedStep<Safe, U>(d, wb, row + cols[j + 1].offset, tail, end, h0, h1, h2, h3);
  }
  if (j < nx) MergedStep<Safe, U>(d, hn::Set(d, wy * cols[j].weight), row + cols[j].offset, tail, end, l0, l1, l2, l3);
}

// AVG of U vectors of channels at c over a bin's merged taps: each distinct pixel is read once. `max_col` is the
// largest column offset, so one check per row covers all of its loads.
template <int U, class D, class V>
HWY_INLINE void AccumulateMerged(D d, const ChannelsLast& in, const MergedTap* rows, int64_t ny, const MergedTap* cols,
                                 int64_t nx, int64_t max_col, int64_t c, size_t tail, V& l0, V& l1, V& l2, V& l3,
                                 V& h0, V& h1, V& h2, V& h3) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t r = 0; r < ny; ++r) {
    const float* row = in.base + rows[r].offset + c;
    if (row + max_col + U * lanes <= in.end) {
      MergedRow<true, U>(d, row, rows[r].weight, cols, nx, tail, in.end, l0, l1, l2, l3, h0, h1, h2, h3);
    } else {
      MergedRow<false, U>(d, row, rows[r].weight, cols, nx, tail, in.end, l0, l1, l2, l3, h0, h1, h2, h3);
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
  // AVG's two chains start at 0; a resumed state sits entirely in the first chain.
  const V h_init = hn::Zero(d);
  auto combine = [&](V l, V h) { return M == PoolMode::kAvg ? hn::Add(l, h) : l; };
  // AVG reads merged taps: the rows of the sample rows processed now, the columns of all sample columns.
  int64_t ny = 0, nx = 0, max_col = 0;
  const MergedTap* rows = s.merged;
  const MergedTap* cols = s.merged;
  if (M == PoolMode::kAvg) {
    ny = MergeTaps(s.y + s.iy_begin, s.iy_end - s.iy_begin, in.row_stride, s.merged);
    nx = MergeTaps(s.x, s.grid_w, in.pixel_stride, s.merged + ny);
    cols = s.merged + ny;
    for (int64_t j = 0; j < nx; ++j) max_col = HWY_MAX(max_col, cols[j].offset);
  }
  int64_t c = 0;
  // Four vectors of channels per pass (8 AVG chains) hide FMA latency without spilling on 16-register ISAs.
  for (; c + 4 * lanes <= channels; c += 4 * lanes) {
    float* o = out + c;
    V l0 = first ? identity : hn::LoadU(d, o), l1 = first ? identity : hn::LoadU(d, o + lanes);
    V l2 = first ? identity : hn::LoadU(d, o + 2 * lanes), l3 = first ? identity : hn::LoadU(d, o + 3 * lanes);
    V h0 = h_init, h1 = h_init, h2 = h_init, h3 = h_init;
    if (M == PoolMode::kAvg) {
      AccumulateMerged<4>(d, in, rows, ny, cols, nx, max_col, c, full, l0, l1, l2, l3, h0, h1, h2, h3);
    } else {
      AccumulateSamples<M, 4>(d, in, s, c, full, l0, l1, l2, l3, h0, h1, h2, h3);
    }
    const V r0 = combine(l0, h0), r1 = combine(l1, h1), r2 = combine(l2, h2), r3 = combine(l3, h3);
    hn::StoreU(last ? finish(r0) : r0, d, o);
    hn::StoreU(last ? finish(r1) : r1, d, o + lanes);
    hn::StoreU(last ? finish(r2) : r2, d, o + 2 * lanes);
    hn::StoreU(last ? finish(r3) : r3, d, o + 3 * lanes);
  }
  for (; c < channels; c += lanes) {
    const size_t n = static_cast<size_t>(HWY_MIN(lanes, channels - c));
    V l0 = first ? identity : LoadPartial(d, out + c, n, out_end);
    V h0 = h_init, unused = h_init;
    if (M == PoolMode::kAvg) {
      AccumulateMerged<1>(d, in, rows, ny, cols, nx, max_col, c, n, l0, unused, unused, unused, h0, unused, unused,
                          unused);
    } else {
      AccumulateSamples<M, 1>(d, in, s, c, n, l0, unused, unused, unused, h0, unused, unused, unused);
    }
    const V r = combine(l0, h0);
    StorePartial(d, last ? finish(r) : r, out + c, n);
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
