// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The limit's counts (bench/limit.h) against the semantics: the operations bound is D - B of the pixels and bins
// the scalar reference really depends on, the input bytes are the pixels whose Inf reaches the output, and on
// every standard workload in every pool mode the bound never exceeds what the kernels execute. The bin line counts
// against lines counted by hand, and their order across layouts on the standard workloads.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "bench/limit.h"
#include "bench/workloads.h"
#include "core/enums.h"

namespace roialign {
namespace bench {
namespace {

// The reference ("generic") on a C=1 NCHW map of H x W with K RoIs [K, 5] ([K, 6] rotated).
std::vector<float> Reference(const Params& params, const std::vector<float>& map, int64_t H, int64_t W,
                             const std::vector<float>& rois) {
  const Selection sel = SelectKernel("generic", params);
  EXPECT_TRUE(sel.ok()) << sel.status().message();
  Inputs in;
  in.input = map.data();
  in.batch = 1;
  in.channels = 1;
  in.height = H;
  in.width = W;
  in.rois = rois.data();
  in.num_rois = static_cast<int64_t>(rois.size()) / internal::RoiColumns(params.roi_kind, false);
  std::vector<float> out(static_cast<size_t>(in.num_rois * params.pooled_height * params.pooled_width), -777.0f);
  const Status s = sel->Run(in, out.data(), 1);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

// Boxes (image coordinates, scale 1) inside, across the border of, and outside a 7 x 6 map; tiny, wide, inverted.
const std::vector<std::vector<float>> kBoxes = {
    {0, 1.2f, 0.7f, 5.9f, 4.4f}, {0, 0.0f, 0.0f, 6.0f, 5.0f},  {0, 2.3f, 1.1f, 2.6f, 1.3f},
    {0, -2.5f, -1.7f, 3.1f, 2.2f}, {0, 4.1f, 3.3f, 9.8f, 8.6f}, {0, 3.0f, 2.0f, 3.0f, 2.0f},
    {0, 5.5f, 4.2f, 1.5f, 0.5f},  {0, -9.0f, -9.0f, -3.0f, -2.0f}, {0, 0.25f, 0.5f, 6.75f, 1.5f}};

TEST(LimitTest, OpsBoundIsDistinctPixelsMinusBinsOfTheReference) {
  const int64_t H = 6, W = 7;
  for (CoordinateMode coord :
       {CoordinateMode::kLegacy, CoordinateMode::kHalfPixel, CoordinateMode::kHalfPixelCentered,
        CoordinateMode::kLegacyUnclamped}) {
    for (PoolMode pool : {PoolMode::kAvg, PoolMode::kMax, PoolMode::kMaxOnnx}) {
      for (int32_t ratio : {0, 1, 2, 3}) {
        for (int64_t pooled : {1, 2, 3}) {
          Params params;
          params.pooled_height = params.pooled_width = pooled;
          params.sampling_ratio = ratio;
          params.coordinate_mode = coord;
          params.pool_mode = pool;
          for (const std::vector<float>& box : kBoxes) {
            // dep[b][p]: bin b of this box changes when pixel p goes from 0 to 1.
            const size_t bins = static_cast<size_t>(pooled * pooled);
            std::vector<std::vector<bool>> dep(bins, std::vector<bool>(static_cast<size_t>(H * W), false));
            for (int64_t p = 0; p < H * W; ++p) {
              std::vector<float> map(static_cast<size_t>(H * W), 0.0f);
              map[static_cast<size_t>(p)] = 1.0f;
              const std::vector<float> out = Reference(params, map, H, W, box);
              for (size_t b = 0; b < bins; ++b) dep[b][static_cast<size_t>(p)] = out[b] != 0.0f;
            }
            int64_t pixels = 0, dependent_bins = 0;
            for (int64_t p = 0; p < H * W; ++p) {
              bool any = false;
              for (size_t b = 0; b < bins; ++b) any = any || dep[b][static_cast<size_t>(p)];
              pixels += any ? 1 : 0;
            }
            for (size_t b = 0; b < bins; ++b) {
              bool any = false;
              for (int64_t p = 0; p < H * W; ++p) any = any || dep[b][static_cast<size_t>(p)];
              dependent_bins += any ? 1 : 0;
            }
            const internal::AxisGeometry gy = internal::AxisOf(box[2], box[4], pooled, params);
            const internal::AxisGeometry gx = internal::AxisOf(box[1], box[3], pooled, params);
            EXPECT_EQ(RoiOpsLowerBound(gy, gx, pooled, H, W),
                      static_cast<double>(std::max<int64_t>(0, pixels - dependent_bins)))
                << ToString(coord) << " " << ToString(pool) << " ratio " << ratio << " pooled " << pooled << " box ("
                << box[1] << ", " << box[2] << ", " << box[3] << ", " << box[4] << ")";
          }
        }
      }
    }
  }
}

// Every pixel a valid tap touches must be read: an Inf there makes the AVG output non-finite (0 * Inf is NaN),
// and no other pixel does.
TEST(LimitTest, DistinctInputBytesAreThePixelsWhoseInfReachesTheOutput) {
  for (const char* coord : {"LEGACY", "HALF_PIXEL", "HALF_PIXEL_CENTERED"}) {
    WorkloadSpec spec = StandardWorkloads()[0];
    spec.channels = 1;
    spec.height = 9;
    spec.width = 11;
    spec.num_rois = 6;
    spec.sampling_ratio = 0;
    ASSERT_TRUE(internal::ParseEnum(coord, &spec.coordinate_mode));
    spec.image_width = 44;
    spec.image_height = 36;
    spec.min_roi = 2;
    spec.max_roi = 30;
    const Workload w = MakeWorkload(spec);
    const Params params = w.ParamsFor(Layout::kNCHW);
    int64_t read = 0;
    for (int64_t p = 0; p < spec.height * spec.width; ++p) {
      std::vector<float> map(static_cast<size_t>(spec.height * spec.width), 0.0f);
      map[static_cast<size_t>(p)] = std::numeric_limits<float>::infinity();
      bool reaches = false;
      for (float v : Reference(params, map, spec.height, spec.width, w.rois)) reaches = reaches || !std::isfinite(v);
      read += reaches ? 1 : 0;
    }
    EXPECT_EQ(w.distinct_input_bytes, 4.0 * static_cast<double>(read)) << coord;
    EXPECT_EQ(w.output_bytes, 4.0 * static_cast<double>(spec.num_rois * spec.pooled * spec.pooled)) << coord;
  }
}

// The same two checks for rotated RoIs, whose samples are not separable (each has its own four taps): on a small
// rotated workload of every angle, the operations bound is the sum over RoIs of D - B of what the reference depends
// on (one-hot maps), and the input bytes are the pixels whose Inf reaches the output, in every pool mode and grid.
TEST(LimitTest, RotatedCountsAreWhatTheReferenceDependsOn) {
  for (CoordinateMode coord : {CoordinateMode::kHalfPixel, CoordinateMode::kLegacy}) {
    for (PoolMode pool : {PoolMode::kAvg, PoolMode::kMax, PoolMode::kMaxOnnx}) {
      for (int32_t ratio : {0, 2}) {
        WorkloadSpec spec = *FindWorkload("rotated");
        spec.channels = 1;
        spec.height = 9;
        spec.width = 11;
        spec.num_rois = 8;
        spec.pooled = 3;
        spec.sampling_ratio = ratio;
        spec.coordinate_mode = coord;
        spec.pool_mode = pool;
        spec.image_width = 44;
        spec.image_height = 36;
        spec.min_roi = 2;
        spec.max_roi = 40;
        const Workload w = MakeWorkload(spec);
        const Params params = w.ParamsFor(Layout::kNCHW);
        const int64_t H = spec.height, W = spec.width, K = spec.num_rois, bins = spec.pooled * spec.pooled;
        // dep[k * bins + b][p]: bin b of RoI k changes when pixel p goes from 0 to 1; inf: pixels whose Inf reaches.
        std::vector<std::vector<bool>> dep(static_cast<size_t>(K * bins), std::vector<bool>(static_cast<size_t>(H * W)));
        int64_t read = 0;
        for (int64_t p = 0; p < H * W; ++p) {
          std::vector<float> map(static_cast<size_t>(H * W), 0.0f);
          map[static_cast<size_t>(p)] = 1.0f;
          const std::vector<float> out = Reference(params, map, H, W, w.rois);
          for (size_t i = 0; i < dep.size(); ++i) dep[i][static_cast<size_t>(p)] = out[i] != 0.0f;
          map[static_cast<size_t>(p)] = std::numeric_limits<float>::infinity();
          bool reaches = false;
          for (float v : Reference(params, map, H, W, w.rois)) reaches = reaches || !std::isfinite(v);
          read += reaches ? 1 : 0;
        }
        double bound = 0;
        for (int64_t k = 0; k < K; ++k) {
          int64_t pixels = 0, dependent_bins = 0;
          for (int64_t p = 0; p < H * W; ++p) {
            bool any = false;
            for (int64_t b = 0; b < bins; ++b) any = any || dep[static_cast<size_t>(k * bins + b)][static_cast<size_t>(p)];
            pixels += any ? 1 : 0;
          }
          for (int64_t b = 0; b < bins; ++b) {
            bool any = false;
            for (int64_t p = 0; p < H * W; ++p) any = any || dep[static_cast<size_t>(k * bins + b)][static_cast<size_t>(p)];
            dependent_bins += any ? 1 : 0;
          }
          bound += static_cast<double>(std::max<int64_t>(0, pixels - dependent_bins));
        }
        const std::string what = std::string(ToString(coord)) + " " + ToString(pool) + " ratio " + std::to_string(ratio);
        EXPECT_GT(bound, 0.0) << what;
        EXPECT_EQ(w.ops_bound, bound) << what;
        if (pool == PoolMode::kAvg) {  // a MAX may drop a NaN: the Inf argument is AVG's
          EXPECT_EQ(w.distinct_input_bytes, 4.0 * static_cast<double>(read)) << what;
        }
        EXPECT_LE(w.ops_bound, w.loaded_bytes / 4.0) << what;
        EXPECT_LE(w.loaded_bytes / 4.0, w.fmas) << what;
      }
    }
  }
}

// The bound against what the kernels execute on every standard workload and pool mode: the AVG kernels one FMA
// per distinct pixel of each bin (merged taps, loaded_bytes / 4), the MAX kernels four taps per valid sample;
// both at most the direct count.
TEST(LimitTest, OpsBoundNeverExceedsTheKernelsWork) {
  for (const WorkloadSpec& standard : StandardWorkloads()) {
    for (PoolMode pool : {PoolMode::kAvg, PoolMode::kMax, PoolMode::kMaxOnnx}) {
      WorkloadSpec spec = standard;
      spec.pool_mode = pool;
      spec.channels = 1;  // the counts scale with C; the map's values do not matter here
      const Workload w = MakeWorkload(spec);
      EXPECT_GT(w.ops_bound, 0.0) << spec.name;
      EXPECT_LE(w.ops_bound, w.loaded_bytes / 4.0) << spec.name << " " << ToString(pool);
      EXPECT_LE(w.loaded_bytes / 4.0, w.fmas) << spec.name << " " << ToString(pool);
    }
  }
}

// One bin of one sample: its taps read pixel rows (3, 4) and columns (x0, x0 + 1) of an 8 x 8 map.
double OneSampleLines(float x0, int64_t C, Layout layout) {
  const internal::AxisGeometry gy = {3.0f, 0.5f, 0.5f, 1}, gx = {x0, 0.5f, 0.5f, 1};  // the sample a quarter in
  return RoiBinLines(gy, gx, 1, 8, 8, C, layout);
}

// Counted by hand: an f32 pixel pair starting at an odd pixel of 32 bytes straddles two lines, at an even one it
// fills one; 64-byte pixels take a line each; a 1 KiB NHWC pixel 16; every plane counts.
TEST(LimitTest, BinLinesCountTheLinesOfEachPlaneAPixelPairTouches) {
  EXPECT_EQ(OneSampleLines(2.0f, 8, Layout::kNCHW8c), 2 * 1);
  EXPECT_EQ(OneSampleLines(1.0f, 8, Layout::kNCHW8c), 2 * 2);
  EXPECT_EQ(OneSampleLines(1.0f, 8, Layout::kNHWC), 2 * 2);
  EXPECT_EQ(OneSampleLines(1.0f, 24, Layout::kNCHW8c), 3 * 2 * 2);
  EXPECT_EQ(OneSampleLines(0.0f, 24, Layout::kNCHW4c), 6 * 2 * 1);
  EXPECT_EQ(OneSampleLines(3.0f, 24, Layout::kNCHW4c), 6 * 2 * 2);
  EXPECT_EQ(OneSampleLines(1.0f, 32, Layout::kNCHW16c), 2 * 2 * 2);
  EXPECT_EQ(OneSampleLines(1.0f, 256, Layout::kNHWC), 2 * 2 * 16);
  // NCHW: a plane per channel, 4-byte pixels; both pairs lie inside one line of their row.
  EXPECT_EQ(OneSampleLines(1.0f, 3, Layout::kNCHW), 3 * 2 * 1);
  // 20 channels of NCHW8c are 3 planes, the last one padded.
  EXPECT_EQ(OneSampleLines(1.0f, 20, Layout::kNCHW8c), 3 * 2 * 2);
  // NCHW4c rows of 5 pixels (80 bytes) start mid-line: row 3 at byte 240, so pixels 0 and 1 straddle lines 3 and
  // 4; row 4 at byte 320 holds them in line 5.
  const internal::AxisGeometry gy = {3.0f, 0.5f, 0.5f, 1}, gx = {0.0f, 0.5f, 0.5f, 1};
  EXPECT_EQ(RoiBinLines(gy, gx, 1, 8, 5, 4, Layout::kNCHW4c), 2 + 1);
  EXPECT_EQ(RoiBinLines(gy, gx, 1, 8, 5, 0, Layout::kNHWC), 0);
  // A 12-float NHWC pixel (48 bytes) starts mid-line: pixels 1 and 2 are bytes [48, 144), three lines.
  EXPECT_EQ(OneSampleLines(1.0f, 12, Layout::kNHWC), 2 * 3);
}

// On the standard workloads' RoIs, with 16 channels (one line per NHWC pixel): NCHW16c reads NHWC's lines, narrower
// blocks more, the narrowest most.
TEST(LimitTest, NarrowBlocksReadMoreLinesThanNhwc) {
  for (WorkloadSpec spec : StandardWorkloads()) {
    spec.channels = 16;
    const Workload w = MakeWorkload(spec);
    EXPECT_GT(w.bin_lines[0], 0.0) << spec.name;
    EXPECT_EQ(w.bin_lines[1 + BlockedIndex(Layout::kNCHW16c)], w.bin_lines[0]) << spec.name;
    EXPECT_GT(w.bin_lines[1 + BlockedIndex(Layout::kNCHW8c)], w.bin_lines[0]) << spec.name;
    EXPECT_GT(w.bin_lines[1 + BlockedIndex(Layout::kNCHW4c)], w.bin_lines[1 + BlockedIndex(Layout::kNCHW8c)])
        << spec.name;
  }
}

}  // namespace
}  // namespace bench
}  // namespace roialign
