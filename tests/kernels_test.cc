// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Every SIMD implementation this build compiled and this CPU runs, for every dtype it serves, against the scalar
// reference: each layout, pool mode, coordinate mode, sampling mode and RoI format, on shapes that exercise vector
// tails; for the 16-bit dtypes also values where the final rounding matters.
#include <gtest/gtest.h>
#include <hwy/aligned_allocator.h>

#include <algorithm>
#include <cstring>
#include <memory_resource>
#include <string>

#include "core/enums.h"
#include "execution/execute.h"
#include "execution/plan.h"
#include "execution/validate_data.h"
#include "execution/row_bands.h"
#include "strategy/registry.h"
#include "strategy/targets.h"
#include "tests/test_util.h"

namespace roialign {
namespace testing {
namespace {

// The runnable built-in SIMD implementations, read from the registry (the single list).
std::vector<std::string> SimdImplementations() {
  std::vector<std::string> names;
  for (const auto& impl : internal::AllImplementations()) {
    if (impl->is_builtin() && impl->hwy_target != 0 && internal::CpuSupports(impl->hwy_target)) {
      names.push_back(impl->name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// One implementation and one dtype it serves.
struct KernelCase {
  std::string name;
  DType dtype;
};
void PrintTo(const KernelCase& c, std::ostream* os) { *os << c.name << " " << ToString(c.dtype); }

// The registry's entry for an implementation name.
internal::ImplementationPtr ImplementationNamed(const std::string& name) {
  for (const auto& impl : internal::AllImplementations()) {
    if (impl->name == name) return impl;
  }
  ADD_FAILURE() << "no implementation " << name;
  return nullptr;
}

// Every runnable built-in SIMD implementation with each dtype it serves.
std::vector<KernelCase> SimdCases() {
  std::vector<KernelCase> cases;
  for (const std::string& name : SimdImplementations()) {
    for (DType dtype : internal::ValuesIn<DType>(ImplementationNamed(name)->dtypes)) cases.push_back({name, dtype});
  }
  return cases;
}

// How the planner reaches an implementation's pixels.
internal::PixelAccess AccessOf(const internal::Implementation& impl, DType dtype) {
  const Layout layout = internal::ValuesIn<Layout>(impl.layouts).front();
  return internal::AccessOf(impl.builtin[static_cast<size_t>(dtype)], layout);
}

// Target and layout of an implementation name.
struct ImplInfo {
  std::string target;
  Layout layout;
};
ImplInfo InfoOf(const std::string& name) {
  const internal::ImplementationPtr impl = ImplementationNamed(name);
  if (impl == nullptr) return {"", Layout::kNCHW};
  return {impl->target, internal::ValuesIn<Layout>(impl->layouts).front()};
}

// How a test runs a plan of its own making through the real executor.
struct ForcedPlan {
  int64_t band_rows = 0;           // 0: no bands (planar kernels: tiles only)
  bool stream = false;             // non-temporal stores for finished bins
  bool partial_in_output = true;   // false: bins' partial state in f32 working memory, as 16-bit outputs have it
  int64_t staged_channels = 0;     // blocked layouts: groups of channels pooled into scratch, then streamed out
  int32_t threads = 2;
};

// Runs implementation `impl` for params.dtype on the plan MakeBandPlan gives for `forced`, on `map` (p's map in
// params.layout) stored in that dtype, into an aligned output (as large outputs that stream are) first filled with
// NaN. Returns the output widened to f32.
std::vector<float> RunForcedPlan(const internal::Implementation& impl, const Params& params, const Problem& p,
                                 const std::vector<float>& map, size_t out_size, const ForcedPlan& forced) {
  const std::vector<unsigned char> stored = StoreAs(params.dtype, map);
  const std::vector<unsigned char> nan = StoreAs(params.dtype, std::vector<float>(out_size, NAN));
  hwy::AlignedFreeUniquePtr<unsigned char[]> out = hwy::AllocateAligned<unsigned char>(nan.size());
  std::copy(nan.begin(), nan.end(), out.get());
  internal::Problem problem;
  std::pmr::vector<internal::RoiAxes> axes;
  std::pmr::vector<internal::RoiAxesOf<double>> axes_f64;  // F64 computes its geometry in double
  const Inputs inputs = InputsOf(p, stored.data(), false, params.dtype);
  const Status s = params.dtype == DType::kF64 ? internal::ValidateData(params, inputs, out.get(), &axes_f64, &problem)
                                               : internal::ValidateData(params, inputs, out.get(), &axes, &problem);
  EXPECT_TRUE(s.ok()) << s.message();
  if (!s.ok()) return {};
  const internal::Threading threading = {forced.threads, nullptr};
  internal::Plan plan = internal::MakeBandPlan(problem, AccessOf(impl, params.dtype), threading, forced.band_rows);
  plan.stream_output = forced.stream;
  plan.partial_in_output = forced.partial_in_output;
  plan.staged_channels = forced.staged_channels;
  internal::WorkingMemory memory;
  internal::ReserveWorkingMemory(problem, plan, memory);
  for (internal::Scratch& scratch : memory.per_thread) {  // NaN patterns: lanes a kernel leaves unwritten show
    std::fill_n(scratch.staged_output.data(), scratch.staged_output.size(), static_cast<unsigned char>(0xFF));
  }
  internal::Execute(problem, plan, impl.builtin, threading, memory);
  return WidenFrom(params.dtype, out.get(), out_size);
}

class KernelTest : public ::testing::TestWithParam<KernelCase> {
 protected:
  const std::string& Name() const { return GetParam().name; }
  DType Dtype() const { return GetParam().dtype; }

  // Runs the implementation and the reference on `p` (stored in the case's dtype) and compares every element.
  void Compare(const Problem& p, Params params, bool batch_indices, int threads, const std::string& what) {
    const ImplInfo info = InfoOf(Name());
    params.layout = info.layout;
    params.dtype = Dtype();
    std::string name;
    const std::vector<float> got = RunOrFail(info.target, params, p, batch_indices, threads, &name);
    ASSERT_EQ(name, Name()) << "selection picked another implementation for " << info.target;
    const std::vector<float> ref = RunOrFail("generic", params, p, batch_indices, 1);
    ASSERT_EQ(got.size(), ref.size());
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      if (!WithinTolerance(got[i], ref[i], params.dtype) && bad++ < 3) {
        ADD_FAILURE() << what << " " << ToString(params.pool_mode) << " " << ToString(params.coordinate_mode)
                      << " ratio " << params.sampling_ratio << ": element " << i << " got " << got[i] << " want "
                      << ref[i];
      }
    }
    EXPECT_EQ(bad, 0u) << what;
  }
};

TEST_P(KernelTest, AllModesOnVectorTailShapes) {
  std::mt19937 rng(42);
  for (int64_t c : {1, 3, 15, 16, 17, 33, 255}) {
    const Problem p = RandomProblem(&rng, 2, c, 13, 11, 9, 0.25f);
    for (PoolMode pool : {PoolMode::kAvg, PoolMode::kMax, PoolMode::kMaxOnnx}) {
      for (CoordinateMode coord :
           {CoordinateMode::kLegacy, CoordinateMode::kHalfPixel, CoordinateMode::kHalfPixelCentered,
            CoordinateMode::kLegacyUnclamped}) {
        for (int32_t ratio : {0, 2}) {
          Params params;
          params.pooled_height = 3;
          params.pooled_width = 5;
          params.spatial_scale = 0.25f;
          params.sampling_ratio = ratio;
          params.pool_mode = pool;
          params.coordinate_mode = coord;
          Compare(p, params, /*batch_indices=*/ratio == 0, 1, "C=" + std::to_string(c));
        }
      }
    }
  }
}

TEST_P(KernelTest, OneRowOrColumnMaps) {
  std::mt19937 rng(5);
  for (auto hw : {std::pair<int64_t, int64_t>{1, 9}, {9, 1}, {1, 1}}) {
    const Problem p = RandomProblem(&rng, 1, 17, hw.first, hw.second, 12, 1.0f);
    Params params;
    params.pooled_height = params.pooled_width = 2;
    params.sampling_ratio = 0;
    for (PoolMode pool : {PoolMode::kAvg, PoolMode::kMax, PoolMode::kMaxOnnx}) {
      params.pool_mode = pool;
      Compare(p, params, false, 2, "H=" + std::to_string(hw.first) + " W=" + std::to_string(hw.second));
    }
  }
}

// Large adaptive grids (big RoIs, 1x1 output) and huge sparse grids force the NCHW kernel through its
// row-of-bins, single-bin and sample-row-chunk paths.
TEST_P(KernelTest, LargeGrids) {
  std::mt19937 rng(9);
  Problem p = RandomProblem(&rng, 1, 20, 70, 90, 0, 1.0f);
  AddRoi(&p, 0, -3.0f, -2.0f, 88.0f, 69.0f);  // adaptive: grid 69 x 91 in one bin
  AddRoi(&p, 0, 1.5f, 2.5f, 40.0f, 60.0f);
  for (auto shape : {std::pair<int64_t, int32_t>{1, 0}, {7, 0}, {1, 100}, {2, 60}, {7, 2}}) {
    Params params;
    params.pooled_height = params.pooled_width = shape.first;
    params.sampling_ratio = shape.second;
    params.coordinate_mode = CoordinateMode::kHalfPixel;
    for (PoolMode pool : {PoolMode::kAvg, PoolMode::kMax, PoolMode::kMaxOnnx}) {
      params.pool_mode = pool;
      Compare(p, params, false, 2, "pooled " + std::to_string(shape.first) + " ratio " + std::to_string(shape.second));
    }
  }
}

TEST_P(KernelTest, ManyRoisAndThreads) {
  std::mt19937 rng(11);
  const Problem p = RandomProblem(&rng, 3, 40, 24, 31, 150, 0.5f);
  Params params;
  params.pooled_height = params.pooled_width = 7;
  params.spatial_scale = 0.5f;
  params.sampling_ratio = 2;
  Compare(p, params, true, 2, "K=150");
}

// The same bits for any thread count (threads split RoIs and channel blocks differently).
TEST_P(KernelTest, BitIdenticalAcrossThreadCounts) {
  std::mt19937 rng(13);
  Problem p = RandomProblem(&rng, 1, 200, 40, 40, 3, 1.0f);
  AddRoi(&p, 0, -1.0f, -1.0f, 39.0f, 39.0f);  // adaptive 40x40 grid in one bin: large-bin chunking
  const ImplInfo info = InfoOf(Name());
  for (PoolMode pool : {PoolMode::kAvg, PoolMode::kMax, PoolMode::kMaxOnnx}) {
    Params params;
    params.pooled_height = params.pooled_width = 1;
    params.pool_mode = pool;
    params.layout = info.layout;
    params.dtype = Dtype();
    const std::vector<float> one = RunOrFail(info.target, params, p, false, 1);
    for (int threads : {2, 3, 8}) EXPECT_EQ(one, RunOrFail(info.target, params, p, false, threads)) << threads;
  }
}

// Non-finite pixels propagate as in the reference, which multiplies every tap by its weight: a pixel at +-Inf
// with weight 0 gives NaN (0 * Inf), with a positive weight +-Inf. Integer RoI corners with one sample per bin
// put samples exactly on pixels (upper taps of weight 0) and on the clamped last row and column.
TEST_P(KernelTest, NonFinitePixelsPropagateAsInTheReference) {
  std::mt19937 rng(37);
  Problem p = RandomProblem(&rng, 1, 21, 12, 12, 4, 1.0f);
  const auto at = [&](int64_t c, int64_t y, int64_t x) -> float& { return p.input[static_cast<size_t>((c * 12 + y) * 12 + x)]; };
  for (int64_t c = 0; c < p.c; ++c) {
    at(c, 2, 3) = INFINITY;
    at(c, 5, 6) = -INFINITY;
    at(c, 8, 1) = NAN;
    at(c, 11, 11) = INFINITY;  // the clamped corner
  }
  AddRoi(&p, 0, 0.0f, 0.0f, 8.0f, 8.0f);
  AddRoi(&p, 0, 2.0f, 1.0f, 10.0f, 9.0f);
  AddRoi(&p, 0, 4.0f, 4.0f, 14.0f, 14.0f);  // past the last row and column
  AddRoi(&p, 0, 0.0f, 0.0f, 12.0f, 12.0f);
  for (PoolMode pool : {PoolMode::kAvg, PoolMode::kMax, PoolMode::kMaxOnnx}) {
    for (int32_t ratio : {1, 2, 0}) {
      Params params;
      params.pooled_height = params.pooled_width = 4;
      params.sampling_ratio = ratio;
      params.pool_mode = pool;
      Compare(p, params, false, 1, "non-finite pixels");
    }
  }
}

// The planar kernel has two ways to reach channels-last data: per-RoI tiles (whole RoI, a row of bins, one bin,
// or sample-row chunks) and bands of map rows transformed once for all RoIs of an image. The planner picks one
// per call from the RoIs' footprint; here each is forced through MakeBandPlan and the real executor, bands down
// to one map row, so both stay covered whatever that heuristic decides. RoIs that cannot be split by band (the
// inverted box) take the tile path after the bands. Partial state between bands is kept either in the output
// or, as 16-bit outputs keep it, in f32 working memory. Some plans stream finished planes.
TEST_P(KernelTest, PlanarTilePathAndBandPathMatchReference) {
  const internal::ImplementationPtr impl = ImplementationNamed(Name());
  ASSERT_NE(impl, nullptr);
  if (AccessOf(*impl, Dtype()) != internal::PixelAccess::kCopied) return;  // planar kernels only
  ASSERT_NE(impl->builtin[static_cast<size_t>(Dtype())].transpose, nullptr) << "no transposer of the kernel's ISA";
  std::mt19937 rng(23);
  Problem data = RandomProblem(&rng, 2, 19, 70, 90, 6, 1.0f);
  AddRoi(&data, 1, -3.0f, -2.0f, 88.0f, 69.0f);
  AddRoi(&data, 0, 60.0f, 50.0f, 4.0f, 3.0f);  // inverted
  // AVG reads merged taps, the MAX modes every sample's taps: both on every path.
  for (auto [pool, shape] : {std::pair<PoolMode, std::pair<int64_t, int32_t>>{PoolMode::kMaxOnnx, {7, 2}},
                             {PoolMode::kMaxOnnx, {1, 0}}, {PoolMode::kMaxOnnx, {2, 60}}, {PoolMode::kMaxOnnx, {1, 100}},
                             {PoolMode::kAvg, {7, 2}}, {PoolMode::kAvg, {1, 0}}, {PoolMode::kAvg, {2, 60}},
                             {PoolMode::kAvg, {1, 100}}}) {
    Params params;
    params.pooled_height = params.pooled_width = shape.first;
    params.sampling_ratio = shape.second;
    params.pool_mode = pool;
    params.dtype = Dtype();
    const std::vector<float> ref = RunOrFail("generic", params, data);
    for (int64_t band_rows : {int64_t{0}, int64_t{1}, int64_t{4}, int64_t{13}, data.h}) {  // 0: tiles only
      // Only f32 outputs can keep their partial state in the output itself.
      for (bool partial_in_output : {true, false}) {
        if (partial_in_output && Dtype() != DType::kF32) continue;
        ForcedPlan forced;
        forced.band_rows = band_rows;
        forced.partial_in_output = partial_in_output;
        // Bands of 13 rows and the whole map also stream the planes of RoIs within one band (StreamCopy: RoI
        // blocks of 19 x PH x PW elements, so heads and tails off the vector boundaries).
        forced.stream = band_rows == 13 || band_rows == data.h;
        const std::vector<float> out = RunForcedPlan(*impl, params, data, data.input, ref.size(), forced);
        ASSERT_EQ(out.size(), ref.size());
        for (size_t i = 0; i < ref.size(); ++i) {
          ASSERT_TRUE(WithinTolerance(out[i], ref[i], params.dtype))
              << "band_rows " << band_rows << " partial_in_output " << partial_in_output << " mode "
              << ToString(pool) << " pooled " << shape.first << " ratio " << shape.second << " element " << i
              << ": " << out[i] << " vs " << ref[i];
        }
      }
    }
  }
}

// The band path keeps a RoI's bins channels-last between bands when all of them fit the kernel's bins buffer,
// and falls back to chunks of bins with planar partial state when they do not: 64 channels of 65 x 65 bins
// (270400 floats, above the 262144 of kTileFloats) take the fallback, 7 x 7 bins the whole-RoI path.
TEST_P(KernelTest, PlanarBandPathWithMoreBinsThanTheBuffer) {
  const internal::ImplementationPtr impl = ImplementationNamed(Name());
  ASSERT_NE(impl, nullptr);
  if (AccessOf(*impl, Dtype()) != internal::PixelAccess::kCopied) return;  // planar kernels only
  std::mt19937 rng(31);
  Problem data = RandomProblem(&rng, 1, 64, 20, 24, 2, 1.0f);
  AddRoi(&data, 0, -2.0f, -1.0f, 23.0f, 19.0f);  // every band
  for (int64_t pooled : {int64_t{65}, int64_t{7}}) {
    Params params;
    params.pooled_height = params.pooled_width = pooled;
    params.sampling_ratio = 1;
    params.dtype = Dtype();
    const std::vector<float> ref = RunOrFail("generic", params, data);
    for (bool partial_in_output : {true, false}) {
      if (partial_in_output && Dtype() != DType::kF32) continue;
      ForcedPlan forced;
      forced.band_rows = 3;
      forced.partial_in_output = partial_in_output;
      const std::vector<float> out = RunForcedPlan(*impl, params, data, data.input, ref.size(), forced);
      ASSERT_EQ(out.size(), ref.size());
      for (size_t i = 0; i < ref.size(); ++i) {
        ASSERT_TRUE(WithinTolerance(out[i], ref[i], params.dtype))
            << "pooled " << pooled << " partial_in_output " << partial_in_output << " element " << i << ": "
            << out[i] << " vs " << ref[i];
      }
    }
  }
}

// A map larger than a row band (execution/row_bands.h) runs the channels-last kernels band by band; the results
// match the reference and are the same bits for any thread count. 160 x 256 pixels of 256 bytes (64 floats or
// 128 16-bit channels): 2 bands.
TEST_P(KernelTest, RowBandsThroughRun) {
  // Whole-RoI kernels (float64) have no bands: the other tests cover them.
  if (AccessOf(*ImplementationNamed(Name()), Dtype()) == internal::PixelAccess::kWholeRois) return;
  std::mt19937 rng(29);
  Problem p = RandomProblem(&rng, 1, 256 / internal::BytesOf(Dtype()), 160, 256, 5, 1.0f);
  ASSERT_GT(p.h, internal::BandRows(p.w, p.c, internal::BytesOf(Dtype())));
  AddRoi(&p, 0, 10.0f, 100.0f, 200.0f, 150.0f);  // across the band boundary
  AddRoi(&p, 0, -5.0f, -8.0f, 270.0f, 170.0f);   // the whole map and beyond
  AddRoi(&p, 0, 200.0f, 50.0f, 30.0f, 10.0f);    // inverted: cannot be split by band
  AddRoi(&p, 0, 0.0f, 0.0f, 255.0f, 159.0f);     // enough RoI area that planar kernels transform the bands
  for (PoolMode pool : {PoolMode::kAvg, PoolMode::kMax}) {
    Params params;
    params.pooled_height = params.pooled_width = 5;
    params.sampling_ratio = 0;
    params.coordinate_mode = CoordinateMode::kHalfPixel;
    params.pool_mode = pool;
    params.dtype = Dtype();
    {  // Run's plan for this call has bands (planar kernels: through the band transform)
      std::vector<float> out(static_cast<size_t>(p.k() * p.c * 25));
      internal::Problem checked;
      std::pmr::vector<internal::RoiAxes> axes;
      params.layout = InfoOf(Name()).layout;
      ASSERT_TRUE(internal::ValidateData(params, InputsOf(p, p.input.data()), out.data(), &axes, &checked).ok());
      const internal::ImplementationPtr impl = ImplementationNamed(Name());
      const internal::Plan plan = internal::MakePlan(checked, AccessOf(*impl, Dtype()), {2, nullptr});
      EXPECT_GT(plan.band_rows, 0);
      EXPECT_GT(plan.num_bands, 1);
      bool transforms = false;
      for (const internal::PlannedPass& pass : plan.passes) transforms |= pass.transform;
      EXPECT_EQ(transforms, AccessOf(*impl, Dtype()) == internal::PixelAccess::kCopied);
    }
    Compare(p, params, false, 2, "two row bands");
    params.layout = InfoOf(Name()).layout;
    const std::vector<float> one = RunOrFail(InfoOf(Name()).target, params, p, false, 1);
    EXPECT_EQ(one, RunOrFail(InfoOf(Name()).target, params, p, false, 3));
  }
}

// Row bands forced on the channels-last kernels, down to one map row per band: every bin meets its sample rows
// band by band (partial state in the output, or in f32 working memory as 16-bit outputs keep it), RoIs outside
// the map and inverted boxes (run whole in band 0) included.
TEST_P(KernelTest, RowBandsOfAnySizeMatchReference) {
  const internal::ImplementationPtr impl = ImplementationNamed(Name());
  ASSERT_NE(impl, nullptr);
  if (AccessOf(*impl, Dtype()) != internal::PixelAccess::kInPlace) return;  // not a channels-last kernel
  std::mt19937 rng(31);
  // 75 channels: every vector width runs its multi-vector loops, some bins are vector-aligned, and a tail remains.
  Problem data = RandomProblem(&rng, 2, 75, 30, 40, 6, 1.0f);
  AddRoi(&data, 1, -3.0f, -2.0f, 48.0f, 39.0f);
  AddRoi(&data, 0, 30.0f, 25.0f, 4.0f, 3.0f);  // inverted
  const Layout layout = InfoOf(Name()).layout;
  const std::vector<float> map = ToLayout(data.input, layout, data.n, data.c, data.h, data.w);
  for (PoolMode pool : {PoolMode::kAvg, PoolMode::kMax, PoolMode::kMaxOnnx}) {
    for (auto shape : {std::pair<int64_t, int32_t>{7, 2}, {3, 0}, {1, 0}}) {
      Params params;
      params.pooled_height = params.pooled_width = shape.first;
      params.sampling_ratio = shape.second;
      params.coordinate_mode = CoordinateMode::kHalfPixel;
      params.pool_mode = pool;
      params.layout = layout;
      params.dtype = Dtype();
      const std::vector<float> ref = RunOrFail("generic", params, data);
      // Band 13 also writes finished bins with non-temporal stores. Blocked layouts stage the outputs of RoIs a
      // pass finishes two blocks at a time (with 75 channels, the last group's block is padded) without bands
      // and in bands of 4 and 13 rows.
      for (int64_t band_rows : {0, 1, 4, 13}) {
        for (bool partial_in_output : {true, false}) {
          if (partial_in_output && Dtype() != DType::kF32) continue;  // f32 outputs only
          ForcedPlan forced;
          forced.band_rows = band_rows;
          forced.stream = band_rows == 13;
          forced.partial_in_output = partial_in_output;
          if (internal::IsBlocked(layout) && band_rows != 1) {
            forced.staged_channels = 2 * internal::StridesOf(layout, data.c, 1, 1).block;
          }
          const std::vector<float> out = RunForcedPlan(*impl, params, data, map, ref.size(), forced);
          ASSERT_EQ(out.size(), ref.size());
          for (size_t i = 0; i < ref.size(); ++i) {
            ASSERT_TRUE(WithinTolerance(out[i], ref[i], params.dtype))
                << "band_rows " << band_rows << " partial_in_output " << partial_in_output << " mode "
                << ToString(pool) << " pooled " << shape.first << " ratio " << shape.second << " element " << i
                << ": " << out[i] << " vs " << ref[i];
          }
        }
      }
    }
  }
}

// Large blocked outputs with blocks narrower than a cache line pool a RoI's channels a group at a time into scratch
// and stream it out (Plan::staged_channels): the same bits as writing in place, padded lanes 0, with and without
// bands (a split RoI writes in place), one or two blocks per group. Light enough for the sanitizer suite, which
// skips the blocked layouts' RowBandsOfAnySizeMatchReference.
TEST_P(KernelTest, StagedBlockedOutputsGiveInPlaceBits) {
  const internal::ImplementationPtr impl = ImplementationNamed(Name());
  ASSERT_NE(impl, nullptr);
  const Layout layout = InfoOf(Name()).layout;
  if (!internal::IsBlocked(layout)) return;
  std::mt19937 rng(47);
  Problem data = RandomProblem(&rng, 2, 17, 20, 24, 5, 1.0f);
  AddRoi(&data, 1, -3.0f, -2.0f, 30.0f, 25.0f);  // past the map
  AddRoi(&data, 0, 15.0f, 12.0f, 4.0f, 3.0f);    // inverted
  const std::vector<float> map = ToLayout(data.input, layout, data.n, data.c, data.h, data.w);
  const int64_t block = internal::StridesOf(layout, data.c, 1, 1).block;
  for (PoolMode pool : {PoolMode::kAvg, PoolMode::kMax}) {
    Params params;
    params.pooled_height = 3;
    params.pooled_width = 4;
    params.sampling_ratio = 2;
    params.pool_mode = pool;
    params.layout = layout;
    params.dtype = Dtype();
    const size_t size = static_cast<size_t>(data.k() * internal::StoredChannels(layout, data.c) * 12);
    for (int64_t band_rows : {0, 3}) {
      ForcedPlan forced;
      forced.band_rows = band_rows;
      forced.partial_in_output = Dtype() == DType::kF32;
      const std::vector<float> in_place = RunForcedPlan(*impl, params, data, map, size, forced);
      for (int64_t blocks : {1, 2}) {
        forced.staged_channels = blocks * block;
        const std::vector<float> staged = RunForcedPlan(*impl, params, data, map, size, forced);
        ASSERT_EQ(staged.size(), in_place.size());
        ASSERT_EQ(std::memcmp(staged.data(), in_place.data(), staged.size() * sizeof(float)), 0)
            << ToString(pool) << " band_rows " << band_rows << " blocks per group " << blocks;
      }
    }
  }
}

// 16-bit outputs are rounded once, to nearest even. Each sample here lies halfway between two neighbouring
// pixels whose values are neighbouring 16-bit values (its other two taps have weight 0), so its f32 value is
// exactly their midpoint, a tie: AVG and MAX must give the even one of the two patterns. The pairs include
// subnormals, the subnormal-normal boundary and the largest finite values, both signs.
TEST_P(KernelTest, SixteenBitTiesRoundToEven) {
  if (Dtype() != DType::kF16 && Dtype() != DType::kBF16) return;  // 16-bit outputs only
  const std::vector<uint16_t> lows = Dtype() == DType::kF16
                                         ? std::vector<uint16_t>{0x0001, 0x0002, 0x03FF, 0x0400, 0x3C00, 0x3C01,
                                                                 0x1234, 0x2345, 0x7BFD, 0x7BFE}
                                         : std::vector<uint16_t>{0x0001, 0x0002, 0x007F, 0x0080, 0x3F80, 0x3F81,
                                                                 0x1234, 0x2345, 0x7F7D, 0x7F7E};
  auto widen = [&](uint16_t bits) {
    return Dtype() == DType::kF16 ? internal::F32FromF16Bits(bits) : internal::F32FromBF16Bits(bits);
  };
  // Pixel (ph, 2 pw) holds a pair's low pattern, (ph, 2 pw + 1) the next one; sample (ph, pw) is at x = 2 pw + 0.5
  // on row ph (one sample per bin: a box from -0.5, bins 2 pixels wide and 1 high).
  const int64_t PH = 3, PW = 4, C = 19;
  Problem p;
  p.c = C;
  p.h = PH;
  p.w = 2 * PW;
  p.input.resize(static_cast<size_t>(C * p.h * p.w));
  std::vector<float> expected(static_cast<size_t>(C * PH * PW));
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t ph = 0; ph < PH; ++ph) {
      for (int64_t pw = 0; pw < PW; ++pw) {
        const size_t bin = static_cast<size_t>((c * PH + ph) * PW + pw);
        const uint16_t lo = static_cast<uint16_t>(lows[bin % lows.size()] | ((bin / lows.size()) % 2 ? 0x8000 : 0));
        const uint16_t hi = static_cast<uint16_t>(lo + 1);
        p.input[static_cast<size_t>((c * p.h + ph) * p.w + 2 * pw)] = widen(lo);
        p.input[static_cast<size_t>((c * p.h + ph) * p.w + 2 * pw + 1)] = widen(hi);
        expected[bin] = widen(lo % 2 == 0 ? lo : hi);
      }
    }
  }
  AddRoi(&p, 0, -0.5f, -0.5f, -0.5f + 2.0f * PW, -0.5f + PH);
  const ImplInfo info = InfoOf(Name());
  for (PoolMode pool : {PoolMode::kAvg, PoolMode::kMax, PoolMode::kMaxOnnx}) {
    Params params;
    params.pooled_height = PH;
    params.pooled_width = PW;
    params.sampling_ratio = 1;
    params.pool_mode = pool;
    params.layout = info.layout;
    params.dtype = Dtype();
    const std::vector<float> got = RunOrFail(info.target, params, p, false, 2);
    const std::vector<float> ref = RunOrFail("generic", params, p);
    ASSERT_EQ(got.size(), ref.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i], ref[i]) << ToString(pool) << " element " << i;  // the f32 values are exact: same bits
    }
    const internal::MapStrides out = internal::StridesOf(info.layout, C, PH, PW);
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t bin = 0; bin < PH * PW; ++bin) {
        const size_t i = static_cast<size_t>(out.Offset(0, c, bin / PW, bin % PW));
        if (pool != PoolMode::kMaxOnnx) {
          ASSERT_EQ(got[i], expected[static_cast<size_t>(c * PH * PW + bin)]) << ToString(pool) << " element " << i;
        }
      }
    }
  }
}

// Blocked layouts: the padded lanes of the map's last block (NaN here) never reach a result, the output's are 0,
// and every logical element has NHWC's bits (the same taps, chunks and accumulation order per channel).
TEST_P(KernelTest, BlockedLayoutsPadWithZerosAndGiveNhwcBits) {
  const ImplInfo info = InfoOf(Name());
  if (!internal::IsBlocked(info.layout)) return;
  std::mt19937 rng(43);
  for (int64_t c : {1, 7, 17, 255}) {
    const Problem p = RandomProblem(&rng, 2, c, 11, 13, 7, 0.5f);
    for (PoolMode pool : {PoolMode::kAvg, PoolMode::kMax, PoolMode::kMaxOnnx}) {
      Params params;
      params.pooled_height = 3;
      params.pooled_width = 4;
      params.spatial_scale = 0.5f;
      params.sampling_ratio = c % 2 == 0 ? 2 : 0;
      params.pool_mode = pool;
      params.dtype = Dtype();
      params.layout = info.layout;
      const std::vector<float> got = RunOrFail(info.target, params, p, false, 2);
      params.layout = Layout::kNHWC;
      const std::vector<float> nhwc = RunOrFail(info.target, params, p, false, 2);
      const internal::MapStrides blocked = internal::StridesOf(info.layout, c, 3, 4);
      const internal::MapStrides dense = internal::StridesOf(Layout::kNHWC, c, 3, 4);
      for (int64_t k = 0; k < p.k(); ++k) {
        for (int64_t ch = 0; ch < internal::StoredChannels(info.layout, c); ++ch) {
          for (int64_t bin = 0; bin < 12; ++bin) {
            const float v = got[static_cast<size_t>(blocked.Offset(k, ch, bin / 4, bin % 4))];
            const float want = ch < c ? nhwc[static_cast<size_t>(dense.Offset(k, ch, bin / 4, bin % 4))] : 0.0f;
            ASSERT_EQ(std::memcmp(&v, &want, sizeof(float)), 0)
                << "C=" << c << " " << ToString(pool) << " roi " << k << " channel " << ch << " bin " << bin << ": "
                << v << " vs " << want;
          }
        }
      }
    }
  }
}

// The MAX modes on all-negative 16-bit data: a bin's maximum is negative unless a sample (or, in MAX_ONNX, a tap
// of weight 0) gives 0, as samples outside the map do.
TEST_P(KernelTest, MaxModesOnAllNegativeData) {
  std::mt19937 rng(41);
  Problem p = RandomProblem(&rng, 1, 21, 9, 10, 6, 1.0f);
  for (float& v : p.input) v = -std::fabs(v) - 0.01f;
  AddRoi(&p, 0, -3.0f, -2.0f, 5.0f, 4.0f);  // partly outside
  for (PoolMode pool : {PoolMode::kMax, PoolMode::kMaxOnnx}) {
    for (int32_t ratio : {1, 2, 0}) {
      Params params;
      params.pooled_height = 2;
      params.pooled_width = 3;
      params.sampling_ratio = ratio;
      params.pool_mode = pool;
      params.coordinate_mode = CoordinateMode::kHalfPixel;
      Compare(p, params, false, 2, "all-negative map");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryCompiledTarget, KernelTest, ::testing::ValuesIn(SimdCases()),
                         [](const ::testing::TestParamInfo<KernelCase>& param) {
                           std::string s = param.param.name + "_" + ToString(param.param.dtype);
                           std::replace(s.begin(), s.end(), '.', '_');
                           return s;
                         });

// Guards against an empty instantiation: both layouts exist for every ISA this CPU supports.
TEST(KernelCoverage, BothLayoutsForEverySupportedIsa) {
  const std::vector<std::string> names = SimdImplementations();
  ASSERT_FALSE(names.empty());
  for (const internal::IsaTarget& t : internal::IsaTargets()) {
    const bool nhwc = std::count(names.begin(), names.end(), std::string("roi_align_nhwc.") + t.isa) == 1;
    const bool nchw = std::count(names.begin(), names.end(), std::string("roi_align_nchw.") + t.isa) == 1;
    EXPECT_EQ(nhwc, nchw) << t.isa;
  }
  // The portable fallback (Highway's EMU128, or SCALAR where GCC < 12.3 breaks EMU128) is always compiled.
  EXPECT_EQ(std::count(names.begin(), names.end(), "roi_align_nhwc.emu128") +
                std::count(names.begin(), names.end(), "roi_align_nhwc.scalar"),
            1);
#if defined(__x86_64__)
  // Every x86-64 CPU this project runs on has AVX2; those targets must be compiled and runnable.
  for (const char* isa : {"sse4", "avx2"}) {
    EXPECT_EQ(std::count(names.begin(), names.end(), std::string("roi_align_nhwc.") + isa), 1) << isa;
  }
#endif
}

}  // namespace
}  // namespace testing
}  // namespace roialign
