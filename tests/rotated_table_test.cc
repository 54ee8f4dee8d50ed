// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The call's table of rotated samples' taps (execution/rotated_table.h): the plans size it, and the forward's
// driver and every backward give the same bits from it as from the taps they find themselves, the path of a call
// whose table would pass its limit.
#include <gtest/gtest.h>

#include <hwy/targets.h>

#include <algorithm>
#include <cmath>
#include <memory_resource>
#include <random>
#include <vector>

#include "core/enums.h"
#include "execution/execute.h"
#include "execution/execute_backward.h"
#include "execution/parallel.h"
#include "execution/plan.h"
#include "execution/rotated_table.h"
#include "execution/validate_data.h"
#include "execution/working_memory.h"
#include "kernels/kernel_descriptor.h"
#include "kernels/roi_geometry.h"
#include "strategy/registry.h"
#include "tests/test_util.h"

namespace roialign {
namespace testing {
namespace {

using internal::GradientRange;

constexpr unsigned char kNanByte = 0xFF;  // an element of 0xFF bytes is a NaN in f32, f16 and bf16 alike

// A map of 12 channels on 11 x 13 pixels (values in quarters: ties for the MAX modes) and 9 rotated RoIs of every
// angle, inside, across and outside it, validated for `params` into a problem over `map` (in params.layout and
// params.dtype).
struct RotatedCall {
  std::vector<unsigned char> map;
  std::vector<float> rows;
  std::vector<double> rows_f64;
  std::pmr::vector<internal::RoiAxes> axes;
  std::pmr::vector<internal::RoiAxesOf<double>> axes_f64;
  internal::Problem problem;
};
constexpr int64_t kC = 12, kH = 11, kW = 13, kK = 9;

Params RotatedParams(Layout layout, DType dtype, PoolMode mode) {
  Params params;
  params.layout = layout;
  params.dtype = dtype;
  params.pool_mode = mode;
  params.pooled_height = 3;
  params.pooled_width = 2;
  params.spatial_scale = 0.5f;
  params.sampling_ratio = mode == PoolMode::kAvg ? 0 : 2;
  params.coordinate_mode = CoordinateMode::kHalfPixel;
  params.roi_kind = RoiKind::kRotated;
  return params;
}

// Validates a random call into `call` (its output at `output`); false, with a failure, if validation refuses it.
bool MakeCall(std::mt19937* rng, const Params& params, void* output, RotatedCall* call) {
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> map(static_cast<size_t>(kC * kH * kW));
  for (float& v : map) v = std::round(u(*rng) * 8.0f) / 4.0f;
  call->map = StoreAs(params.dtype, ToLayout(map, params.layout, 1, kC, kH, kW));
  for (int64_t k = 0; k < kK; ++k) {
    const float row[6] = {0.0f, u(*rng) * 30.0f - 2.0f, u(*rng) * 26.0f - 2.0f, u(*rng) * 20.0f, u(*rng) * 16.0f,
                          u(*rng) * 360.0f - 180.0f};
    call->rows.insert(call->rows.end(), row, row + 6);
    call->rows_f64.insert(call->rows_f64.end(), row, row + 6);
  }
  Inputs inputs;
  inputs.input = call->map.data();
  inputs.batch = 1;
  inputs.channels = kC;
  inputs.height = kH;
  inputs.width = kW;
  inputs.num_rois = kK;
  if (params.dtype == DType::kF64) {
    inputs.rois_f64 = call->rows_f64.data();
  } else {
    inputs.rois = call->rows.data();
  }
  const Status s = params.dtype == DType::kF64
                       ? internal::ValidateData(params, inputs, output, &call->axes_f64, &call->problem)
                       : internal::ValidateData(params, inputs, output, &call->axes, &call->problem);
  EXPECT_TRUE(s.ok()) << s.message();
  return s.ok();
}

// Whether `impl` is a built-in implementation this CPU runs for `layout`.
bool Runs(const internal::Implementation& impl, Layout layout) {
  if (!impl.is_builtin() || (impl.layouts & internal::Bit(layout)) == 0) return false;
  return impl.hwy_target == 0 || (hwy::SupportedTargets() & impl.hwy_target) != 0;
}

// The forward's plan tabulates a rotated call's samples for drivers whose tasks split the channels into blocks
// (each block would find the taps again), not for one block, nor for whole-RoI kernels (F64, the reference), whose
// tasks find them once per RoI.
TEST(RotatedTable, TheForwardPlanTabulatesWhereTasksWouldFindTapsTwice) {
  std::mt19937 rng(5);
  for (DType dtype : {DType::kF32, DType::kF64}) {
    RotatedCall call;
    std::vector<unsigned char> out(static_cast<size_t>(kK * kC * 6 * internal::BytesOf(dtype)));
    ASSERT_TRUE(MakeCall(&rng, RotatedParams(Layout::kNHWC, dtype, PoolMode::kAvg), out.data(), &call));
    call.problem.channels = 256;  // planned only: blocks are whole multiples of 64 channels
    for (internal::PixelAccess access : {internal::PixelAccess::kInPlace, internal::PixelAccess::kWholeRois}) {
      for (int threads : {1, 8}) {
        const internal::Plan plan = internal::MakePlan(call.problem, access, {threads, nullptr});
        EXPECT_EQ(plan.rotated_table_bytes > 0,
                  access != internal::PixelAccess::kWholeRois && plan.channel_blocks > 1)
            << ToString(dtype) << " " << threads << " threads";
        // Where 8 threads run (not in a build without OpenMP, which runs 1 without a pool), the plan splits them.
        if (access != internal::PixelAccess::kWholeRois && threads == 8 &&
            internal::ResolveThreadCount({8, nullptr}, 1000) > 1) {
          EXPECT_GT(plan.channel_blocks, 1) << "9 RoIs on 8 threads: the plan splits channels";
        }
      }
    }
  }
}

// AVG merges a rotated bin's shared pixels from kMergePixelsChannels channels on, whatever the layout and threads: a
// decision on the call's channels, so every split of them gives the same bits.
TEST(RotatedTable, TheForwardPlanMergesPixelsFromItsChannelCount) {
  std::mt19937 rng(9);
  for (Layout layout : {Layout::kNHWC, Layout::kNCHW16c}) {
    RotatedCall call;
    std::vector<unsigned char> out(static_cast<size_t>(kK * kC * 6 * 4));
    ASSERT_TRUE(MakeCall(&rng, RotatedParams(layout, DType::kF32, PoolMode::kAvg), out.data(), &call));
    for (int64_t channels :
         {int64_t{12}, internal::kMergePixelsChannels - 1, internal::kMergePixelsChannels, int64_t{1024}}) {
      call.problem.channels = channels;  // planned only
      for (int threads : {1, 8}) {
        const internal::Plan plan =
            internal::MakePlan(call.problem, internal::PixelAccess::kInPlace, {threads, nullptr});
        EXPECT_EQ(plan.merge_rotated_pixels, channels >= internal::kMergePixelsChannels)
            << ToString(layout) << " " << channels << " channels, " << threads << " threads";
      }
    }
  }
}

// Every built-in forward driver this CPU runs (f32 and the 16-bit dtypes; F64 runs whole RoIs) gives the same bits
// from the call's table as without it, in every layout and pool mode, on 1 and 3 threads, merging AVG's pixels or
// not.
TEST(RotatedTable, TheForwardGivesTheSameBitsFromTheTable) {
  std::mt19937 rng(17);
  int64_t compared = 0;
  for (const internal::ImplementationPtr& impl : internal::AllImplementations()) {
    for (Layout layout : internal::AllValues<Layout>()) {
      if (!Runs(*impl, layout)) continue;
      for (DType dtype : internal::AllValues<DType>()) {
        const internal::KernelFns& f = impl->builtin[static_cast<size_t>(dtype)];
        const internal::PixelAccess access = internal::AccessOf(f, layout);
        if (f.pool_bin == nullptr || access == internal::PixelAccess::kWholeRois) continue;
        for (PoolMode mode : internal::AllValues<PoolMode>()) {
          const size_t bytes = OutputSize(layout, kK, kC, 3, 2) * static_cast<size_t>(internal::BytesOf(dtype));
          std::vector<std::vector<unsigned char>> outs;
          RotatedCall call;
          std::vector<unsigned char> out(bytes, kNanByte);
          ASSERT_TRUE(MakeCall(&rng, RotatedParams(layout, dtype, mode), out.data(), &call));
          for (bool merged : {false, true}) {
            outs.clear();
            for (int threads : {1, 3}) {
              for (bool tabulated : {true, false}) {
                internal::Plan plan = internal::MakePlan(call.problem, access, {threads, nullptr});
                plan.rotated_table_bytes = tabulated ? internal::RotatedTableBytes(call.problem) : 0;
                plan.merge_rotated_pixels = merged;
                ASSERT_TRUE(!tabulated || plan.rotated_table_bytes > 0) << impl->name;
                internal::WorkingMemory memory;
                internal::ReserveWorkingMemory(call.problem, plan, memory);
                std::fill(out.begin(), out.end(), kNanByte);
                internal::Execute(call.problem, plan, impl->builtin, {threads, nullptr}, memory);
                outs.push_back(out);
              }
            }
            for (size_t i = 1; i < outs.size(); ++i) {
              EXPECT_TRUE(outs[i] == outs[0]) << impl->name << " " << ToString(dtype) << " " << ToString(mode)
                                              << (merged ? " merged" : "") << " run " << i;
            }
          }
          ++compared;
        }
      }
    }
  }
  EXPECT_GE(compared, static_cast<int64_t>(internal::AllValues<Layout>().size() * 3));
}

// The backward's plan tabulates a rotated call's samples unless the table would pass 64 MiB; axis-aligned calls have
// none.
TEST(RotatedTable, TheBackwardPlanTabulatesRotatedSamplesUpToItsLimit) {
  internal::Problem problem;
  problem.params.roi_kind = RoiKind::kRotated;
  problem.params.pooled_height = problem.params.pooled_width = 7;
  problem.batch = 1;
  problem.channels = 8;
  problem.height = problem.width = 64;
  std::vector<internal::RoiAxes> axes(3);
  for (internal::RoiAxes& a : axes) a.gy.grid = a.gx.grid = 2;
  problem.axes = axes.data();
  problem.num_rois = 3;
  internal::KernelFns f;
  f.backward_scratch = [](const internal::Problem&, const GradientRange&) -> int64_t { return 1; };
  // Per RoI its offset and 57 row extents (8 bytes each): 1392 bytes, 44 records of 32 bytes; then the samples.
  const int64_t record = sizeof(internal::RotatedSampleOf<float>);
  EXPECT_EQ(internal::PlanBackward(problem, f, {1, nullptr}).rotated_table_bytes, 44 * record + 3 * 49 * 4 * record);
  axes[1].gy.grid = axes[1].gx.grid = 216;  // 49 * 216^2 samples of 32 bytes: 73 MB
  EXPECT_EQ(internal::PlanBackward(problem, f, {1, nullptr}).rotated_table_bytes, 0);
  axes[1].gy.grid = axes[1].gx.grid = 2;
  problem.params.roi_kind = RoiKind::kAxisAligned;
  EXPECT_EQ(internal::PlanBackward(problem, f, {1, nullptr}).rotated_table_bytes, 0);
}

// Every built-in backward this CPU runs gives the same bits from the call's table as from the taps it finds itself
// (the path of a call whose table would be too large), in every pool mode and dtype, over ranges of rows.
TEST(RotatedTable, TheBackwardGivesTheSameBitsFromTheTable) {
  std::mt19937 rng(43);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const int64_t C = kC, H = kH;
  int64_t compared = 0;
  for (DType dtype : internal::AllValues<DType>()) {
    for (PoolMode mode : internal::AllValues<PoolMode>()) {
      std::vector<float> dy_values(static_cast<size_t>(kK * kC * 6));
      for (float& v : dy_values) v = u(rng) - 0.5f;
      const std::vector<unsigned char> dy = StoreAs(dtype, ToLayout(dy_values, Layout::kNHWC, kK, kC, 3, 2));
      std::vector<unsigned char> y(dy.size());
      RotatedCall call;
      ASSERT_TRUE(MakeCall(&rng, RotatedParams(Layout::kNHWC, dtype, mode), y.data(), &call));
      internal::Problem& problem = call.problem;
      problem.grad_output = dy.data();
      const size_t bytes = static_cast<size_t>(kC * kH * kW * internal::BytesOf(dtype));
      for (const internal::ImplementationPtr& impl : internal::AllImplementations()) {
        const internal::KernelFns& f = impl->builtin[static_cast<size_t>(dtype)];
        if (!Runs(*impl, Layout::kNHWC) || f.whole_rois_backward == nullptr || f.backward_scratch == nullptr) continue;
        // The library's own table, as the plan sizes and fills it.
        const internal::BackwardPlan plan = internal::PlanBackward(problem, f, {1, nullptr});
        internal::WorkingMemory memory;
        internal::ReserveBackwardMemory(plan, memory);
        const internal::Problem tabulated = internal::TabulatedProblem(problem, plan, {1, nullptr}, memory);
        ASSERT_NE(tabulated.rotated_taps, nullptr);
        std::vector<std::vector<unsigned char>> dx;
        for (internal::Problem run : {problem, tabulated}) {
          std::vector<unsigned char> out(bytes, kNanByte);
          run.grad_input = out.data();
          for (const GradientRange& r : {GradientRange{0, 0, C, 0, 4}, GradientRange{0, 0, C, 4, 5},
                                         GradientRange{0, 0, C, 5, H}}) {
            std::vector<float> scratch(static_cast<size_t>(f.backward_scratch(run, r)) + 16, 0.0f);
            float* const aligned = scratch.data() + (16 - reinterpret_cast<uintptr_t>(scratch.data()) / 4 % 16) % 16;
            f.whole_rois_backward(run, r, {aligned, f.backward_scratch(run, r)});
          }
          dx.push_back(out);
        }
        EXPECT_TRUE(dx[0] == dx[1]) << impl->name << " " << ToString(dtype) << " " << ToString(mode);
        EXPECT_TRUE(std::any_of(dx[0].begin(), dx[0].end(), [](unsigned char b) { return b != 0; }))
            << impl->name << ": no RoI reached dX";
        ++compared;
      }
    }
  }
  EXPECT_GE(compared, static_cast<int64_t>(internal::AllValues<DType>().size() * 3));
}

}  // namespace
}  // namespace testing
}  // namespace roialign
