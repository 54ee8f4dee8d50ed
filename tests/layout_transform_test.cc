// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// NCHW <-> NHWC transforms against a naive loop, f32 and 16-bit, on every Highway target compiled (the test shares
// the library's HWY_TARGETS definitions) that this CPU supports, with shapes that leave partial tiles (4x4 for
// f32, 8x8 for 16-bit) and partial 64x64 blocks, for any thread count.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <random>

#include "tests/test_util.h"

namespace roialign {
namespace testing {
namespace {

class LayoutTransformTest : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override { hwy::SetSupportedTargetsForTest(GetParam()); }
  void TearDown() override { hwy::SetSupportedTargetsForTest(0); }
};

TEST_P(LayoutTransformTest, MatchesNaiveAndRoundTrips) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  struct Shape {
    int64_t n, c, h, w;
  } shapes[] = {{1, 1, 1, 1}, {1, 3, 5, 7}, {2, 4, 4, 4}, {1, 33, 9, 11}, {3, 64, 7, 5}, {1, 5, 40, 37}};
  for (const Shape& s : shapes) {
    std::vector<float> nchw(static_cast<size_t>(s.n * s.c * s.h * s.w));
    for (float& v : nchw) v = u(rng);
    for (int threads : {1, 2, 3}) {
      std::vector<float> nhwc(nchw.size(), NAN), back(nchw.size(), NAN);
      ASSERT_TRUE(NchwToNhwc(nchw.data(), s.n, s.c, s.h, s.w, nhwc.data(), threads).ok());
      EXPECT_EQ(nhwc, ToNhwc(nchw, s.n, s.c, s.h, s.w)) << s.c << "x" << s.h << "x" << s.w;
      ASSERT_TRUE(NhwcToNchw(nhwc.data(), s.n, s.c, s.h, s.w, back.data(), threads).ok());
      EXPECT_EQ(back, nchw);
    }
  }
}

// The dtype-generic transforms move 16-bit elements (any pattern, NaNs included) bit for bit, in 8x8 tiles.
TEST_P(LayoutTransformTest, SixteenBitElementsMoveBitForBit) {
  std::mt19937 rng(19);
  std::uniform_int_distribution<int> u(0, 0xFFFF);
  struct Shape {
    int64_t n, c, h, w;
  } shapes[] = {{1, 1, 1, 1}, {1, 3, 5, 7}, {2, 8, 4, 2}, {1, 33, 9, 11}, {3, 64, 7, 5}, {1, 9, 40, 37}};
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    for (const Shape& s : shapes) {
      std::vector<uint16_t> nchw(static_cast<size_t>(s.n * s.c * s.h * s.w));
      for (uint16_t& v : nchw) v = static_cast<uint16_t>(u(rng));
      for (int threads : {1, 3}) {
        std::vector<uint16_t> nhwc(nchw.size(), 0x7E00), back(nchw.size(), 0x7E00);
        ASSERT_TRUE(NchwToNhwc(dtype, nchw.data(), s.n, s.c, s.h, s.w, nhwc.data(), threads).ok());
        EXPECT_EQ(nhwc, ToNhwc(nchw, s.n, s.c, s.h, s.w)) << s.c << "x" << s.h << "x" << s.w;
        ASSERT_TRUE(NhwcToNchw(dtype, nhwc.data(), s.n, s.c, s.h, s.w, back.data(), threads).ok());
        EXPECT_EQ(back, nchw);
      }
    }
  }
  std::vector<uint16_t> in(8, 1), out(8, 5);
  EXPECT_EQ(NchwToNhwc(static_cast<DType>(3), in.data(), 1, 2, 2, 2, out.data()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(NchwToNhwc(DType::kF16, in.data(), 1, 2, 2, 2, in.data()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(out, std::vector<uint16_t>(8, 5));
}

TEST_P(LayoutTransformTest, RefusesBadShapesAndLeavesOutputUntouched) {
  std::vector<float> in(8, 1.0f), out(8, -5.0f);
  EXPECT_EQ(NchwToNhwc(in.data(), 1, -2, 2, 2, out.data()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(NhwcToNchw(nullptr, 1, 2, 2, 2, out.data()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(NchwToNhwc(in.data(), 1, 2, 2, 2, in.data()).code(), StatusCode::kInvalidArgument);  // in place
  EXPECT_EQ(NchwToNhwc(in.data(), INT64_MAX / 2, 2, 2, 2, out.data()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(out, std::vector<float>(8, -5.0f));
  EXPECT_TRUE(NchwToNhwc(nullptr, 0, 2, 2, 2, nullptr).ok());  // empty
}

INSTANTIATE_TEST_SUITE_P(EverySupportedTarget, LayoutTransformTest, ::testing::ValuesIn(hwy::SupportedAndGeneratedTargets()),
                         [](const ::testing::TestParamInfo<int64_t>& param) {
                           return std::string(hwy::TargetName(param.param));
                         });

}  // namespace
}  // namespace testing
}  // namespace roialign
