// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Scalar conversions between f32 and the 16-bit storage types (IEEE binary16 and bfloat16), on their bit
// patterns. Narrowing rounds to nearest, ties to even, and keeps NaN a (quiet) NaN: the contract of
// docs/semantics.md. Highway 1.0.3's hwy::BF16FromF32 truncates, and its emulated f16 conversions (targets
// without F16C) truncate and turn Inf into a finite value, so neither is used. The reference, the tests and the
// benchmarks convert with these; the SIMD kernels' vector conversions (kernels/convert-inl.h) must agree.
#ifndef ROIALIGN_KERNELS_HALF_FLOAT_H_
#define ROIALIGN_KERNELS_HALF_FLOAT_H_

#include <hwy/base.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace roialign {
namespace internal {

inline uint32_t BitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
inline float FloatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// binary16 -> f32, exact for every pattern (subnormals, +-Inf and NaN payloads included).
inline float F32FromF16Bits(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t magnitude = h & 0x7FFFu;
  if (magnitude < 0x0400u) {  // zero or subnormal: magnitude * 2^-24, exact in f32
    return FloatOf(sign | BitsOf(static_cast<float>(magnitude) * 0x1p-24f));
  }
  if (magnitude >= 0x7C00u) return FloatOf(sign | 0x7F800000u | (magnitude & 0x3FFu) << 13);  // Inf, NaN
  return FloatOf(sign | ((magnitude << 13) + (112u << 23)));  // rebias the exponent from 15 to 127
}

// f32 -> binary16, round to nearest even; values from 65520 up become Inf, NaN stays NaN.
inline uint16_t F16BitsFromF32(float f) {
  const uint32_t u = BitsOf(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u | ((a >> 13) & 0x3FFu));  // quiet NaN
  if (a >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // 65520 and up round to Inf
  if (a < 0x38800000u) {
    // Below 2^-14: the f16 result is subnormal, a multiple of 2^-24. Adding 0.5 (whose ulp is 2^-24) makes the
    // FPU round the magnitude to that grid, to nearest even; the low bits of the sum are then the result.
    return static_cast<uint16_t>(sign | (BitsOf(FloatOf(a) + 0.5f) - 0x3F000000u));
  }
  // Normal: rebias, then round the 13 dropped bits to nearest even (a carry moves into the exponent).
  const uint32_t rebased = a - (112u << 23);
  return static_cast<uint16_t>(sign | ((rebased + 0x0FFFu + ((rebased >> 13) & 1u)) >> 13));
}

// bfloat16 -> f32: the upper half of the f32 pattern.
inline float F32FromBF16Bits(uint16_t b) { return FloatOf(static_cast<uint32_t>(b) << 16); }

// f32 -> bfloat16, round to nearest even (overflow to Inf included); NaN stays NaN.
inline uint16_t BF16BitsFromF32(float f) {
  const uint32_t u = BitsOf(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // quiet NaN
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

// One element of any served type, to f32 and back (rounded as above).
inline float ToF32(float v) { return v; }
inline float ToF32(hwy::float16_t v) {
  uint16_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return F32FromF16Bits(bits);
}
inline float ToF32(hwy::bfloat16_t v) { return F32FromBF16Bits(v.bits); }

inline void StoreF32As(float f, float* out) { *out = f; }
inline void StoreF32As(float f, hwy::float16_t* out) {
  const uint16_t bits = F16BitsFromF32(f);
  std::memcpy(out, &bits, sizeof(bits));
}
inline void StoreF32As(float f, hwy::bfloat16_t* out) { out->bits = BF16BitsFromF32(f); }

// The precision an element type computes in: double for F64, f32 for the others (docs/semantics.md#float64).
template <typename T>
using ComputeOf = std::conditional_t<std::is_same_v<T, double>, double, float>;

// One element widened to its compute precision, and a result rounded once back to the element type.
template <typename T>
inline ComputeOf<T> Widen(T v) {
  if constexpr (std::is_same_v<T, double>) {
    return v;
  } else {
    return ToF32(v);
  }
}
template <typename T>
inline void Narrow(ComputeOf<T> v, T* out) {
  if constexpr (std::is_same_v<T, double>) {
    *out = v;
  } else {
    StoreF32As(v, out);
  }
}

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_KERNELS_HALF_FLOAT_H_
