// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Per-target loads and stores of the element types the kernels serve, widened to and narrowed from f32 vectors:
// f32 as is, IEEE binary16 (hwy::float16_t) and bfloat16 (hwy::bfloat16_t). Narrowing rounds to nearest even and
// keeps NaN a NaN, bit for bit as kernels/half_float.h does. Highway 1.0.3 converts binary16 in hardware on
// AVX2/AVX-512 (F16C, immediate round-to-nearest-even), NEON and SVE (FPCR's default round-to-nearest-even);
// its emulation elsewhere (SSE4) truncates and turns Inf into a finite value, and its bfloat16 DemoteTo
// truncates on every target, so those conversions are written here with integer operations.
// Included once per Highway target (toggle guard).
#if defined(ROIALIGN_KERNELS_CONVERT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ROIALIGN_KERNELS_CONVERT_INL_H_
#undef ROIALIGN_KERNELS_CONVERT_INL_H_
#else
#define ROIALIGN_KERNELS_CONVERT_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>

HWY_BEFORE_NAMESPACE();
namespace roialign {
namespace internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#undef ROIALIGN_F16_IN_HARDWARE
#if (HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)) || \
    (HWY_ARCH_ARM_A64 && (HWY_TARGET == HWY_NEON || HWY_TARGET == HWY_SVE || HWY_TARGET == HWY_SVE2))
#define ROIALIGN_F16_IN_HARDWARE 1
#else
#define ROIALIGN_F16_IN_HARDWARE 0
#endif

// 16-bit lanes, as many as D has f32 lanes.
template <class D>
using Bits16 = hn::Rebind<uint16_t, D>;

// The 16-bit patterns at p, zero-extended into D's 32-bit lanes.
template <class D>
HWY_INLINE hn::Vec<hn::RebindToSigned<D>> Load16As32(D /*d*/, const void* p) {
  const Bits16<D> d16;
  const hn::RebindToUnsigned<D> du;
  return hn::BitCast(hn::RebindToSigned<D>(),
                     hn::PromoteTo(du, hn::LoadU(d16, static_cast<const uint16_t*>(p))));
}

// Low 16 bits of each 32-bit lane (all in [0, 0xFFFF]), as 16-bit lanes.
template <class D>
HWY_INLINE hn::Vec<Bits16<D>> Pack32To16(D /*d*/, hn::Vec<hn::RebindToSigned<D>> bits) {
  return hn::DemoteTo(Bits16<D>(), bits);  // saturating, hence exact on [0, 0xFFFF]
}

template <class D>
HWY_INLINE hn::Vec<D> LoadWide(D d, const float* p) {
  return hn::LoadU(d, p);
}
template <class D>
HWY_INLINE void StoreNarrow(D d, hn::Vec<D> v, float* p) {
  hn::StoreU(v, d, p);
}

// binary16 -> f32 (exact).
template <class D>
HWY_INLINE hn::Vec<D> LoadWide(D d, const hwy::float16_t* p) {
#if ROIALIGN_F16_IN_HARDWARE
  return hn::PromoteTo(d, hn::LoadU(hn::Rebind<hwy::float16_t, D>(), p));
#else
  const hn::RebindToSigned<D> di;
  const auto h = Load16As32(d, p);
  const auto magnitude = hn::And(h, hn::Set(di, 0x7FFF));
  const auto sign = hn::ShiftLeft<16>(hn::Xor(h, magnitude));
  // Zero and subnormals: magnitude * 2^-24 (exact); Inf and NaN: all-ones exponent, payload kept; normals: the
  // exponent rebiased from 15 to 127.
  const auto subnormal = hn::BitCast(di, hn::Mul(hn::ConvertTo(d, magnitude), hn::Set(d, 0x1p-24f)));
  const auto special = hn::Or(hn::ShiftLeft<13>(magnitude), hn::Set(di, 0x7F800000));
  const auto normal = hn::Add(hn::ShiftLeft<13>(magnitude), hn::Set(di, 112 << 23));
  const auto bits = hn::IfThenElse(hn::Lt(magnitude, hn::Set(di, 0x0400)), subnormal,
                                   hn::IfThenElse(hn::Gt(magnitude, hn::Set(di, 0x7BFF)), special, normal));
  return hn::BitCast(d, hn::Or(bits, sign));
#endif
}

// bfloat16 -> f32: the pattern in the upper half of each lane.
template <class D>
HWY_INLINE hn::Vec<D> LoadWide(D d, const hwy::bfloat16_t* p) {
  return hn::BitCast(d, hn::ShiftLeft<16>(Load16As32(d, p)));
}

// f32 -> binary16 patterns, round to nearest even; from 65520 up Inf; NaN stays NaN.
template <class D>
HWY_INLINE hn::Vec<Bits16<D>> NarrowBits(D d, hn::Vec<D> v, const hwy::float16_t* /*type*/) {
#if ROIALIGN_F16_IN_HARDWARE
  (void)d;
  return hn::BitCast(Bits16<D>(), hn::DemoteTo(hn::Rebind<hwy::float16_t, D>(), v));
#else
  const hn::RebindToSigned<D> di;
  const hn::RebindToUnsigned<D> du;
  const auto bits = hn::BitCast(di, v);
  const auto a = hn::And(bits, hn::Set(di, 0x7FFFFFFF));
  const auto sign = hn::BitCast(di, hn::ShiftRight<16>(hn::BitCast(du, hn::Xor(bits, a))));
  // Below 2^-14 the result is a subnormal, a multiple of 2^-24: adding 0.5 (ulp 2^-24) makes the FPU round to
  // it, to nearest even. Above, rebias and round the 13 dropped bits to nearest even.
  const auto subnormal = hn::Sub(hn::BitCast(di, hn::Add(hn::BitCast(d, a), hn::Set(d, 0.5f))),
                                 hn::Set(di, 0x3F000000));
  const auto rebased = hn::Sub(a, hn::Set(di, 112 << 23));
  const auto odd = hn::And(hn::ShiftRight<13>(rebased), hn::Set(di, 1));
  const auto normal = hn::ShiftRight<13>(hn::Add(rebased, hn::Add(hn::Set(di, 0x0FFF), odd)));
  auto h = hn::IfThenElse(hn::Lt(a, hn::Set(di, 0x38800000)), subnormal, normal);
  h = hn::IfThenElse(hn::Gt(a, hn::Set(di, 0x477FEFFF)), hn::Set(di, 0x7C00), h);
  const auto nan = hn::Or(hn::Set(di, 0x7E00), hn::And(hn::ShiftRight<13>(a), hn::Set(di, 0x03FF)));
  h = hn::IfThenElse(hn::Gt(a, hn::Set(di, 0x7F800000)), nan, h);
  return Pack32To16(d, hn::Or(h, sign));
#endif
}

// f32 -> bfloat16 patterns, round to nearest even (overflow to Inf included); NaN stays a quiet NaN.
template <class D>
HWY_INLINE hn::Vec<Bits16<D>> NarrowBits(D d, hn::Vec<D> v, const hwy::bfloat16_t* /*type*/) {
  const hn::RebindToSigned<D> di;
  const hn::RebindToUnsigned<D> du;
  const auto u = hn::BitCast(du, v);
  const auto odd = hn::And(hn::ShiftRight<16>(u), hn::Set(du, 1));
  const auto rounded = hn::ShiftRight<16>(hn::Add(u, hn::Add(hn::Set(du, 0x7FFF), odd)));
  const auto nan = hn::Or(hn::ShiftRight<16>(u), hn::Set(du, 0x0040));
  const auto h = hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), nan, rounded);
  return Pack32To16(d, hn::BitCast(di, h));
}

template <class D, typename T16>
HWY_INLINE void StoreNarrow(D d, hn::Vec<D> v, T16* p) {
  hn::StoreU(NarrowBits(d, v, p), Bits16<D>(), reinterpret_cast<uint16_t*>(p));
}

// Non-temporal stores of a finished vector; p is aligned to the stored vector's size.
template <class D>
HWY_INLINE void StreamNarrow(D d, hn::Vec<D> v, float* p) {
  hn::Stream(v, d, p);
}
template <class D, typename T16>
HWY_INLINE void StreamNarrow(D d, hn::Vec<D> v, T16* p) {
  const Bits16<D> d16;
  // Highway 1.0.3's x86 Stream of a vector narrower than 128 bits (SSE4's four 16-bit lanes) writes 16 bytes:
  // such vectors take an ordinary store.
  if (HWY_ARCH_X86 && hn::MaxLanes(d16) * sizeof(uint16_t) < 16) return StoreNarrow(d, v, p);
  hn::Stream(NarrowBits(d, v, p), d16, reinterpret_cast<uint16_t*>(p));
}

// A finished pass of paired BF16 channels (the even channels' and the odd channels' f32 values, see
// kPairedBF16 in pool_bin-inl.h) stored in natural order: f32 outputs interleaved; bfloat16 outputs rounded as
// NarrowBits does, each even channel's pattern into the lower and each odd one's into the upper half of a
// 32-bit lane, which is their order in memory. `stream`: p is aligned to a whole vector.
template <class D>
HWY_INLINE void PutPair(D d, hn::Vec<D> even, hn::Vec<D> odd, float* p, bool /*stream*/) {
  hn::StoreInterleaved2(even, odd, d, p);
}
template <class D>
HWY_INLINE void PutPair(D /*d*/, hn::Vec<D> even, hn::Vec<D> odd, hwy::bfloat16_t* p, bool stream) {
  const hn::RebindToUnsigned<D> du;
  auto rounded = [&](hn::Vec<D> v) {  // the pattern in the upper half
    const auto u = hn::BitCast(du, v);
    const auto odd_bit = hn::And(hn::ShiftRight<16>(u), hn::Set(du, 1));
    const auto r = hn::Add(u, hn::Add(hn::Set(du, 0x7FFF), odd_bit));
    return hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), hn::Or(u, hn::Set(du, 0x00400000)), r);
  };
  const auto bits = hn::Or(hn::ShiftRight<16>(rounded(even)), hn::And(rounded(odd), hn::Set(du, 0xFFFF0000u)));
  uint32_t* const q = reinterpret_cast<uint32_t*>(p);
  if (stream) {
    hn::Stream(bits, du, q);
  } else {
    hn::StoreU(bits, du, q);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace internal
}  // namespace roialign
HWY_AFTER_NAMESPACE();

#endif  // ROIALIGN_KERNELS_CONVERT_INL_H_
