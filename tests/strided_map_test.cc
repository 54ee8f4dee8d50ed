// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Strided maps through the C API (roialign_map.strides): a channel slice of a larger map and padded rows, in both
// layouts and every dtype, give the bits of the same run on a dense copy; bad strides are refused untouched.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "roialign/roialign.h"
#include "tests/c_calls.h"

namespace {

constexpr int64_t kN = 2, kC = 10, kH = 9, kW = 11, kK = 7;
constexpr int64_t kFirst = 3, kSlice = 5;  // channels [3, 8) of 10
constexpr int64_t kPad = 3;                // extra elements per row in the padded view

size_t BytesOf(roialign_dtype d) { return d == ROIALIGN_DTYPE_F32 ? 4 : 2; }

std::vector<unsigned char> RandomBytes(size_t elements, roialign_dtype dtype, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  std::vector<unsigned char> out(elements * BytesOf(dtype));
  for (size_t i = 0; i < elements; ++i) {
    const float v = value(rng);
    if (dtype == ROIALIGN_DTYPE_F32) {
      std::memcpy(out.data() + 4 * i, &v, 4);
    } else {  // the high half of the float: a valid bf16, and an f16 bit pattern of moderate magnitude
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      const uint16_t half = dtype == ROIALIGN_DTYPE_BF16 ? static_cast<uint16_t>(bits >> 16)
                                                         : static_cast<uint16_t>(0x3C00u ^ ((bits >> 13) & 0x83FFu));
      std::memcpy(out.data() + 2 * i, &half, 2);
    }
  }
  return out;
}

std::vector<float> Rois() {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> x(-2.0f, 2.0f * kW), y(-2.0f, 2.0f * kH);
  std::vector<float> rois;
  for (int64_t k = 0; k < kK; ++k) {
    const float x1 = x(rng), y1 = y(rng);
    rois.insert(rois.end(), {static_cast<float>(k % kN), x1, y1, x1 + 9.0f, y1 + 7.0f});
  }
  return rois;
}

// Element (n, c, h, w) of a map in `layout` with the given strides (layout order).
size_t Offset(bool nhwc, const int64_t s[4], int64_t n, int64_t c, int64_t h, int64_t w) {
  return static_cast<size_t>(nhwc ? n * s[0] + h * s[1] + w * s[2] + c * s[3]
                                  : n * s[0] + c * s[1] + h * s[2] + w * s[3]);
}

struct View {
  roialign_map map;
  int64_t channels;
  std::vector<unsigned char> dense;  // the same elements, dense
};

// A view of `base` (kN x kC x kH x (kW + pad), dense in its layout): channels [first, first + channels).
View MakeView(const std::vector<unsigned char>& base, bool nhwc, roialign_dtype dtype, int64_t first,
              int64_t channels, int64_t pad) {
  const int64_t row = kW + pad;
  const int64_t base_strides[4] = {kC * kH * row, nhwc ? row * kC : kH * row, nhwc ? kC : row, 1};
  View v;
  v.channels = channels;
  const size_t b = BytesOf(dtype);
  v.map.data = base.data() + Offset(nhwc, base_strides, 0, first, 0, 0) * b;
  v.map.height = kH;
  v.map.width = kW;
  std::memcpy(v.map.strides, base_strides, sizeof(base_strides));
  const int64_t dense_strides[4] = {channels * kH * kW, nhwc ? kW * channels : kH * kW, nhwc ? channels : kW, 1};
  v.dense.resize(static_cast<size_t>(kN * channels * kH * kW) * b);
  for (int64_t n = 0; n < kN; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t h = 0; h < kH; ++h)
        for (int64_t w = 0; w < kW; ++w) {
          std::memcpy(v.dense.data() + Offset(nhwc, dense_strides, n, c, h, w) * b,
                      base.data() + Offset(nhwc, base_strides, n, first + c, h, w) * b, b);
        }
  return v;
}

class StridedMap : public ::testing::TestWithParam<roialign_dtype> {};

TEST_P(StridedMap, ChannelSlicesAndPaddedRowsMatchTheDenseCopyBitForBit) {
  const roialign_dtype dtype = GetParam();
  const std::vector<float> rois = Rois();
  for (const char* target : {"host", "generic"}) {
    for (roialign_layout layout : {ROIALIGN_LAYOUT_NCHW, ROIALIGN_LAYOUT_NHWC}) {
      const bool nhwc = layout == ROIALIGN_LAYOUT_NHWC;
      roialign_params params = roialign_c::Params(3, 2, 0.5f, 0, ROIALIGN_COORD_HALF_PIXEL, ROIALIGN_POOL_AVG,
                                                  layout, dtype);
      roialign_kernel* kernel = nullptr;
      if (roialign_select(target, &params, &kernel) != ROIALIGN_OK) continue;  // e.g. portable F16
      for (int64_t pad : {int64_t{0}, kPad}) {
        const std::vector<unsigned char> base = RandomBytes(static_cast<size_t>(kN * kC * kH * (kW + pad)), dtype,
                                                            static_cast<uint32_t>(7 + pad));
        const View v = MakeView(base, nhwc, dtype, kFirst, kSlice, pad);
        const size_t out_bytes = static_cast<size_t>(kK * kSlice * 3 * 2) * BytesOf(dtype);
        std::vector<unsigned char> want(out_bytes, 0xAB), got(out_bytes, 0xCD);
        ASSERT_EQ(roialign_c::Run(kernel, v.dense.data(), kN, kSlice, kH, kW, rois.data(), nullptr, kK, want.data(),
                                  2),
                  ROIALIGN_OK)
            << roialign_last_error();
        roialign_inputs in = roialign_c::Inputs(nullptr, kN, kSlice, kH, kW, rois.data(), nullptr, kK);
        in.maps[0] = v.map;
        const roialign_options options = roialign_c::Threads(2);
        ASSERT_EQ(roialign_run(kernel, &in, got.data(), &options), ROIALIGN_OK) << roialign_last_error();
        EXPECT_EQ(std::memcmp(got.data(), want.data(), out_bytes), 0)
            << target << " " << (nhwc ? "NHWC" : "NCHW") << " pad " << pad;
      }
      // Dense strides given explicitly read the map in place; a negative stride is refused, output untouched.
      const std::vector<unsigned char> base = RandomBytes(static_cast<size_t>(kN * kC * kH * kW), dtype, 3);
      const View whole = MakeView(base, nhwc, dtype, 0, kC, 0);
      const size_t out_bytes = static_cast<size_t>(kK * kC * 3 * 2) * BytesOf(dtype);
      std::vector<unsigned char> want(out_bytes), got(out_bytes, 0xEE);
      ASSERT_EQ(roialign_c::Run(kernel, base.data(), kN, kC, kH, kW, rois.data(), nullptr, kK, want.data(), 1),
                ROIALIGN_OK);
      roialign_inputs in = roialign_c::Inputs(nullptr, kN, kC, kH, kW, rois.data(), nullptr, kK);
      in.maps[0] = whole.map;
      ASSERT_EQ(roialign_run(kernel, &in, got.data(), nullptr), ROIALIGN_OK) << roialign_last_error();
      EXPECT_EQ(got, want);
      std::fill(got.begin(), got.end(), 0xEE);
      in.maps[0].strides[2] = -1;
      EXPECT_EQ(roialign_run(kernel, &in, got.data(), nullptr), ROIALIGN_INVALID_ARGUMENT);
      EXPECT_NE(std::strstr(roialign_last_error(), "inputs->maps[0].strides[2] is -1"), nullptr);
      for (unsigned char b : got) ASSERT_EQ(b, 0xEE);
      in.maps[0].strides[2] = INT64_MAX / 2;
      EXPECT_EQ(roialign_run(kernel, &in, got.data(), nullptr), ROIALIGN_INVALID_ARGUMENT);
      EXPECT_NE(std::strstr(roialign_last_error(), "overflow"), nullptr);
      roialign_kernel_free(kernel);
    }
  }
}

// Multi-level: each level a channel slice of its own larger map.
TEST_P(StridedMap, MultiLevelSlicesMatchTheDenseCopies) {
  const roialign_dtype dtype = GetParam();
  const std::vector<float> rois = Rois();
  for (roialign_layout layout : {ROIALIGN_LAYOUT_NCHW, ROIALIGN_LAYOUT_NHWC}) {
    const bool nhwc = layout == ROIALIGN_LAYOUT_NHWC;
    roialign_params params = roialign_c::Params(2, 2, 1.0f, 2, ROIALIGN_COORD_HALF_PIXEL, ROIALIGN_POOL_AVG, layout,
                                                dtype);
    roialign_multi_level_params levels;
    roialign_multi_level_params_init(&levels);
    levels.num_levels = 2;
    levels.scales[0] = 1.0f;
    levels.scales[1] = 0.5f;
    levels.level_rule = ROIALIGN_LEVEL_RULE_GIVEN;
    roialign_multi_level_kernel* kernel = nullptr;
    ASSERT_EQ(roialign_multi_level_select("host", &params, &levels, &kernel), ROIALIGN_OK) << roialign_last_error();
    const std::vector<unsigned char> base0 = RandomBytes(static_cast<size_t>(kN * kC * kH * kW), dtype, 5);
    const std::vector<unsigned char> base1 = RandomBytes(static_cast<size_t>(kN * kC * kH * (kW + kPad)), dtype, 6);
    const View v0 = MakeView(base0, nhwc, dtype, kFirst, kSlice, 0);
    const View v1 = MakeView(base1, nhwc, dtype, kFirst, kSlice, kPad);
    std::vector<int32_t> given(kK);
    for (int64_t k = 0; k < kK; ++k) given[static_cast<size_t>(k)] = static_cast<int32_t>(k % 2);
    roialign_inputs in = roialign_c::Inputs(v0.dense.data(), kN, kSlice, kH, kW, rois.data(), nullptr, kK);
    in.num_maps = 2;
    in.maps[1] = {v1.dense.data(), kH, kW, {0, 0, 0, 0}};
    in.levels = given.data();
    const size_t out_bytes = static_cast<size_t>(kK * kSlice * 4) * BytesOf(dtype);
    std::vector<unsigned char> want(out_bytes), got(out_bytes, 0xCD);
    ASSERT_EQ(roialign_multi_level_run(kernel, &in, want.data(), nullptr), ROIALIGN_OK) << roialign_last_error();
    in.maps[0] = v0.map;
    in.maps[1] = v1.map;
    ASSERT_EQ(roialign_multi_level_run(kernel, &in, got.data(), nullptr), ROIALIGN_OK) << roialign_last_error();
    EXPECT_EQ(got, want) << (nhwc ? "NHWC" : "NCHW");
    roialign_multi_level_kernel_free(kernel);
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, StridedMap,
                         ::testing::Values(ROIALIGN_DTYPE_F32, ROIALIGN_DTYPE_F16, ROIALIGN_DTYPE_BF16));

}  // namespace
