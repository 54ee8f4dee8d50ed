// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The bin microkernel, per target: pools one bin over a run of contiguous channels, vectorized over channels.
// Included once per Highway target (toggle guard) by kernels/pool_bin.cc.
#if defined(ROIALIGN_KERNELS_POOL_BIN_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ROIALIGN_KERNELS_POOL_BIN_INL_H_
#undef ROIALIGN_KERNELS_POOL_BIN_INL_H_
#else
#define ROIALIGN_KERNELS_POOL_BIN_INL_H_
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

// Where channel x of a run lies, for loads (In) and for the partial state and output (Out). Contiguous: at x.
// Blocked<R> (NCHW4c/8c/16c maps read in place): in blocks of R vectors' channels, consecutive blocks in_stride
// (map) and out_stride (output) elements apart. InAt/OutAt(d, c, k): vector k of a pass at channel c, which
// starts a block (4 vectors span whole blocks, R <= 4), so the vectors' offsets are constants times the strides.
struct Contiguous {
  static constexpr bool kBlocked = false;
  static constexpr int kVectorsPerBlock = 1;
  template <class D>
  int64_t In(D, int64_t x) const { return x; }
  template <class D>
  int64_t Out(D, int64_t x) const { return x; }
  template <class D>
  int64_t InAt(D d, int64_t c, int k) const { return c + k * static_cast<int64_t>(hn::Lanes(d)); }
  template <class D>
  int64_t OutAt(D d, int64_t c, int k) const { return c + k * static_cast<int64_t>(hn::Lanes(d)); }
};
template <int R>
struct Blocked {
  static constexpr bool kBlocked = true;
  static constexpr int kVectorsPerBlock = R;
  int64_t in_stride, out_stride;
  template <class D>
  static int64_t Block(D d) { return R * static_cast<int64_t>(hn::Lanes(d)); }
  template <class D>
  int64_t In(D d, int64_t x) const { return x / Block(d) * in_stride + x % Block(d); }
  template <class D>
  int64_t Out(D d, int64_t x) const { return x / Block(d) * out_stride + x % Block(d); }
  template <class D>
  int64_t InAt(D d, int64_t c, int k) const {
    return c / Block(d) * in_stride + k / R * in_stride + k % R * static_cast<int64_t>(hn::Lanes(d));
  }
  template <class D>
  int64_t OutAt(D d, int64_t c, int k) const {
    return c / Block(d) * out_stride + k / R * out_stride + k % R * static_cast<int64_t>(hn::Lanes(d));
  }
};

// Inlines a lambda (GCC and clang): keeps PoolBinAvg's dispatch on finish and stream modes inside one function.
#define HWY_INLINE_LAMBDA __attribute__((always_inline))

// Loads a vector of channels at p: a full one when `Safe` (the bin's bounds check passed), else the n valid lanes.
template <bool Safe, class D, typename T>
HWY_INLINE hn::Vec<D> LoadChannels(D d, const T* p, size_t n, const T* end) {
  return Safe ? LoadWide(d, p) : LoadPartial(d, p, n, end);
}

// One sample's step of one vector of channels at element offset c for the MAX modes: its four taps are t[0, 4), and the
// running maximum is in acc. A weight of 0 on an infinite pixel makes the sample (MAX) or the tap (MAX_ONNX) NaN,
// which then does not count.
template <PoolMode M, bool Safe, class D, class V, typename T>
HWY_INLINE void MaxStep(D d, V& acc, const T* in, const PixelTap* t, int64_t c, size_t n, const T* end) {
  static_assert(M == PoolMode::kMax || M == PoolMode::kMaxOnnx, "the MAX modes only");
  auto load = [&](int i) { return LoadChannels<Safe>(d, in + t[i].offset + c, n, end); };
  auto tap = [&](int i) { return hn::Mul(hn::Set(d, t[i].weight), load(i)); };
  if (M == PoolMode::kMax) {
    V v = tap(0);
    for (int i = 1; i < 4; ++i) v = hn::MulAdd(hn::Set(d, t[i].weight), load(i), v);
    acc = RaiseTo(acc, v);
  } else {
    acc = RaiseTo(acc, LargerNumber(LargerNumber(tap(0), tap(1)), LargerNumber(tap(2), tap(3))));
  }
}

// Folds the samples of `b` into the running maxima of U (1 or 4) vectors of channels starting at c; the last
// vector holds `tail` valid lanes. The state is in separate vectors (SVE vectors cannot be array elements or
// struct members). A sample outside the map counts as 0.
template <PoolMode M, int U, bool Safe, class D, class V, typename T, class Ch>
HWY_INLINE void MaxSamples(D d, const T* in, const BinTaps& b, const Ch& ch, int64_t c, size_t tail, const T* end,
                           V& a0, V& a1, V& a2, V& a3) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const size_t n = U == 1 ? tail : static_cast<size_t>(lanes);
  // A tail vector (U == 1) may start inside a block: its offset is In(c) itself.
  const int64_t c0 = U == 1 ? ch.In(d, c) : ch.InAt(d, c, 0);
  const int64_t c1 = ch.InAt(d, c, 1), c2 = ch.InAt(d, c, 2), c3 = ch.InAt(d, c, 3);
  for (int64_t i = 0; i < b.count; i += 4) {
    const PixelTap* t = b.taps + i;
    if (t[0].offset == kOutsideTap) {
      a0 = RaiseTo(a0, hn::Zero(d));
      if (U > 1) {
        a1 = RaiseTo(a1, hn::Zero(d));
        a2 = RaiseTo(a2, hn::Zero(d));
        a3 = RaiseTo(a3, hn::Zero(d));
      }
      continue;
    }
    MaxStep<M, Safe>(d, a0, in, t, c0, n, end);
    if (U > 1) {
      MaxStep<M, Safe>(d, a1, in, t, c1, n, end);
      MaxStep<M, Safe>(d, a2, in, t, c2, n, end);
      MaxStep<M, Safe>(d, a3, in, t, c3, n, end);
    }
  }
}

// BF16 in AVG's eight-vector passes, the hot loop: each 32-bit lane of a vector of patterns holds channels 2i
// (lower half) and 2i + 1 (upper half), so a shift and a mask widen 2 * Lanes channels into their even and odd
// channels, one operation per f32 vector instead of a lane-crossing zero extension plus a shift. The pass's
// accumulators then hold (even, odd) pairs; every channel still sees the same chain of operations.
template <typename T, int U, class Ch = Contiguous>
constexpr bool kPairedBF16 = std::is_same<T, hwy::bfloat16_t>::value && U == 8 && !Ch::kBlocked;

// Keeps v in a register of its own: the compiler no longer sees that a pass's block offsets are multiples of one
// stride, so it addresses each load as base + offset register instead of chaining an add per vector.
HWY_INLINE int64_t Opaque(int64_t v) {
#if defined(__GNUC__)
  asm("" : "+r"(v));
#endif
  return v;
}

// The byte offsets of the blocks of a pass's 8 vectors from its first block, [0] = 0 (blocked forms only; once
// per call, as the passes would otherwise rebuild them).
template <typename T, class D, class Ch>
HWY_INLINE void BlockOffsets(D d, const Ch& ch, int64_t* o) {
  o[0] = 0;
  for (int j = 1; j * Ch::kVectorsPerBlock < 8; ++j) {
    o[j] = Opaque(ch.InAt(d, 0, j * Ch::kVectorsPerBlock) * static_cast<int64_t>(sizeof(T)));
  }
}

// Loads U (8, 4 or 1) vectors of channels at p (blocked: vector i in the block o[i / R] bytes on) and adds w times
// each to its own accumulator (AVG); paired BF16: the even and odd channels of 4 vectors of patterns into (a0, a1),
// ..., (a6, a7).
template <bool Safe, int U, class Ch, class D, class V, typename T>
HWY_INLINE void MergedStep(D d, V w, const T* p, const int64_t* o, size_t tail, const T* end, V& a0, V& a1, V& a2,
                           V& a3, V& a4, V& a5, V& a6, V& a7) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  if constexpr (kPairedBF16<T, U, Ch>) {
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
  // Contiguous runs: the offsets are i * lanes, known here, so the blocked form costs them nothing.
  constexpr int R = Ch::kVectorsPerBlock;
  auto at = [&](int64_t i) {
    if (!Ch::kBlocked) return p + i * lanes;
    return reinterpret_cast<const T*>(reinterpret_cast<const char*>(p) + o[i / R]) + i % R * lanes;
  };
  auto load = [&](int64_t i) { return LoadChannels<Safe>(d, at(i), n, end); };
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

// AVG of U vectors of channels at c over a bin's taps: each distinct pixel is read once, in the order the driver
// laid them out, into one chain per vector, so every channel sees the same arithmetic whichever U handles it
// (results do not depend on how threads split channels).
template <int U, bool Safe, class D, class V, typename T, class Ch>
HWY_INLINE void AccumulateTaps(D d, const T* in, const BinTaps& b, const Ch& ch, const int64_t* o, int64_t c,
                               size_t tail, const T* end, V& a0, V& a1, V& a2, V& a3, V& a4, V& a5, V& a6, V& a7) {
  const T* const base = in + ch.In(d, c);
  for (const PixelTap* r = b.taps; r != b.taps + b.count; ++r) {
    const T* const row = base + r->offset;
    const float wy = r->weight;
    for (const PixelTap* t = b.cols; t != b.cols + b.nx; ++t) {
      MergedStep<Safe, U, Ch>(d, hn::Set(d, wy * t->weight), row + t->offset, o, tail, end, a0, a1, a2, a3, a4, a5, a6,
                              a7);
    }
  }
}

// How a bin's vectors leave a call, decided once per call so that the passes carry no per-vector branches: as
// partial state, or finished: as they are (MAX), or by AVG's sample count (times its reciprocal, or divided).
enum class Finish { kPartial, kAsIs, kScale, kDivide };
template <Finish F>
using FinishTag = std::integral_constant<Finish, F>;

template <Finish F, class V>
HWY_INLINE V Finished(V v, V scale) {
  return F == Finish::kScale ? hn::Mul(v, scale) : F == Finish::kDivide ? hn::Div(v, scale) : v;
}

// Writes vector v of a bin's channels (offset c): into the f32 partial state, or finished into out in its element
// type. Stream: a non-temporal store (out is then vector-aligned), which writes the line without first reading
// it from memory and keeps the map in cache.
template <Finish F, bool Stream, class D, class V, typename TOut>
HWY_INLINE void WriteVector(D d, V v, V scale, float* partial, TOut* out, int64_t c) {
  if (F == Finish::kPartial) return hn::StoreU(v, d, partial + c);
  if (Stream) return StreamNarrow(d, Finished<F>(v, scale), out + c);
  StoreNarrow(d, Finished<F>(v, scale), out + c);
}

// The same for the last, partial vector of n lanes, which never touches the channels past it.
template <Finish F, class D, class V, typename TOut>
HWY_INLINE void WriteTail(D d, V v, V scale, float* partial, TOut* out, int64_t c, size_t n) {
  if (F == Finish::kPartial) return StorePartial(d, v, partial + c, n);
  StorePartial(d, Finished<F>(v, scale), out + c, n);
}

// Writes U (4 or 8) vectors of a bin's channels starting at channel c, a0 first.
template <Finish F, bool Stream, int U, class D, class V, typename TOut, class Ch>
HWY_INLINE void WriteVectors(D d, V scale, float* partial, TOut* out, const Ch& ch, int64_t c, V a0, V a1, V a2, V a3,
                             V a4, V a5, V a6, V a7) {
  WriteVector<F, Stream>(d, a0, scale, partial, out, ch.OutAt(d, c, 0));
  WriteVector<F, Stream>(d, a1, scale, partial, out, ch.OutAt(d, c, 1));
  WriteVector<F, Stream>(d, a2, scale, partial, out, ch.OutAt(d, c, 2));
  WriteVector<F, Stream>(d, a3, scale, partial, out, ch.OutAt(d, c, 3));
  if (U == 8) {
    WriteVector<F, Stream>(d, a4, scale, partial, out, ch.OutAt(d, c, 4));
    WriteVector<F, Stream>(d, a5, scale, partial, out, ch.OutAt(d, c, 5));
    WriteVector<F, Stream>(d, a6, scale, partial, out, ch.OutAt(d, c, 6));
    WriteVector<F, Stream>(d, a7, scale, partial, out, ch.OutAt(d, c, 7));
  }
}

// AVG of channels [0, channels) of one bin with F and Stream fixed. Eight vectors per pass: eight independent FMA
// chains cover the FMA latency and halve the passes (and the per-tap weight broadcasts) of four; 8 accumulators +
// weight + load fit 16-register ISAs.
template <Finish F, bool Stream, class D, typename TIn, typename TOut, class Ch>
HWY_INLINE void AvgPasses(D d, const TIn* in, const TIn* end, const BinTaps& b, const Ch& ch, int64_t channels,
                          hn::Vec<D> scale, float* partial, TOut* out) {
  using V = hn::Vec<D>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const size_t full = static_cast<size_t>(lanes);
  const bool first = b.first;
  auto start = [&](int64_t c, int k) { return first ? hn::Zero(d) : hn::LoadU(d, partial + ch.OutAt(d, c, k)); };
  constexpr bool kPaired = kPairedBF16<TIn, 8, Ch>;
  int64_t o[8] = {};
  if constexpr (Ch::kBlocked) BlockOffsets<TIn>(d, ch, o);
  int64_t c = 0;
  for (; c + 8 * lanes <= channels; c += 8 * lanes) {
    V a0, a1, a2, a3, a4, a5, a6, a7;
    if constexpr (kPaired) {
      // The partial state stays in natural order, de-interleaved on the way in and interleaved on the way out.
      auto start_pair = [&](int64_t k, V& even, V& odd) {
        if (first) {
          even = odd = hn::Zero(d);
        } else {
          hn::LoadInterleaved2(d, partial + k, even, odd);
        }
      };
      start_pair(c, a0, a1);
      start_pair(c + 2 * lanes, a2, a3);
      start_pair(c + 4 * lanes, a4, a5);
      start_pair(c + 6 * lanes, a6, a7);
    } else {
      a0 = start(c, 0), a1 = start(c, 1), a2 = start(c, 2), a3 = start(c, 3);
      a4 = start(c, 4), a5 = start(c, 5), a6 = start(c, 6), a7 = start(c, 7);
    }
    AccumulateTaps<8, true>(d, in, b, ch, o, c, full, end, a0, a1, a2, a3, a4, a5, a6, a7);
    if constexpr (kPaired) {
      auto write_pair = [&](V even, V odd, int64_t k) {
        if (F == Finish::kPartial) return hn::StoreInterleaved2(even, odd, d, partial + k);
          PutPair(d, Finished<F>(even, scale), Finished<F>(odd, scale), out + k, Stream);
      };
      write_pair(a0, a1, c);
      write_pair(a2, a3, c + 2 * lanes);
      write_pair(a4, a5, c + 4 * lanes);
      write_pair(a6, a7, c + 6 * lanes);
    } else {
      WriteVectors<F, Stream, 8>(d, scale, partial, out, ch, c, a0, a1, a2, a3, a4, a5, a6, a7);
    }
  }
  for (; c + 4 * lanes <= channels; c += 4 * lanes) {
    V a0 = start(c, 0), a1 = start(c, 1), a2 = start(c, 2), a3 = start(c, 3), unused = a0;
    AccumulateTaps<4, true>(d, in, b, ch, o, c, full, end, a0, a1, a2, a3, unused, unused, unused, unused);
    WriteVectors<F, Stream, 4>(d, scale, partial, out, ch, c, a0, a1, a2, a3, a0, a0, a0, a0);
  }
  const int64_t max_offset = c < channels ? MaxOffset(b) : 0;
  for (; c < channels; c += lanes) {
    const size_t n = static_cast<size_t>(HWY_MIN(lanes, channels - c));
    const float* const partial_end = Ch::kBlocked ? partial + ch.Out(d, c) + n : partial + channels;
    V a0 = first ? hn::Zero(d) : LoadPartial(d, partial + ch.Out(d, c), n, partial_end), unused = a0;
    // One bounds check per bin: only the tail's full-vector loads can reach past the data.
    if (in + max_offset + ch.In(d, c) + lanes <= end) {
      AccumulateTaps<1, true>(d, in, b, ch, o, c, n, end, a0, unused, unused, unused, unused, unused, unused, unused);
    } else {
      AccumulateTaps<1, false>(d, in, b, ch, o, c, n, end, a0, unused, unused, unused, unused, unused, unused, unused);
    }
    WriteTail<F>(d, a0, scale, partial, out, ch.Out(d, c), n);
  }
}

// AVG of channels [0, channels) of one bin, with the first/last protocol of BinTaps (merged_taps.h).
template <class D, typename TIn, typename TOut, class Ch>
HWY_NOINLINE void PoolBinAvg(D d, const TIn* in, const TIn* end, const BinTaps& b, const Ch& placement,
                             int64_t channels, bool stream, float* partial, TOut* out) {
  const Ch ch = placement;  // a local copy: the stores to out cannot alias it, so its offsets stay in registers
  const int64_t samples = b.samples;
  // Dividing by 2^k and multiplying by 2^-k round the same exact quotient once, so they give the same bits; a
  // power-of-two count (every 2x2 or 4x4 grid) multiplies, as a vector division's throughput is an order of
  // magnitude lower and a bin finishes up to 16 vectors of it. A bin without samples has only zeros, and
  // finishes as 0 * 1.
  const bool divide = samples > 0 && (samples & (samples - 1)) != 0;
  const float count = static_cast<float>(HWY_MAX(samples, 1));
  const auto scale = hn::Set(d, divide ? count : 1.0f / count);
  // Paired BF16 streams two vectors of patterns at once: aligned for a vector of f32.
  const bool streaming = stream && IsVectorAligned(d, reinterpret_cast<const float*>(out));
  auto run = [&](auto finish) {
    if (streaming) {
      AvgPasses<decltype(finish)::value, true>(d, in, end, b, ch, channels, scale, partial, out);
    } else {
      AvgPasses<decltype(finish)::value, false>(d, in, end, b, ch, channels, scale, partial, out);
    }
  };
  // GCC inlines `run` in the contiguous form by itself (forcing it there costs NHWC instructions), and would call
  // it in the blocked form.
  auto run_inline = [&](auto finish) HWY_INLINE_LAMBDA {
    if (streaming) {
      AvgPasses<decltype(finish)::value, true>(d, in, end, b, ch, channels, scale, partial, out);
    } else {
      AvgPasses<decltype(finish)::value, false>(d, in, end, b, ch, channels, scale, partial, out);
    }
  };
  if (!b.last) return AvgPasses<Finish::kPartial, false>(d, in, end, b, ch, channels, scale, partial, out);
  if constexpr (Ch::kBlocked) {
    return divide ? run_inline(FinishTag<Finish::kDivide>()) : run_inline(FinishTag<Finish::kScale>());
  }
  return divide ? run(FinishTag<Finish::kDivide>()) : run(FinishTag<Finish::kScale>());
}

// MAX or MAX_ONNX of channels [0, channels) of one bin, with the first/last protocol of BinTaps (a first piece
// starts from -inf). Four vectors per pass hide the max latency without spilling on 16-register ISAs.
template <PoolMode M, class D, typename TIn, typename TOut, class Ch>
HWY_NOINLINE void PoolBinMax(D d, const TIn* in, const TIn* end, const BinTaps& b, const Ch& placement,
                             int64_t channels, bool stream, float* partial, TOut* out) {
  const Ch ch = placement;  // as in PoolBinAvg
  using V = hn::Vec<D>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const size_t full = static_cast<size_t>(lanes);
  const bool empty = b.samples == 0, first = b.first, last = b.last;
  auto start = [&](int64_t c, int k) {
    return first ? hn::Set(d, -HUGE_VALF) : hn::LoadU(d, partial + ch.OutAt(d, c, k));
  };
  auto finish = [&](V acc) { return last && empty ? hn::Zero(d) : acc; };
  const bool streaming = last && stream && IsVectorAligned(d, out);
  int64_t c = 0;
  for (; c + 4 * lanes <= channels; c += 4 * lanes) {
    V a0 = start(c, 0), a1 = start(c, 1), a2 = start(c, 2), a3 = start(c, 3);
    MaxSamples<M, 4, true>(d, in, b, ch, c, full, end, a0, a1, a2, a3);
    a0 = finish(a0), a1 = finish(a1), a2 = finish(a2), a3 = finish(a3);
    if (!last) {
      WriteVectors<Finish::kPartial, false, 4>(d, a0, partial, out, ch, c, a0, a1, a2, a3, a0, a0, a0, a0);
    } else if (streaming) {
      WriteVectors<Finish::kAsIs, true, 4>(d, a0, partial, out, ch, c, a0, a1, a2, a3, a0, a0, a0, a0);
    } else {
      WriteVectors<Finish::kAsIs, false, 4>(d, a0, partial, out, ch, c, a0, a1, a2, a3, a0, a0, a0, a0);
    }
  }
  const int64_t max_offset = c < channels ? MaxOffset(b) : 0;
  for (; c < channels; c += lanes) {
    const size_t n = static_cast<size_t>(HWY_MIN(lanes, channels - c));
    const float* const partial_end = Ch::kBlocked ? partial + ch.Out(d, c) + n : partial + channels;
    V a0 = first ? hn::Set(d, -HUGE_VALF) : LoadPartial(d, partial + ch.Out(d, c), n, partial_end), unused = a0;
    if (in + max_offset + ch.In(d, c) + lanes <= end) {
      MaxSamples<M, 1, true>(d, in, b, ch, c, n, end, a0, unused, unused, unused);
    } else {
      MaxSamples<M, 1, false>(d, in, b, ch, c, n, end, a0, unused, unused, unused);
    }
    if (last) {
      WriteTail<Finish::kAsIs>(d, finish(a0), a0, partial, out, ch.Out(d, c), n);
    } else {
      WriteTail<Finish::kPartial>(d, a0, a0, partial, out, ch.Out(d, c), n);
    }
  }
}

// The microkernel: pools channels [0, channels) of one bin at `in` from its taps `b` (offsets from in, which no
// load reaches past `end`), placed as `ch` says, and writes them to `out` (merged_taps.h has the first/last
// protocol). `stream`: finished full vectors may bypass the cache (the caller calls hwy::FlushStream before the
// output is read).
template <class D, typename TIn, typename TOut, class Ch>
HWY_INLINE void PoolBin(D d, PoolMode mode, const TIn* in, const TIn* end, const BinTaps& b, const Ch& ch,
                        int64_t channels, bool stream, float* partial, TOut* out) {
  switch (mode) {
    case PoolMode::kAvg:
      return PoolBinAvg(d, in, end, b, ch, channels, stream, partial, out);
    case PoolMode::kMax:
      return PoolBinMax<PoolMode::kMax>(d, in, end, b, ch, channels, stream, partial, out);
    case PoolMode::kMaxOnnx:
      return PoolBinMax<PoolMode::kMaxOnnx>(d, in, end, b, ch, channels, stream, partial, out);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace internal
}  // namespace roialign
HWY_AFTER_NAMESPACE();

#endif  // ROIALIGN_KERNELS_POOL_BIN_INL_H_
