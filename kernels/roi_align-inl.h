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
#include <type_traits>

#include "kernels/convert-inl.h"
#include "kernels/merged_taps.h"
#include "kernels/roi_geometry.h"

HWY_BEFORE_NAMESPACE();
namespace roialign {
namespace internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// A kernel file's PerDType entries for this target, from its kernel template FN. The portable fallback (EMU128,
// SCALAR) serves f32 only, a strategy decision (docs/semantics.md#dtypes): it is the correctness fallback for CPUs
// without a SIMD target, and the generic reference serves the 16-bit dtypes on every CPU.
#undef ROIALIGN_PER_DTYPE
#if HWY_TARGET == HWY_EMU128 || HWY_TARGET == HWY_SCALAR
#define ROIALIGN_PER_DTYPE(FN) {&FN<float>, nullptr, nullptr}
#else
#define ROIALIGN_PER_DTYPE(FN) {&FN<float>, &FN<hwy::float16_t>, &FN<hwy::bfloat16_t>}
#endif

// Channels-last data of element type T: element (row, col, c) is at base[row * row_stride + col * pixel_stride
// + c], and no element at or past `end` may be read.
template <typename T>
struct ChannelsLast {
  const T* base;
  const T* end;
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

// Where a bin's channels go: `partial` (f32) holds the state between calls that process parts of its sample
// rows, `out` receives the finished result in the output's element type. They may be the same memory.
template <typename TOut>
struct BinOutput {
  float* partial;
  TOut* out;
};

// Loads `n` <= Lanes(d) elements at p: a full vector when that stays inside the buffer (extra lanes are ignored
// by the caller), else through a zero-padded copy, so that the last pixel is never over-read.
template <class D, typename T>
HWY_INLINE hn::Vec<D> LoadPartial(D d, const T* p, size_t n, const T* end) {
  const size_t lanes = hn::Lanes(d);
  if (p + lanes <= end) return LoadWide(d, p);
  HWY_ALIGN T buf[hn::MaxLanes(d)] = {};
  std::memcpy(buf, p, n * sizeof(T));
  return LoadWide(d, static_cast<const T*>(buf));
}

// Stores the first n lanes of v at p without touching p[n..]: other threads may own those elements.
template <class D, typename T>
HWY_INLINE void StorePartial(D d, hn::Vec<D> v, T* p, size_t n) {
  HWY_ALIGN T buf[hn::MaxLanes(d)];
  StoreNarrow(d, v, buf);
  std::memcpy(p, buf, n * sizeof(T));
}

// Whether p is aligned for hn::Stream.
template <class D, typename T>
HWY_INLINE bool IsVectorAligned(D d, const T* p) {
  return reinterpret_cast<uintptr_t>(p) % (hn::Lanes(d) * sizeof(T)) == 0;
}

// Stores a finished vector in the output's element type: a non-temporal store when `stream` (p is then
// vector-aligned), which writes the line without first reading it from memory and keeps the map in cache; else
// an ordinary store.
template <class D, class V, typename TOut>
HWY_INLINE void Put(D d, V v, TOut* p, bool stream) {
  if (stream) {
    StreamNarrow(d, v, p);
  } else {
    StoreNarrow(d, v, p);
  }
}

// Loads the 4 taps of one vector of channels; `Safe` = every full-vector load stays inside the buffer, checked
// once per sample instead of per load.
template <bool Safe, class D, class V, typename T>
HWY_INLINE void LoadTaps(D d, const T* p00, const T* p01, const T* p10, const T* p11, size_t n, const T* end,
                         V& v00, V& v01, V& v10, V& v11) {
  if (Safe) {
    v00 = LoadWide(d, p00);
    v01 = LoadWide(d, p01);
    v10 = LoadWide(d, p10);
    v11 = LoadWide(d, p11);
  } else {
    v00 = LoadPartial(d, p00, n, end);
    v01 = LoadPartial(d, p01, n, end);
    v10 = LoadPartial(d, p10, n, end);
    v11 = LoadPartial(d, p11, n, end);
  }
}

// The running maximum `acc` (never NaN) raised to v where acc < v: a NaN v never wins, as in the reference's
// std::max(acc, v) (and torchvision's `if (v > max)`). hn::Max cannot be used: which operand it returns for a
// NaN differs between x86 and ARM.
template <class V>
HWY_INLINE V RaiseTo(V acc, V v) {
  return hn::IfThenElse(hn::Lt(acc, v), v, acc);
}

// The larger of x and y where a NaN loses to any number (both NaN: NaN), so that a tree of these over a sample's
// taps, raised into acc, gives the reference's sequential std::max({acc, t0, t1, t2, t3}).
template <class V>
HWY_INLINE V LargerNumber(V x, V y) {
  return hn::IfThenElse(hn::Or(hn::Lt(x, y), hn::IsNaN(x)), y, x);
}

// One sample's step of one vector of channels for the MAX modes: the running maximum is in acc. A weight of 0
// on an infinite pixel makes the sample (MAX) or the tap (MAX_ONNX) NaN, which then does not count.
template <PoolMode M, bool Safe, class D, class V, typename T>
HWY_INLINE void MaxStep(D d, V& acc, V w00, V w01, V w10, V w11, const T* p00, const T* p01, const T* p10,
                        const T* p11, size_t n, const T* end) {
  V v00, v01, v10, v11;
  LoadTaps<Safe>(d, p00, p01, p10, p11, n, end, v00, v01, v10, v11);
  static_assert(M == PoolMode::kMax || M == PoolMode::kMaxOnnx, "the MAX modes only");
  if (M == PoolMode::kMax) {
    V v = hn::Mul(w00, v00);
    v = hn::MulAdd(w01, v01, v);
    v = hn::MulAdd(w10, v10, v);
    v = hn::MulAdd(w11, v11, v);
    acc = RaiseTo(acc, v);
  } else {
    const V a = LargerNumber(hn::Mul(w00, v00), hn::Mul(w01, v01));
    const V b = LargerNumber(hn::Mul(w10, v10), hn::Mul(w11, v11));
    acc = RaiseTo(acc, LargerNumber(a, b));
  }
}

// Folds every sample of `s` into the running maxima of U (1 or 4) vectors of channels starting at c; the last
// vector holds `tail` valid lanes. The state is in separate vectors (SVE vectors cannot be array elements or
// struct members). An outside sample counts as 0.
template <PoolMode M, int U, class D, class V, typename T>
HWY_INLINE void MaxSamples(D d, const ChannelsLast<T>& in, const BinSamples& s, int64_t c, size_t tail, V& a0, V& a1,
                           V& a2, V& a3) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t iy = s.iy_begin; iy < s.iy_end; ++iy) {
    const AxisTap& ty = s.y[iy];
    for (int64_t ix = 0; ix < s.grid_w; ++ix) {
      const AxisTap& tx = s.x[ix];
      if (!ty.valid || !tx.valid) {
        a0 = RaiseTo(a0, hn::Zero(d));
        if (U > 1) {
          a1 = RaiseTo(a1, hn::Zero(d));
          a2 = RaiseTo(a2, hn::Zero(d));
          a3 = RaiseTo(a3, hn::Zero(d));
        }
        continue;
      }
      // The same weight products as the reference.
      const V w00 = hn::Set(d, ty.w_lo * tx.w_lo), w01 = hn::Set(d, ty.w_lo * tx.w_hi);
      const V w10 = hn::Set(d, ty.w_hi * tx.w_lo), w11 = hn::Set(d, ty.w_hi * tx.w_hi);
      const T* p00 = in.base + ty.lo * in.row_stride + tx.lo * in.pixel_stride + c;
      const T* p01 = in.base + ty.lo * in.row_stride + tx.hi * in.pixel_stride + c;
      const T* p10 = in.base + ty.hi * in.row_stride + tx.lo * in.pixel_stride + c;
      const T* p11 = in.base + ty.hi * in.row_stride + tx.hi * in.pixel_stride + c;
      // p11 is the highest address: if its last vector fits, every load of this sample does.
      if (U == 1) {
        if (p11 + lanes <= in.end) {
          MaxStep<M, true>(d, a0, w00, w01, w10, w11, p00, p01, p10, p11, tail, in.end);
        } else {
          MaxStep<M, false>(d, a0, w00, w01, w10, w11, p00, p01, p10, p11, tail, in.end);
        }
        continue;
      }
      const size_t n = static_cast<size_t>(lanes);
      const int64_t o1 = lanes, o2 = 2 * lanes, o3 = 3 * lanes;
      if (p11 + 4 * lanes <= in.end) {
        MaxStep<M, true>(d, a0, w00, w01, w10, w11, p00, p01, p10, p11, n, in.end);
        MaxStep<M, true>(d, a1, w00, w01, w10, w11, p00 + o1, p01 + o1, p10 + o1, p11 + o1, n, in.end);
        MaxStep<M, true>(d, a2, w00, w01, w10, w11, p00 + o2, p01 + o2, p10 + o2, p11 + o2, n, in.end);
        MaxStep<M, true>(d, a3, w00, w01, w10, w11, p00 + o3, p01 + o3, p10 + o3, p11 + o3, n, in.end);
      } else {
        MaxStep<M, false>(d, a0, w00, w01, w10, w11, p00, p01, p10, p11, n, in.end);
        MaxStep<M, false>(d, a1, w00, w01, w10, w11, p00 + o1, p01 + o1, p10 + o1, p11 + o1, n, in.end);
        MaxStep<M, false>(d, a2, w00, w01, w10, w11, p00 + o2, p01 + o2, p10 + o2, p11 + o2, n, in.end);
        MaxStep<M, false>(d, a3, w00, w01, w10, w11, p00 + o3, p01 + o3, p10 + o3, p11 + o3, n, in.end);
      }
    }
  }
}

// BF16 in AVG's eight-vector passes, the hot loop: each 32-bit lane of a vector of patterns holds channels 2i
// (lower half) and 2i + 1 (upper half), so a shift and a mask widen 2 * Lanes channels into their even and odd
// channels, one operation per f32 vector instead of a lane-crossing zero extension plus a shift. The pass's
// accumulators then hold (even, odd) pairs; every channel still sees the same chain of operations. Callgrind on
// the default NHWC workload: 316 M instructions before, against 185 M for f32.
template <typename T, int U>
constexpr bool kPairedBF16 = std::is_same<T, hwy::bfloat16_t>::value && U == 8;

// Loads U (8, 4 or 1) vectors of channels at p and adds w times each to its own accumulator (AVG); paired BF16:
// the even and odd channels of 4 vectors of patterns into (a0, a1), ..., (a6, a7).
template <bool Safe, int U, class D, class V, typename T>
HWY_INLINE void MergedStep(D d, V w, const T* p, size_t tail, const T* end, V& a0, V& a1, V& a2, V& a3,
                           V& a4, V& a5, V& a6, V& a7) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  if constexpr (kPairedBF16<T, U>) {
    // Eight full vectors of a pixel's channels never reach past the end of the data (only tails can), so these
    // loads need no bounds check.
    const hn::RebindToUnsigned<D> du;
    const auto upper = hn::Set(du, 0xFFFF0000u);
    auto pair = [&](int64_t k, V& even, V& odd) {
      const auto u = hn::LoadU(du, reinterpret_cast<const uint32_t*>(p + 2 * k * lanes));
      even = hn::MulAdd(w, hn::BitCast(d, hn::ShiftLeft<16>(u)), even);
      odd = hn::MulAdd(w, hn::BitCast(d, hn::And(u, upper)), odd);
    };
    pair(0, a0, a1);
    pair(1, a2, a3);
    pair(2, a4, a5);
    pair(3, a6, a7);
    (void)tail;
    (void)end;
    return;
  }
  const size_t n = U == 1 ? tail : hn::Lanes(d);
  auto load = [&](int64_t i) { return Safe ? LoadWide(d, p + i * lanes) : LoadPartial(d, p + i * lanes, n, end); };
  a0 = hn::MulAdd(w, load(0), a0);
  if (U >= 4) {
    a1 = hn::MulAdd(w, load(1), a1);
    a2 = hn::MulAdd(w, load(2), a2);
    a3 = hn::MulAdd(w, load(3), a3);
  }
  if (U == 8) {
    a4 = hn::MulAdd(w, load(4), a4);
    a5 = hn::MulAdd(w, load(5), a5);
    a6 = hn::MulAdd(w, load(6), a6);
    a7 = hn::MulAdd(w, load(7), a7);
  }
}

// AVG of U vectors of channels at c over a bin's merged taps (merged_taps.h): each distinct pixel is read once,
// in row-major order, into one chain per vector, so every channel sees the same arithmetic whichever U handles
// it (results do not depend on how threads split channels). `max_col` is the largest column offset: one bounds
// check per row covers all of its loads.
template <int U, class D, class V, typename T>
HWY_INLINE void AccumulateMerged(D d, const ChannelsLast<T>& in, const MergedTap* rows, int64_t ny, const MergedTap* cols,
                                 int64_t nx, int64_t max_col, int64_t c, size_t tail, V& a0, V& a1, V& a2, V& a3,
                                 V& a4, V& a5, V& a6, V& a7) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t r = 0; r < ny; ++r) {
    const T* row = in.base + rows[r].offset + c;
    const float wy = rows[r].weight;
    if (row + max_col + U * lanes <= in.end) {
      for (int64_t j = 0; j < nx; ++j) {
        MergedStep<true, U>(d, hn::Set(d, wy * cols[j].weight), row + cols[j].offset, tail, in.end, a0, a1, a2, a3,
                            a4, a5, a6, a7);
      }
    } else {
      for (int64_t j = 0; j < nx; ++j) {
        MergedStep<false, U>(d, hn::Set(d, wy * cols[j].weight), row + cols[j].offset, tail, in.end, a0, a1, a2,
                             a3, a4, a5, a6, a7);
      }
    }
  }
}

// Writes U vectors of one bin's channels at c: into `out` (in its element type) when the bin is finished, else
// its partial state into `partial`.
template <class D, class V, typename TOut>
HWY_INLINE void WriteVector(D d, V v, float* partial, TOut* out, bool last, bool streaming) {
  if constexpr (std::is_same_v<TOut, float>) {
    // One store either way (streaming implies last): no second branch per vector.
    Put(d, v, last ? out : partial, streaming);
  } else if (last) {
    Put(d, v, out, streaming);
  } else {
    hn::StoreU(v, d, partial);
  }
}

// AVG of channels [0, channels) of one bin, with PoolBinMax's first/last protocol. Eight vectors per pass: eight
// independent FMA chains cover the FMA latency and halve the passes (and the per-tap weight broadcasts) of four;
// 8 accumulators + weight + load fit 16-register ISAs.
template <class D, typename TIn, typename TOut>
HWY_NOINLINE void PoolBinAvg(D d, const ChannelsLast<TIn>& in, const BinSamples& s, int64_t channels, bool first,
                             bool last, bool stream, BinOutput<TOut> o) {
  using V = hn::Vec<D>;
  // Locals, not o's fields: the compiler cannot assume stores through them leave o alone.
  float* const partial = o.partial;
  TOut* const out = o.out;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const size_t full = static_cast<size_t>(lanes);
  const int64_t samples = s.grid_h * s.grid_w;
  const bool empty = samples == 0;
  const V count = hn::Set(d, static_cast<float>(samples));
  // Dividing by 2^k and multiplying by 2^-k round the same exact quotient once, so they give the same bits; a
  // power-of-two count (every 2x2 or 4x4 grid) multiplies, as a vector division's throughput is an order of
  // magnitude lower and a bin finishes up to 16 vectors of it.
  const bool count_is_power_of_two = !empty && (samples & (samples - 1)) == 0;
  const V reciprocal = hn::Set(d, 1.0f / static_cast<float>(HWY_MAX(samples, 1)));
  const float* const partial_end = partial + channels;
  // The rows of the sample rows processed now; the columns of all sample columns.
  const int64_t ny = MergeTaps(s.y + s.iy_begin, s.iy_end - s.iy_begin, in.row_stride, s.merged);
  const MergedTap* const rows = s.merged;
  const MergedTap* const cols = s.merged + ny;
  const int64_t nx = MergeTaps(s.x, s.grid_w, in.pixel_stride, s.merged + ny);
  int64_t max_col = 0;
  for (int64_t j = 0; j < nx; ++j) max_col = HWY_MAX(max_col, cols[j].offset);
  auto start = [&](int64_t c) { return first ? hn::Zero(d) : hn::LoadU(d, partial + c); };
  auto finish = [&](V acc) {
    if (!last) return acc;
    if (empty) return hn::Zero(d);
    return count_is_power_of_two ? hn::Mul(acc, reciprocal) : hn::Div(acc, count);
  };
  const bool streaming = last && stream && IsVectorAligned(d, out);
  // Paired BF16 (kPairedBF16): the partial state stays in natural order, de-interleaved on the way in and
  // interleaved on the way out.
  auto start_pair = [&](int64_t c, V& even, V& odd) {
    if (first) {
      even = odd = hn::Zero(d);
    } else {
      hn::LoadInterleaved2(d, partial + c, even, odd);
    }
  };
  const bool streaming_pairs = last && stream && IsVectorAligned(d, reinterpret_cast<const float*>(out));
  auto write_pair = [&](auto even, auto odd, int64_t c) {  // generic: instantiated for paired BF16 only
    if (last) {
      PutPair(d, finish(even), finish(odd), out + c, streaming_pairs);
    } else {
      hn::StoreInterleaved2(even, odd, d, partial + c);
    }
  };
  int64_t c = 0;
  for (; c + 8 * lanes <= channels; c += 8 * lanes) {
    V a0, a1, a2, a3, a4, a5, a6, a7;
    if constexpr (kPairedBF16<TIn, 8>) {
      start_pair(c, a0, a1);
      start_pair(c + 2 * lanes, a2, a3);
      start_pair(c + 4 * lanes, a4, a5);
      start_pair(c + 6 * lanes, a6, a7);
    } else {
      a0 = start(c), a1 = start(c + lanes), a2 = start(c + 2 * lanes), a3 = start(c + 3 * lanes);
      a4 = start(c + 4 * lanes), a5 = start(c + 5 * lanes), a6 = start(c + 6 * lanes), a7 = start(c + 7 * lanes);
    }
    AccumulateMerged<8>(d, in, rows, ny, cols, nx, max_col, c, full, a0, a1, a2, a3, a4, a5, a6, a7);
    if constexpr (kPairedBF16<TIn, 8>) {
      write_pair(a0, a1, c);
      write_pair(a2, a3, c + 2 * lanes);
      write_pair(a4, a5, c + 4 * lanes);
      write_pair(a6, a7, c + 6 * lanes);
    } else {
      float* const pc = partial + c;
      TOut* const oc = out + c;
      WriteVector(d, finish(a0), pc, oc, last, streaming);
      WriteVector(d, finish(a1), pc + lanes, oc + lanes, last, streaming);
      WriteVector(d, finish(a2), pc + 2 * lanes, oc + 2 * lanes, last, streaming);
      WriteVector(d, finish(a3), pc + 3 * lanes, oc + 3 * lanes, last, streaming);
      WriteVector(d, finish(a4), pc + 4 * lanes, oc + 4 * lanes, last, streaming);
      WriteVector(d, finish(a5), pc + 5 * lanes, oc + 5 * lanes, last, streaming);
      WriteVector(d, finish(a6), pc + 6 * lanes, oc + 6 * lanes, last, streaming);
      WriteVector(d, finish(a7), pc + 7 * lanes, oc + 7 * lanes, last, streaming);
    }
  }
  for (; c + 4 * lanes <= channels; c += 4 * lanes) {
    V a0 = start(c), a1 = start(c + lanes), a2 = start(c + 2 * lanes), a3 = start(c + 3 * lanes), unused = a0;
    AccumulateMerged<4>(d, in, rows, ny, cols, nx, max_col, c, full, a0, a1, a2, a3, unused, unused, unused, unused);
    float* const pc = partial + c;
    TOut* const oc = out + c;
    WriteVector(d, finish(a0), pc, oc, last, streaming);
    WriteVector(d, finish(a1), pc + lanes, oc + lanes, last, streaming);
    WriteVector(d, finish(a2), pc + 2 * lanes, oc + 2 * lanes, last, streaming);
    WriteVector(d, finish(a3), pc + 3 * lanes, oc + 3 * lanes, last, streaming);
  }
  for (; c < channels; c += lanes) {
    const size_t n = static_cast<size_t>(HWY_MIN(lanes, channels - c));
    V a0 = first ? hn::Zero(d) : LoadPartial(d, partial + c, n, partial_end), unused = a0;
    AccumulateMerged<1>(d, in, rows, ny, cols, nx, max_col, c, n, a0, unused, unused, unused, unused, unused, unused,
                        unused);
    if (last) {
      StorePartial(d, finish(a0), out + c, n);
    } else {
      StorePartial(d, a0, partial + c, n);
    }
  }
}

// MAX or MAX_ONNX of channels [0, channels) of one bin. `first`: start from -inf, else resume from the partial
// state in o.partial; `last`: finish into o.out (a bin without samples is 0), else leave the partial state. A
// bin may be processed in several calls over sample-row ranges with the exact same result as one call. Four
// vectors per pass hide the max latency without spilling on 16-register ISAs.
template <PoolMode M, class D, typename TIn, typename TOut>
HWY_NOINLINE void PoolBinMax(D d, const ChannelsLast<TIn>& in, const BinSamples& s, int64_t channels, bool first,
                             bool last, bool stream, BinOutput<TOut> o) {
  using V = hn::Vec<D>;
  float* const partial = o.partial;  // locals, as in PoolBinAvg
  TOut* const out = o.out;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const size_t full = static_cast<size_t>(lanes);
  const bool empty = s.grid_h * s.grid_w == 0;
  const float* const partial_end = partial + channels;
  auto start = [&](int64_t c) { return first ? hn::Set(d, -HUGE_VALF) : hn::LoadU(d, partial + c); };
  auto finish = [&](V acc) { return last && empty ? hn::Zero(d) : acc; };
  const bool streaming = last && stream && IsVectorAligned(d, out);
  int64_t c = 0;
  for (; c + 4 * lanes <= channels; c += 4 * lanes) {
    V a0 = start(c), a1 = start(c + lanes), a2 = start(c + 2 * lanes), a3 = start(c + 3 * lanes);
    MaxSamples<M, 4>(d, in, s, c, full, a0, a1, a2, a3);
    float* const pc = partial + c;
    TOut* const oc = out + c;
    WriteVector(d, finish(a0), pc, oc, last, streaming);
    WriteVector(d, finish(a1), pc + lanes, oc + lanes, last, streaming);
    WriteVector(d, finish(a2), pc + 2 * lanes, oc + 2 * lanes, last, streaming);
    WriteVector(d, finish(a3), pc + 3 * lanes, oc + 3 * lanes, last, streaming);
  }
  for (; c < channels; c += lanes) {
    const size_t n = static_cast<size_t>(HWY_MIN(lanes, channels - c));
    V a0 = first ? hn::Set(d, -HUGE_VALF) : LoadPartial(d, partial + c, n, partial_end), unused = a0;
    MaxSamples<M, 1>(d, in, s, c, n, a0, unused, unused, unused);
    if (last) {
      StorePartial(d, finish(a0), out + c, n);
    } else {
      StorePartial(d, a0, partial + c, n);
    }
  }
}

// PoolBin for a run-time pool mode.
// `stream`: finished full vectors may bypass the cache (the output is too large to stay there; the caller
// calls hwy::FlushStream before the output is read).
template <class D, typename TIn, typename TOut>
HWY_INLINE void PoolBinAnyMode(D d, PoolMode mode, const ChannelsLast<TIn>& in, const BinSamples& s,
                               int64_t channels, bool first, bool last, bool stream, BinOutput<TOut> o) {
  switch (mode) {
    case PoolMode::kAvg:
      return PoolBinAvg(d, in, s, channels, first, last, stream, o);
    case PoolMode::kMax:
      return PoolBinMax<PoolMode::kMax>(d, in, s, channels, first, last, stream, o);
    case PoolMode::kMaxOnnx:
      return PoolBinMax<PoolMode::kMaxOnnx>(d, in, s, channels, first, last, stream, o);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace internal
}  // namespace roialign
HWY_AFTER_NAMESPACE();

#endif  // ROIALIGN_KERNELS_ROI_ALIGN_INL_H_
