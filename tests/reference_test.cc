// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The scalar reference ("generic" target) against values worked out by hand, and the edge cases of docs/semantics.md.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/test_util.h"

namespace roialign {
namespace testing {
namespace {

// 5x5 map holding v(y, x) = 5y + x (0..24). Bilinear interpolation of a linear function is exact inside the
// map, so every sample value is 5y + x of its position.
Problem Ramp5x5() {
  Problem p;
  p.h = p.w = 5;
  for (int i = 0; i < 25; ++i) p.input.push_back(static_cast<float>(i));
  return p;
}

Params Golden(CoordinateMode coord, PoolMode pool) {
  Params params;
  params.pooled_height = params.pooled_width = 4;
  params.spatial_scale = 1.0f;
  params.sampling_ratio = 2;
  params.coordinate_mode = coord;
  params.pool_mode = pool;
  return params;
}

// Box (1,1,3,3), 4x4 bins, sampling ratio 2.
// LEGACY: start 1, roi 2, bin 0.5; samples of bin ph at 1 + 0.5ph + {0.125, 0.375}: mean 1.25 + 0.5ph.
//   AVG = 5(1.25 + 0.5ph) + (1.25 + 0.5pw) = 7.5 + 2.5ph + 0.5pw.
//   MAX (largest sample, 1.375 + 0.5p on each axis) = 8.25 + 2.5ph + 0.5pw.
// HALF_PIXEL: everything shifts by -0.5 on both axes: AVG = 4.5 + 2.5ph + 0.5pw.
TEST(ReferenceGolden, Ramp5x5Box1133) {
  Problem p = Ramp5x5();
  AddRoi(&p, 0, 1, 1, 3, 3);
  struct Case {
    CoordinateMode coord;
    PoolMode pool;
    float base;
  } cases[] = {{CoordinateMode::kLegacy, PoolMode::kAvg, 7.5f},
               {CoordinateMode::kLegacy, PoolMode::kMax, 8.25f},
               {CoordinateMode::kHalfPixel, PoolMode::kAvg, 4.5f},
               {CoordinateMode::kHalfPixel, PoolMode::kMax, 5.25f}};
  for (const Case& c : cases) {
    for (Layout layout : {Layout::kNCHW, Layout::kNHWC}) {
      Params params = Golden(c.coord, c.pool);
      params.layout = layout;
      const std::vector<float> out = RunOrFail("generic", params, p);
      for (int ph = 0; ph < 4; ++ph) {
        for (int pw = 0; pw < 4; ++pw) {
          EXPECT_NEAR(out[ph * 4 + pw], c.base + 2.5f * static_cast<float>(ph) + 0.5f * static_cast<float>(pw), 1e-5f)
              << ToString(c.coord) << " " << ToString(c.pool) << " bin " << ph << "," << pw;
        }
      }
    }
  }
}

// HALF_PIXEL_CENTERED adds 0.5 before scaling: with scale 1 it equals LEGACY without the size clamp.
TEST(ReferenceGolden, HalfPixelCenteredScaleOne) {
  Problem p = Ramp5x5();
  AddRoi(&p, 0, 1, 1, 3, 3);
  const std::vector<float> out = RunOrFail("generic", Golden(CoordinateMode::kHalfPixelCentered, PoolMode::kAvg), p);
  for (int i = 0; i < 16; ++i) {
    EXPECT_NEAR(out[i], 7.5f + 2.5f * static_cast<float>(i / 4) + 0.5f * static_cast<float>(i % 4), 1e-5f);
  }
}

// One sample per bin at a chosen position: box [pos - 0.5, pos + 0.5] with LEGACY, 1x1 bins, ratio 1.
float SampleAt(const Problem& p, float y, float x, PoolMode pool = PoolMode::kAvg) {
  Problem q = p;
  AddRoi(&q, 0, x - 0.5f, y - 0.5f, x + 0.5f, y + 0.5f);
  Params params;
  params.pooled_height = params.pooled_width = 1;
  params.sampling_ratio = 1;
  params.pool_mode = pool;
  return RunOrFail("generic", params, q)[0];
}

TEST(ReferenceBoundary, InclusiveEdgesSnap) {
  Problem p = Ramp5x5();  // H = W = 5
  EXPECT_FLOAT_EQ(SampleAt(p, -1.0f, 2.0f), 2.0f);          // y == -1 is inside and snaps to row 0
  EXPECT_FLOAT_EQ(SampleAt(p, 2.0f, -1.0f), 10.0f);         // x == -1 likewise
  EXPECT_FLOAT_EQ(SampleAt(p, 5.0f, 2.0f), 22.0f);          // y == H snaps to row H-1
  EXPECT_FLOAT_EQ(SampleAt(p, 2.0f, 5.0f), 14.0f);          // x == W snaps to column W-1
  EXPECT_FLOAT_EQ(SampleAt(p, 4.5f, 2.0f), 22.0f);          // y in (H-1, H]: row H-1, no interpolation
  EXPECT_FLOAT_EQ(SampleAt(p, -0.5f, 2.0f), 2.0f);          // y in [-1, 0): clamped to 0
  EXPECT_FLOAT_EQ(SampleAt(p, -1.0625f, 2.0f), 0.0f);       // just outside: the sample is 0
  EXPECT_FLOAT_EQ(SampleAt(p, 2.0f, 5.0625f), 0.0f);
  EXPECT_FLOAT_EQ(SampleAt(p, 1.5f, 2.25f), 5.0f * 1.5f + 2.25f);  // interior: exact bilinear
}

// Degenerate (zero-size) and inverted boxes in every coordinate mode, fixed and adaptive grids.
TEST(ReferenceBoundary, DegenerateAndInvertedBoxes) {
  Problem p = Ramp5x5();
  AddRoi(&p, 0, 2, 2, 2, 2);  // zero size at (2, 2)
  AddRoi(&p, 0, 3, 3, 1, 1);  // inverted
  for (CoordinateMode coord :
       {CoordinateMode::kLegacy, CoordinateMode::kHalfPixel, CoordinateMode::kHalfPixelCentered,
            CoordinateMode::kLegacyUnclamped}) {
    Params params;
    params.pooled_height = params.pooled_width = 1;
    params.coordinate_mode = coord;
    params.sampling_ratio = 0;  // adaptive
    const std::vector<float> adaptive = RunOrFail("generic", params, p);
    if (coord == CoordinateMode::kLegacy) {
      // LEGACY clamps the size to 1: one sample at the box start + 0.5 → (2.5, 2.5) → 15.
      EXPECT_FLOAT_EQ(adaptive[0], 5 * 2.5f + 2.5f);
      // Inverted: size clamped to 1 from start 3: sample at 3.5 → 21.
      EXPECT_FLOAT_EQ(adaptive[1], 5 * 3.5f + 3.5f);
    } else {
      // Size 0 or negative: ceil(size / 1) <= 0 → empty grid → 0.
      EXPECT_EQ(adaptive[0], 0.0f) << ToString(coord);
      EXPECT_EQ(adaptive[1], 0.0f) << ToString(coord);
    }
    params.sampling_ratio = 2;
    const std::vector<float> fixed = RunOrFail("generic", params, p);
    if (coord == CoordinateMode::kHalfPixel) {
      // Zero size: both samples at 2 - 0.5 = 1.5 → 9.
      EXPECT_FLOAT_EQ(fixed[0], 5 * 1.5f + 1.5f);
      // Inverted: start 2.5, size -2: samples walk backwards to 2.0 and 1.0, mean 1.5 → 9.
      EXPECT_FLOAT_EQ(fixed[1], 5 * 1.5f + 1.5f);
    }
  }
}

// The adaptive grid is ceil(roi / pooled) per axis: a 4.5-pixel box with 2 bins samples 3 x 3 per bin.
TEST(ReferenceBoundary, AdaptiveGridSize) {
  Problem p = Ramp5x5();
  AddRoi(&p, 0, 0, 0, 4.5f, 4.5f);
  Params params;
  params.pooled_height = params.pooled_width = 2;
  params.sampling_ratio = 0;
  params.coordinate_mode = CoordinateMode::kHalfPixel;  // start -0.5, size 4.5, bin 2.25, grid 3
  const std::vector<float> out = RunOrFail("generic", params, p);
  // Bin 0 samples at -0.5 + 2.25 * (i + 0.5) / 3 = {-0.125, 0.625, 1.375}; the first clamps to 0.
  const float mean0 = (0.0f + 0.625f + 1.375f) / 3.0f;
  EXPECT_NEAR(out[0], 5 * mean0 + mean0, 1e-5f);
}

// All-negative data: MAX must not floor at 0; MAX_ONNX takes the largest weighted tap, not the sample.
TEST(ReferencePoolModes, AllNegativeData) {
  Problem p;
  p.h = p.w = 2;
  p.input = {-1.0f, -2.0f, -3.0f, -4.0f};
  AddRoi(&p, 0, 0.25f, 0.25f, 0.75f, 0.75f);  // one bin, ratio 1: sample at (0.5, 0.5)
  Params params;
  params.pooled_height = params.pooled_width = 1;
  params.sampling_ratio = 1;
  params.coordinate_mode = CoordinateMode::kHalfPixelCentered;  // start 0.25, size 0.5, sample at 0.5
  params.pool_mode = PoolMode::kAvg;
  EXPECT_FLOAT_EQ(RunOrFail("generic", params, p)[0], -2.5f);  // mean of the four corners
  params.pool_mode = PoolMode::kMax;
  EXPECT_FLOAT_EQ(RunOrFail("generic", params, p)[0], -2.5f);  // one sample: its value, negative
  params.pool_mode = PoolMode::kMaxOnnx;
  EXPECT_FLOAT_EQ(RunOrFail("generic", params, p)[0], -0.25f);  // max of 0.25 * {-1,-2,-3,-4}
}

// Mixed signs: MAX_ONNX (max over taps) differs from MAX (max over samples of the tap sum).
TEST(ReferencePoolModes, MaxOnnxDiffersFromMaxOnMixedSigns) {
  Problem p;
  p.h = p.w = 2;
  p.input = {4.0f, -4.0f, -4.0f, 4.0f};
  AddRoi(&p, 0, 0.25f, 0.25f, 0.75f, 0.75f);
  Params params;
  params.pooled_height = params.pooled_width = 1;
  params.sampling_ratio = 1;
  params.coordinate_mode = CoordinateMode::kHalfPixelCentered;
  params.pool_mode = PoolMode::kMax;
  EXPECT_FLOAT_EQ(RunOrFail("generic", params, p)[0], 0.0f);  // 0.25 * (4 - 4 - 4 + 4)
  params.pool_mode = PoolMode::kMaxOnnx;
  EXPECT_FLOAT_EQ(RunOrFail("generic", params, p)[0], 1.0f);  // 0.25 * 4
}

// A sample outside the map is 0 in every mode, also for MAX over negative data.
TEST(ReferencePoolModes, OutsideSampleIsZeroForMax) {
  Problem p;
  p.h = p.w = 2;
  p.input = {-1.0f, -1.0f, -1.0f, -1.0f};
  AddRoi(&p, 0, -10.0f, 0.0f, 1.0f, 1.0f);  // x samples from -9.725.. → the first ones are outside
  Params params;
  params.pooled_height = params.pooled_width = 1;
  params.sampling_ratio = 4;
  for (PoolMode mode : {PoolMode::kMax, PoolMode::kMaxOnnx}) {
    params.pool_mode = mode;
    EXPECT_FLOAT_EQ(RunOrFail("generic", params, p)[0], 0.0f) << ToString(mode);
  }
  params.pool_mode = PoolMode::kAvg;
  const float avg = RunOrFail("generic", params, p)[0];
  EXPECT_LT(avg, 0.0f);
  EXPECT_GT(avg, -1.0f);  // the outside samples pull the average toward 0
}

// [K,4] + indices equals [K,5]; NHWC output equals the transposed NCHW output.
TEST(ReferenceFormats, RoiFormatsAndLayoutsAgree) {
  std::mt19937 rng(7);
  const Problem p = RandomProblem(&rng, 2, 5, 9, 11, 20, 0.5f);
  for (PoolMode mode : {PoolMode::kAvg, PoolMode::kMax, PoolMode::kMaxOnnx}) {
    Params params;
    params.pooled_height = 3;
    params.pooled_width = 4;
    params.spatial_scale = 0.5f;
    params.sampling_ratio = 0;
    params.pool_mode = mode;
    const std::vector<float> nchw5 = RunOrFail("generic", params, p, false);
    const std::vector<float> nchw4 = RunOrFail("generic", params, p, true);
    EXPECT_EQ(nchw5, nchw4);
    params.layout = Layout::kNHWC;
    const std::vector<float> nhwc = RunOrFail("generic", params, p, true);
    EXPECT_EQ(ToNhwc(nchw5, p.k(), p.c, 3, 4), nhwc);  // the output is [K, C, PH, PW] as an "image"
  }
}

TEST(ReferenceFormats, EmptyProblemsWriteNothing) {
  Problem p;
  p.c = 0;
  p.h = p.w = 3;
  AddRoi(&p, 0, 0, 0, 2, 2);
  Params params;
  std::vector<float> canary(4, 42.0f);
  Selection sel = SelectKernel("generic", params);
  ASSERT_TRUE(sel.ok());
  Inputs in;
  in.batch = 1;
  in.channels = 0;
  in.height = in.width = 3;
  in.rois = p.rois5.data();
  in.num_rois = 1;
  EXPECT_TRUE(sel->Run(in, canary.data()).ok());  // C == 0
  in.channels = 2;
  std::vector<float> map(18, 1.0f);
  in.input = map.data();
  in.num_rois = 0;
  in.rois = nullptr;
  EXPECT_TRUE(sel->Run(in, canary.data()).ok());  // K == 0
  EXPECT_EQ(canary, std::vector<float>(4, 42.0f));
}

}  // namespace
}  // namespace testing
}  // namespace roialign
