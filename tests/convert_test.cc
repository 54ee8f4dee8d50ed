// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The 16-bit conversions: the scalar ones (kernels/half_float.h) against an oracle that picks the nearest
// representable value by comparing decoded values, and the vector ones (kernels/convert-inl.h) of every Highway
// target this build compiled and this CPU runs against the scalar ones, bit for bit (NaN: any NaN). Inputs: every
// 16-bit pattern, every tie between neighbours and the f32 values next to it, subnormals, the overflow boundary,
// specials, and a stride through all f32 patterns.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/convert_test.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include <cstdint>
#include <vector>

#include "kernels/convert-inl.h"
#include "kernels/half_float.h"

HWY_BEFORE_NAMESPACE();
namespace roialign {
namespace testing {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Narrows n f32 values (n a multiple of 64, the most lanes of any target) to both 16-bit types and widens n
// patterns of each back, with this target's vector conversions.
void VectorConvert(const float* in, const uint16_t* bits, size_t n, uint16_t* f16, uint16_t* bf16, float* from_f16,
                   float* from_bf16) {
  const hn::ScalableTag<float> d;
  const size_t lanes = hn::Lanes(d);
  for (size_t i = 0; i < n; i += lanes) {
    const auto v = hn::LoadU(d, in + i);
    internal::HWY_NAMESPACE::StoreNarrow(d, v, reinterpret_cast<hwy::float16_t*>(f16 + i));
    internal::HWY_NAMESPACE::StoreNarrow(d, v, reinterpret_cast<hwy::bfloat16_t*>(bf16 + i));
    hn::StoreU(internal::HWY_NAMESPACE::LoadWide(d, reinterpret_cast<const hwy::float16_t*>(bits + i)), d,
               from_f16 + i);
    hn::StoreU(internal::HWY_NAMESPACE::LoadWide(d, reinterpret_cast<const hwy::bfloat16_t*>(bits + i)), d,
               from_bf16 + i);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace testing
}  // namespace roialign
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <cmath>
#include <limits>
#include <string>

namespace roialign {
namespace testing {

HWY_EXPORT(VectorConvert);

namespace {

using internal::BitsOf;
using internal::FloatOf;

// A 16-bit format's value of pattern `bits`, decoded from its fields in double (independent of half_float.h).
struct Format {
  int mantissa_bits, exponent_bias;
  uint16_t infinity;  // the pattern of +Inf; the positive finite patterns are [0, infinity), increasing in value
  double Decode(uint16_t bits) const {
    const int exponent = (bits & 0x7FFF) >> mantissa_bits;
    const int mantissa = bits & ((1 << mantissa_bits) - 1);
    const double magnitude =
        exponent == 0 ? std::ldexp(mantissa, 1 - exponent_bias - mantissa_bits)
                      : std::ldexp((1 << mantissa_bits) + mantissa, exponent - exponent_bias - mantissa_bits);
    return (bits & 0x8000) ? -magnitude : magnitude;
  }
  // The value past the largest finite one on the same grid: where Inf sits for rounding.
  double InfinityForRounding() const { return std::ldexp(1.0, (infinity >> mantissa_bits) - exponent_bias); }
  // Round to nearest, ties to the even pattern, by comparing x with the two representable neighbours.
  uint16_t Nearest(float x) const {
    const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    const double a = std::fabs(static_cast<double>(x));
    if (a >= InfinityForRounding()) return static_cast<uint16_t>(sign | infinity);
    uint16_t lo = 0, hi = infinity;  // Decode(lo) <= a < value(hi)
    while (hi - lo > 1) {
      const uint16_t mid = static_cast<uint16_t>((lo + hi) / 2);
      if (Decode(mid) <= a) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    const double below = Decode(lo), above = hi == infinity ? InfinityForRounding() : Decode(hi);
    uint16_t r = lo;
    if (a - below > above - a || (a - below == above - a && (lo & 1) != 0)) r = hi;
    return static_cast<uint16_t>(sign | r);
  }
};
constexpr Format kF16 = {10, 15, 0x7C00};
constexpr Format kBF16 = {7, 127, 0x7F80};

bool IsNan16(uint16_t bits, const Format& f) { return (bits & 0x7FFF) > f.infinity; }

// The f32 inputs: specials, each 16-bit format's ties and their f32 neighbours, a stride through all patterns.
std::vector<float> Inputs() {
  std::vector<float> in = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, FloatOf(0x7F800001u), FloatOf(0xFFC12345u),
                           std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(),
                           std::numeric_limits<float>::min(), 65504.0f, 65519.996f, 65520.0f, 65536.0f, 1e-8f};
  for (const Format* f : {&kF16, &kBF16}) {
    for (uint32_t h = 0; h < f->infinity; ++h) {
      const double v = f->Decode(static_cast<uint16_t>(h));
      const double next = h + 1 == f->infinity ? f->InfinityForRounding() : f->Decode(static_cast<uint16_t>(h + 1));
      const float tie = static_cast<float>((v + next) / 2);  // exact: a 16-bit format's ties fit in f32
      for (float x : {static_cast<float>(v), tie, std::nextafter(tie, 0.0f), std::nextafter(tie, INFINITY)}) {
        in.push_back(x);
        in.push_back(-x);
      }
    }
  }
  for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 65521) in.push_back(FloatOf(static_cast<uint32_t>(u)));
  while (in.size() % 64 != 0) in.push_back(1.0f);
  return in;
}

TEST(ScalarConvert, WidensEveryPatternExactly) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const uint16_t h = static_cast<uint16_t>(b);
    for (const Format* f : {&kF16, &kBF16}) {
      const float got = f == &kF16 ? internal::F32FromF16Bits(h) : internal::F32FromBF16Bits(h);
      if (IsNan16(h, *f)) {
        EXPECT_TRUE(std::isnan(got)) << std::hex << b;
      } else if ((h & 0x7FFF) == f->infinity) {
        EXPECT_EQ(got, (h & 0x8000) ? -INFINITY : INFINITY) << std::hex << b;
      } else {
        EXPECT_EQ(static_cast<double>(got), f->Decode(h)) << std::hex << b;
        EXPECT_EQ(std::signbit(got), (h & 0x8000) != 0) << std::hex << b;
      }
    }
  }
}

TEST(ScalarConvert, NarrowsToNearestEven) {
  size_t bad = 0;
  for (float x : Inputs()) {
    const uint16_t f16 = internal::F16BitsFromF32(x), bf16 = internal::BF16BitsFromF32(x);
    if (std::isnan(x)) {
      EXPECT_TRUE(IsNan16(f16, kF16) && IsNan16(bf16, kBF16)) << x;
      continue;
    }
    if (f16 != kF16.Nearest(x) && bad++ < 5) ADD_FAILURE() << "f16 of " << x << ": " << std::hex << f16;
    if (bf16 != kBF16.Nearest(x) && bad++ < 5) ADD_FAILURE() << "bf16 of " << x << ": " << std::hex << bf16;
  }
  EXPECT_EQ(bad, 0u);
  // The boundaries, spelled out: a tie rounds to the even neighbour, 65520 to Inf, the smallest subnormal's half
  // to 0.
  EXPECT_EQ(internal::F16BitsFromF32(1.0f + 0x1p-11f), 0x3C00);                // tie between 0x3C00 and 0x3C01
  EXPECT_EQ(internal::F16BitsFromF32(1.0f + 3 * 0x1p-11f), 0x3C02);            // tie between 0x3C01 and 0x3C02
  EXPECT_EQ(internal::F16BitsFromF32(65520.0f), 0x7C00);
  EXPECT_EQ(internal::F16BitsFromF32(std::nextafter(65520.0f, 0.0f)), 0x7BFF);
  EXPECT_EQ(internal::F16BitsFromF32(0x1p-25f), 0x0000);
  EXPECT_EQ(internal::F16BitsFromF32(std::nextafter(0x1p-25f, 1.0f)), 0x0001);
  EXPECT_EQ(internal::BF16BitsFromF32(1.0f + 0x1p-8f), 0x3F80);
  EXPECT_EQ(internal::BF16BitsFromF32(1.0f + 3 * 0x1p-8f), 0x3F82);
  EXPECT_EQ(internal::BF16BitsFromF32(std::numeric_limits<float>::max()), 0x7F80);
}

class VectorConvertTest : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override { hwy::SetSupportedTargetsForTest(GetParam()); }
  void TearDown() override { hwy::SetSupportedTargetsForTest(0); }
};

TEST_P(VectorConvertTest, MatchesScalarBitForBit) {
  const std::vector<float> in = Inputs();
  std::vector<uint16_t> bits(in.size());
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<uint16_t>(i);  // every pattern, then again
  std::vector<uint16_t> f16(in.size()), bf16(in.size());
  std::vector<float> from_f16(in.size()), from_bf16(in.size());
  HWY_DYNAMIC_DISPATCH(VectorConvert)(in.data(), bits.data(), in.size(), f16.data(), bf16.data(), from_f16.data(),
                                      from_bf16.data());
  size_t bad = 0;
  auto same = [](float a, float b) { return std::isnan(a) ? std::isnan(b) : BitsOf(a) == BitsOf(b); };
  for (size_t i = 0; i < in.size(); ++i) {
    const uint16_t want16 = internal::F16BitsFromF32(in[i]), want_bf = internal::BF16BitsFromF32(in[i]);
    const bool f16_ok = std::isnan(in[i]) ? IsNan16(f16[i], kF16) : f16[i] == want16;
    const bool bf16_ok = std::isnan(in[i]) ? IsNan16(bf16[i], kBF16) : bf16[i] == want_bf;
    if ((!f16_ok || !bf16_ok) && bad++ < 5) {
      ADD_FAILURE() << in[i] << ": f16 " << std::hex << f16[i] << " want " << want16 << ", bf16 " << bf16[i]
                    << " want " << want_bf;
    }
    if ((!same(from_f16[i], internal::F32FromF16Bits(bits[i])) ||
         !same(from_bf16[i], internal::F32FromBF16Bits(bits[i]))) &&
        bad++ < 5) {
      ADD_FAILURE() << "widening " << std::hex << bits[i] << ": " << from_f16[i] << ", " << from_bf16[i];
    }
  }
  EXPECT_EQ(bad, 0u) << hwy::TargetName(GetParam());
}

INSTANTIATE_TEST_SUITE_P(EverySupportedTarget, VectorConvertTest,
                         ::testing::ValuesIn(hwy::SupportedAndGeneratedTargets()),
                         [](const ::testing::TestParamInfo<int64_t>& param) {
                           return std::string(hwy::TargetName(param.param));
                         });

}  // namespace
}  // namespace testing
}  // namespace roialign
#endif  // HWY_ONCE
