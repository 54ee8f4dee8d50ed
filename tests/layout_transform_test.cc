// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Layout transforms against naive loops, f32 and 16-bit, on every Highway target compiled (the test shares the
// library's HWY_TARGETS definitions) that this CPU supports: NCHW <-> NHWC with shapes that leave partial tiles
// (4x4 for f32, 8x8 for 16-bit), partial 64x64 blocks and partial runs of pixels, and every pair of the five
// layouts with channel counts that leave partial blocks, for any thread count and a caller's pool; refusals leave
// the output untouched.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <cstring>
#include <random>
#include <string>

#include "examples/worker_pool.h"
#include "execution/layout_transforms.h"
#include "roialign/roialign.h"
#include "tests/c_calls.h"
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
  // {2, 75, 23, 31}: more channels than one 64-plane block (the pixel-run path), and 713 pixels, a full and a
  // partial run of 512 per image.
  struct Shape {
    int64_t n, c, h, w;
  } shapes[] = {{1, 1, 1, 1}, {1, 3, 5, 7}, {2, 4, 4, 4}, {1, 33, 9, 11}, {3, 64, 7, 5}, {1, 5, 40, 37},
                {2, 75, 23, 31}};
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
  } shapes[] = {{1, 1, 1, 1}, {1, 3, 5, 7}, {2, 8, 4, 2}, {1, 33, 9, 11}, {3, 64, 7, 5}, {1, 9, 40, 37},
                {2, 75, 23, 31}};
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
  // An unknown dtype, through the internal entry: DType holds any int, while the C API's roialign_dtype cannot.
  EXPECT_EQ(internal::TransformTensorLayout(static_cast<DType>(4), Layout::kNCHW, Layout::kNHWC, in.data(), 1, 2, 2, 2,
                                            out.data(), internal::Threading{1, nullptr})
                .code(),
            StatusCode::kInvalidArgument);
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

// ---- Every pair of layouts (roialign_transform_layout) ----

// Channels per block of a blocked layout, 0 for NCHW and NHWC.
int64_t BlockOf(Layout layout) {
  return layout == Layout::kNCHW4c ? 4 : layout == Layout::kNCHW8c ? 8 : layout == Layout::kNCHW16c ? 16 : 0;
}

// Where channel c of pixel p of image n lies in `layout`, written out from the header's definitions.
int64_t OffsetIn(Layout layout, int64_t channels, int64_t pixels, int64_t n, int64_t c, int64_t p) {
  const int64_t b = BlockOf(layout);
  if (b > 0) return ((n * ((channels + b - 1) / b) + c / b) * pixels + p) * b + c % b;
  return layout == Layout::kNCHW ? (n * channels + c) * pixels + p : (n * pixels + p) * channels + c;
}

// Elements of the tensor in `layout`, padded lanes included.
int64_t ElementsIn(Layout layout, int64_t n, int64_t channels, int64_t pixels) {
  const int64_t b = BlockOf(layout);
  return n * (b > 0 ? (channels + b - 1) / b * b : channels) * pixels;
}

// The logical tensor (element (n, c, p) at (n * C + c) * HW + p) stored in `layout`, padded lanes set to `pad`.
template <typename T>
std::vector<T> Store(const std::vector<T>& logical, Layout layout, int64_t n, int64_t c, int64_t hw, T pad) {
  std::vector<T> out(static_cast<size_t>(ElementsIn(layout, n, c, hw)), pad);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p) {
        const int64_t at = OffsetIn(layout, c, hw, b, ch, p);
        out[static_cast<size_t>(at)] = logical[static_cast<size_t>((b * c + ch) * hw + p)];
      }
  return out;
}

constexpr Layout kLayouts[] = {Layout::kNCHW, Layout::kNHWC, Layout::kNCHW4c, Layout::kNCHW8c, Layout::kNCHW16c};

// Random elements of `dtype`'s width: f32 values, or any 16-bit pattern (moved bit for bit). The padding of
// blocked inputs is NaN in every dtype (0x7FC00000 in f32; 0x7FFF is NaN in F16 and BF16).
template <typename T>
std::vector<T> RandomElements(size_t count, std::mt19937* rng) {
  std::vector<T> out(count);
  if constexpr (sizeof(T) == 4) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (T& v : out) {
      const float f = u(*rng);
      std::memcpy(&v, &f, 4);
    }
  } else {
    std::uniform_int_distribution<int> u(0, 0xFFFF);
    for (T& v : out) v = static_cast<T>(u(*rng));
  }
  return out;
}
template <typename T>
constexpr T kNaN = sizeof(T) == 4 ? static_cast<T>(0x7FC00000u) : static_cast<T>(0x7FFF);
template <typename T>
constexpr T kSentinelOf = sizeof(T) == 4 ? static_cast<T>(0xA5A5A5A5u) : static_cast<T>(0xA5A5);

// Every pair, every dtype, C = 1, 7, 17, 255 (partial blocks of every size), against the oracle: the output's padded
// lanes are 0 although the output buffer held a sentinel, and the input's NaN padding never shows. The round trips
// NCHW -> NCHWb -> NCHW and NHWC -> NCHWb -> NHWC are exact.
template <typename T>
void CheckEveryPair(DType dtype) {
  std::mt19937 rng(23);
  struct Shape {
    int64_t n, h, w;
  } shapes[] = {{1, 1, 1}, {2, 3, 5}, {1, 9, 11}, {2, 23, 31}};  // 713 pixels: a full and a partial 512-pixel task
  for (int64_t c : {1, 7, 17, 255}) {
    for (const Shape& s : shapes) {
      const int64_t hw = s.h * s.w;
      const std::vector<T> logical = RandomElements<T>(static_cast<size_t>(s.n * c * hw), &rng);
      for (Layout from : kLayouts) {
        const std::vector<T> input = Store(logical, from, s.n, c, hw, kNaN<T>);
        for (Layout to : kLayouts) {
          const std::vector<T> expected = Store(logical, to, s.n, c, hw, T{0});
          std::vector<T> got(expected.size(), kSentinelOf<T>);
          const Status st = TransformLayout(dtype, from, to, input.data(), s.n, c, s.h, s.w, got.data(), 1);
          ASSERT_TRUE(st.ok()) << st.message();
          ASSERT_TRUE(got == expected) << ToString(dtype) << " " << ToString(from) << " -> " << ToString(to)
                                       << " C=" << c << " " << s.n << "x" << s.h << "x" << s.w;
          // The same through the paths of tensors beyond the caches: non-temporal stores, NHWC -> NCHW's pixel runs.
          if (from == Layout::kNCHW || (from == Layout::kNHWC && to == Layout::kNCHW)) {
            std::vector<T> streamed(expected.size(), kSentinelOf<T>);
            ASSERT_TRUE(internal::TransformTensorLayout(dtype, from, to, input.data(), s.n, c, s.h, s.w,
                                                        streamed.data(), internal::Threading{1, nullptr},
                                                        /*stream_above=*/0)
                            .ok());
            ASSERT_TRUE(streamed == expected) << "streamed " << ToString(from) << " -> " << ToString(to);
          }
          if (from != Layout::kNCHW && from != Layout::kNHWC) continue;
          std::vector<T> back(input.size(), kSentinelOf<T>);
          ASSERT_TRUE(TransformLayout(dtype, to, from, got.data(), s.n, c, s.h, s.w, back.data(), 1).ok());
          ASSERT_TRUE(back == input) << ToString(from) << " -> " << ToString(to) << " -> " << ToString(from);
        }
      }
    }
  }
}

TEST_P(LayoutTransformTest, EveryPairOfLayoutsMatchesTheOracle) {
  CheckEveryPair<uint32_t>(DType::kF32);
  CheckEveryPair<uint16_t>(DType::kF16);
  CheckEveryPair<uint16_t>(DType::kBF16);
}

// 1 thread, 2 threads and a caller's pool give the same bits, on a map large enough for many tasks per path. On the
// best target only: how tasks are split does not depend on the target.
TEST(LayoutTransformThreads, EveryPairGivesTheSameBitsOnAnyThreads) {
  std::mt19937 rng(29);
  const int64_t n = 2, h = 24, w = 45, hw = h * w;
  worker_pool* workers = worker_pool_create(3);
  const roialign_threadpool pool = worker_pool_interface(workers);
  // 75 channels: NCHW <-> NHWC takes runs of pixels with every channel, and the runs shorten for more threads.
  for (int64_t c : {17, 75}) {
    const std::vector<uint32_t> logical = RandomElements<uint32_t>(static_cast<size_t>(n * c * hw), &rng);
    for (Layout from : kLayouts) {
      const std::vector<uint32_t> input = Store(logical, from, n, c, hw, kNaN<uint32_t>);
      for (Layout to : kLayouts) {
        const size_t size = static_cast<size_t>(ElementsIn(to, n, c, hw));
        std::vector<uint32_t> one(size, 1), two(size, 2), pooled(size, 3);
        ASSERT_TRUE(TransformLayout(DType::kF32, from, to, input.data(), n, c, h, w, one.data(), 1).ok());
        ASSERT_TRUE(TransformLayout(DType::kF32, from, to, input.data(), n, c, h, w, two.data(), 2).ok());
        ASSERT_TRUE(TransformLayout(DType::kF32, from, to, input.data(), n, c, h, w, pooled.data(), CppPool(pool)).ok());
        EXPECT_TRUE(one == Store(logical, to, n, c, hw, 0u)) << ToString(from) << " -> " << ToString(to) << " C=" << c;
        EXPECT_TRUE(two == one) << ToString(from) << " -> " << ToString(to) << " C=" << c;
        EXPECT_TRUE(pooled == one) << ToString(from) << " -> " << ToString(to) << " C=" << c;
        if (from != Layout::kNHWC || to != Layout::kNCHW) continue;
        // NHWC -> NCHW takes runs of pixels only beyond the caches: the same bits there, on threads and a pool.
        for (const internal::Threading& threading : {internal::Threading{2, nullptr}, internal::Threading{0, &pool}}) {
          std::vector<uint32_t> runs(size, 4);
          ASSERT_TRUE(internal::TransformTensorLayout(DType::kF32, from, to, input.data(), n, c, h, w, runs.data(),
                                                      threading, /*stream_above=*/0)
                          .ok());
          EXPECT_TRUE(runs == one) << "NHWC -> NCHW in runs of pixels, C=" << c;
        }
      }
    }
  }
  worker_pool_destroy(workers);
}

// Each refusal of roialign_transform_layout: INVALID_ARGUMENT, a message naming the cause, the output untouched.
TEST(LayoutTransformRefusals, NameTheCauseAndLeaveTheOutputUntouched) {
  std::vector<float> in(16 * 2 * 3, 1.0f), out(in.size() + 16, -5.0f);
  const std::vector<float> untouched = out;
  const roialign_options defaults = roialign_c::Threads(1);
  roialign_options with_workspace = defaults;
  unsigned char block[64];
  with_workspace.workspace = block;
  with_workspace.workspace_size = sizeof(block);
  const roialign_parallel_for_fn never_called = [](void*, int64_t, roialign_task_fn, void*) {};
  const roialign_threadpool no_threads = {sizeof(roialign_threadpool), 0, never_called, nullptr, 0, 0};
  const roialign_threadpool no_fn = {sizeof(roialign_threadpool), 0, nullptr, nullptr, 2, 0};
  const roialign_options on_no_threads = roialign_c::OnPool(&no_threads), on_no_fn = roialign_c::OnPool(&no_fn);
  // Each case: what the message must say, and the call's arguments that differ from a valid call's.
  struct Case {
    const char* cause;
    int dtype = ROIALIGN_DTYPE_F32, from = ROIALIGN_LAYOUT_NCHW, to = ROIALIGN_LAYOUT_NCHW16C;
    const void* input;
    int64_t n = 1, c = 5, h = 2, w = 3;
    float* output;
    const roialign_options* options;
  };
  float* const i = in.data();
  float* const o = out.data();
  const Case cases[] = {
      {"unknown dtype value 4", 4, 0, 4, i, 1, 5, 2, 3, o, &defaults},
      {"unknown layout value 5 for `from`", 0, 5, 4, i, 1, 5, 2, 3, o, &defaults},
      {"unknown layout value -1 for `to`", 0, 0, -1, i, 1, 5, 2, 3, o, &defaults},
      {"batch is -1", 0, 0, 4, i, -1, 5, 2, 3, o, &defaults},
      {"channels is -5", 0, 0, 4, i, 1, -5, 2, 3, o, &defaults},
      {"height is -2", 0, 0, 4, i, 1, 5, -2, 3, o, &defaults},
      {"width is -3", 0, 0, 4, i, 1, 5, 2, -3, o, &defaults},
      {"input's size (batch x channels x height x width x element bytes) overflows int64", 0, 0, 4, i,
       INT64_MAX / 2, 5, 2, 3, o, &defaults},
      {"output's size (batch x channels padded to the block x height x width x element bytes) overflows int64", 0, 0,
       4, i, 1, INT64_MAX / 4 - 1, 1, 1, o, &defaults},
      {"input is NULL", 0, 0, 4, nullptr, 1, 5, 2, 3, o, &defaults},
      {"output is NULL", 0, 0, 4, i, 1, 5, 2, 3, nullptr, &defaults},
      {"input and output overlap", 0, 0, 4, o + 16, 1, 5, 2, 3, o, &defaults},  // the output's end
      {"input and output overlap", 0, 4, 0, o, 1, 5, 2, 3, o + 95, &defaults},  // the input's end
      {"input and output overlap", 1, 0, 0, o, 1, 5, 2, 3, o, &defaults},       // in place
      {"workspace is set, but layout transforms use no working memory", 0, 0, 4, i, 1, 5, 2, 3, o, &with_workspace},
      {"num_threads must be >= 1", 0, 0, 4, i, 1, 5, 2, 3, o, &on_no_threads},
      {"no parallel_for", 0, 0, 4, i, 1, 5, 2, 3, o, &on_no_fn},
  };
  for (const Case& k : cases) {
    EXPECT_EQ(roialign_transform_layout(static_cast<roialign_dtype>(k.dtype), static_cast<roialign_layout>(k.from),
                                        static_cast<roialign_layout>(k.to), k.input, k.n, k.c, k.h, k.w, k.output,
                                        k.options),
              ROIALIGN_INVALID_ARGUMENT)
        << k.cause;
    EXPECT_NE(std::string(roialign_last_error()).find(k.cause), std::string::npos)
        << "wanted \"" << k.cause << "\", got \"" << roialign_last_error() << "\"";
    EXPECT_TRUE(out == untouched) << k.cause;
  }
  // An empty tensor needs no buffers, and the 1.0 transforms run through the same checks.
  EXPECT_EQ(roialign_transform_layout(ROIALIGN_DTYPE_F32, ROIALIGN_LAYOUT_NHWC, ROIALIGN_LAYOUT_NCHW8C, nullptr, 0, 5,
                                      2, 3, nullptr, nullptr),
            ROIALIGN_OK);
  EXPECT_EQ(roialign_nchw_to_nhwc(ROIALIGN_DTYPE_F32, i, 1, 5, 2, 3, o, &with_workspace), ROIALIGN_INVALID_ARGUMENT);
  EXPECT_EQ(roialign_nhwc_to_nchw(ROIALIGN_DTYPE_F32, o + 1, 1, 5, 2, 3, o, nullptr), ROIALIGN_INVALID_ARGUMENT);
  EXPECT_TRUE(out == untouched);
}

INSTANTIATE_TEST_SUITE_P(EverySupportedTarget, LayoutTransformTest, ::testing::ValuesIn(hwy::SupportedAndGeneratedTargets()),
                         [](const ::testing::TestParamInfo<int64_t>& param) {
                           return std::string(hwy::TargetName(param.param));
                         });

}  // namespace
}  // namespace testing
}  // namespace roialign
