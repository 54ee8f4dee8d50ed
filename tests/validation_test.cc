// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Every data error of docs/errors-and-limits.md is refused with a message naming the problem, and leaves the output
// exactly as it was (canary-filled), on every layout and dtype and on the SIMD and reference targets.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/test_util.h"

namespace roialign {
namespace testing {
namespace {

constexpr float kCanary = -12345.0f;

struct BadCase {
  const char* what;
  const char* message;                    // fragment the error must contain
  void (*mutate)(Inputs*, std::vector<float>* rois5);
};

class ValidationTest : public ::testing::TestWithParam<std::tuple<std::string, Layout, DType>> {};

TEST_P(ValidationTest, RefusesBadDataAndLeavesOutputUntouched) {
  Params params;
  params.pooled_height = params.pooled_width = 2;
  params.sampling_ratio = 0;
  params.layout = std::get<1>(GetParam());
  params.dtype = std::get<2>(GetParam());
  Selection sel = SelectKernel(std::get<0>(GetParam()), params);
  ASSERT_TRUE(sel.ok()) << sel.status().message();

  static const BadCase kCases[] = {
      {"batch index >= N", "roi 1: batch index 2 is outside [0, 2)", [](Inputs*, std::vector<float>* r) { (*r)[5] = 2; }},
      {"negative batch index", "roi 0: batch index -1", [](Inputs*, std::vector<float>* r) { (*r)[0] = -1; }},
      {"fractional batch index", "roi 1: batch index 0.5 is not an integer",
       [](Inputs*, std::vector<float>* r) { (*r)[5] = 0.5f; }},
      {"NaN batch index", "roi 0: batch index nan is not an integer",
       [](Inputs*, std::vector<float>* r) { (*r)[0] = NAN; }},
      {"NaN coordinate", "roi 1: y1 is not finite", [](Inputs*, std::vector<float>* r) { (*r)[7] = NAN; }},
      {"infinite coordinate", "roi 0: x2 is not finite", [](Inputs*, std::vector<float>* r) { (*r)[3] = INFINITY; }},
      {"huge RoI (adaptive grid cap)", "roi 1: adaptive sampling grid",
       [](Inputs*, std::vector<float>* r) { (*r)[9] = 1e30f; }},
      {"negative shape", "shape must be non-negative", [](Inputs* in, std::vector<float>*) { in->height = -1; }},
      {"negative K", "shape must be non-negative", [](Inputs* in, std::vector<float>*) { in->num_rois = -1; }},
      {"H == 0 with RoIs", "height and width must be >= 1", [](Inputs* in, std::vector<float>*) { in->height = 0; }},
      {"null input", "input is null", [](Inputs* in, std::vector<float>*) { in->input = nullptr; }},
      {"null rois", "rois is null", [](Inputs* in, std::vector<float>*) { in->rois = nullptr; }},
      {"input size overflows", "input shape overflows",
       [](Inputs* in, std::vector<float>*) { in->batch = std::numeric_limits<int64_t>::max() / 2; }},
      {"output size overflows", "output shape overflows",
       [](Inputs* in, std::vector<float>*) { in->num_rois = std::numeric_limits<int64_t>::max() / 3; }},
  };
  std::vector<float> map(2 * 3 * 6 * 7, 0.5f);
  for (const BadCase& c : kCases) {
    std::vector<float> rois = {0, 1, 1, 4, 4, 1, 0, 0, 5, 3};
    Inputs in;
    in.input = map.data();
    in.batch = 2;
    in.channels = 3;
    in.height = 6;
    in.width = 7;
    in.num_rois = 2;
    c.mutate(&in, &rois);
    if (in.rois != nullptr || std::string(c.what) != "null rois") in.rois = rois.data();
    if (std::string(c.what) == "null rois") in.rois = nullptr;
    std::vector<float> out(2 * 3 * 4 + 16, kCanary);
    const Status s = sel->Run(in, out.data(), 2);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.what;
    EXPECT_NE(s.message().find(c.message), std::string::npos) << c.what << ": message was '" << s.message() << "'";
    EXPECT_EQ(out, std::vector<float>(out.size(), kCanary)) << c.what << " wrote to the output";
  }
}

TEST_P(ValidationTest, BadBatchIndexInK4FormatAndLaterRoiStillNothingWritten) {
  Params params;
  params.layout = std::get<1>(GetParam());
  params.dtype = std::get<2>(GetParam());
  Selection sel = SelectKernel(std::get<0>(GetParam()), params);
  ASSERT_TRUE(sel.ok());
  std::vector<float> map(1 * 2 * 4 * 4, 1.0f);
  std::vector<float> rois(4 * 50, 1.0f);
  std::vector<int64_t> idx(50, 0);
  idx[49] = 1;  // only the last RoI is bad: the first 49 must not have been written either
  Inputs in;
  in.input = map.data();
  in.batch = 1;
  in.channels = 2;
  in.height = in.width = 4;
  in.rois = rois.data();
  in.batch_indices = idx.data();
  in.num_rois = 50;
  std::vector<float> out(50 * 2 * 49, kCanary);
  const Status s = sel->Run(in, out.data());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("roi 49: batch index 1 is outside [0, 1)"), std::string::npos) << s.message();
  EXPECT_EQ(out, std::vector<float>(out.size(), kCanary));
}

// Byte sizes use the dtype's element size: 2^61 elements overflow int64 as f32 bytes but not as 16-bit ones.
TEST_P(ValidationTest, ByteSizeOfTheDtype) {
  Params params;
  params.layout = std::get<1>(GetParam());
  params.dtype = std::get<2>(GetParam());
  Selection sel = SelectKernel(std::get<0>(GetParam()), params);
  ASSERT_TRUE(sel.ok());
  const float map = 0.0f;
  Inputs in;
  in.input = &map;
  in.batch = int64_t{1} << 58;
  in.channels = 8;
  in.height = in.width = 1;
  float out = kCanary;
  const Status s = sel->Run(in, &out);  // no RoIs: nothing is read or written
  if (params.dtype == DType::kF32) {
    EXPECT_NE(s.message().find("input shape overflows"), std::string::npos) << s.message();
  } else {
    EXPECT_TRUE(s.ok()) << s.message();
  }
  EXPECT_EQ(out, kCanary);
}

INSTANTIATE_TEST_SUITE_P(Targets, ValidationTest,
                         ::testing::Combine(::testing::Values("generic", "host"),
                                            ::testing::Values(Layout::kNCHW, Layout::kNHWC),
                                            ::testing::Values(DType::kF32, DType::kF16, DType::kBF16)));

// Attribute errors are refused at selection with INVALID_ARGUMENT.
TEST(SelectValidation, RefusesBadAttributes) {
  struct Case {
    const char* what;
    void (*mutate)(Params*);
    const char* message;
  } cases[] = {
      {"PH = 0", [](Params* p) { p->pooled_height = 0; }, "pooled_height and pooled_width must be >= 1"},
      {"PW < 0", [](Params* p) { p->pooled_width = -3; }, "must be >= 1"},
      {"PH too large", [](Params* p) { p->pooled_height = ROIALIGN_MAX_POOLED_SIZE + 1; }, "exceeds the limit"},
      {"scale 0", [](Params* p) { p->spatial_scale = 0.0f; }, "spatial_scale must be finite and > 0"},
      {"scale NaN", [](Params* p) { p->spatial_scale = NAN; }, "spatial_scale"},
      {"scale inf", [](Params* p) { p->spatial_scale = INFINITY; }, "spatial_scale"},
      {"scale negative", [](Params* p) { p->spatial_scale = -0.25f; }, "spatial_scale"},
      {"ratio too large", [](Params* p) { p->sampling_ratio = ROIALIGN_MAX_SAMPLING_GRID + 1; }, "sampling_ratio"},
      {"bad layout", [](Params* p) { p->layout = static_cast<Layout>(7); }, "unknown layout value 7"},
      {"bad dtype", [](Params* p) { p->dtype = static_cast<DType>(-1); }, "unknown dtype value -1"},
      {"bad pool", [](Params* p) { p->pool_mode = static_cast<PoolMode>(3); }, "unknown pool mode value 3"},
      {"bad coord", [](Params* p) { p->coordinate_mode = static_cast<CoordinateMode>(9); }, "unknown coordinate mode"},
  };
  for (const Case& c : cases) {
    for (const char* target : {"host", "generic"}) {
      Params params;
      c.mutate(&params);
      Selection r = SelectKernel(target, params);
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.what;
      EXPECT_NE(r.status().message().find(c.message), std::string::npos) << c.what << ": " << r.status().message();
    }
  }
}

TEST(RunValidation, EmptyKernelIsRefused) {
  KernelHandle k;
  std::vector<float> out(4, kCanary);
  EXPECT_EQ(k.Run(Inputs(), out.data()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(out, std::vector<float>(4, kCanary));
}

}  // namespace
}  // namespace testing
}  // namespace roialign
