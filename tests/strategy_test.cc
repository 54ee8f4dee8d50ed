// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The strategy layer: target parsing, refusals at selection (with messages that list what is supported), one
// implementation per compiled ISA selectable exactly when this CPU has it, custom targets, queries, and a
// registry that stays consistent while threads select and register at once.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include "strategy/registry.h"
#include "strategy/targets.h"
#include "tests/test_util.h"

namespace roialign {
namespace testing {
namespace {

struct SelectCase {
  std::string target;
  Layout layout;
  DType dtype;
  StatusCode code;
  std::string fragment;  // in the message (error) or the kernel name (success)
};

TEST(Strategy, SelectionTable) {
  const std::string arch = internal::BuildArchitecture();
  const bool x86 = arch == "x86-64";
  const std::string foreign = x86 ? "arm-neon" : "x86-avx2";
  const std::vector<SelectCase> cases = {
      {"generic", Layout::kNCHW, DType::kF32, StatusCode::kOk, "roi_align_nchw.reference"},
      {"generic", Layout::kNHWC, DType::kF32, StatusCode::kOk, "roi_align_nhwc.reference"},
      {"host", Layout::kNHWC, DType::kF32, StatusCode::kOk, "roi_align_nhwc."},
      {"host", Layout::kNCHW, DType::kF32, StatusCode::kOk, "roi_align_nchw."},
      {"portable", Layout::kNCHW, DType::kF32, StatusCode::kOk, "roi_align_nchw."},
      {x86 ? "x86" : "arm", Layout::kNHWC, DType::kF32, StatusCode::kOk, "roi_align_nhwc."},
      {"generic", Layout::kNHWC, DType::kBF16, StatusCode::kOk, "roi_align_nhwc.reference"},
      {"generic", Layout::kNCHW, DType::kF16, StatusCode::kOk, "roi_align_nchw.reference"},
      {"host", Layout::kNCHW, DType::kF16, StatusCode::kOk, "roi_align_nchw."},
      {"host", Layout::kNHWC, DType::kBF16, StatusCode::kOk, "roi_align_nhwc."},
      {x86 ? "x86" : "arm", Layout::kNCHW, DType::kBF16, StatusCode::kOk, "roi_align_nchw."},
      // The portable fallback serves f32 only (docs/semantics.md#dtypes); the refusal names what it serves.
      {"portable", Layout::kNHWC, DType::kF16, StatusCode::kUnsupported,
       "target 'portable' has no roi_align for dtype F16 (supported: F32, F64)"},
      {"portable", Layout::kNCHW, DType::kBF16, StatusCode::kUnsupported,
       "target 'portable' has no roi_align for dtype BF16 (supported: F32, F64)"},
      {foreign, Layout::kNCHW, DType::kF32, StatusCode::kUnsupported, "was not compiled into this build (" + arch + ")"},
      {x86 ? "arm" : "x86", Layout::kNCHW, DType::kF32, StatusCode::kUnsupported, "was not compiled"},
      {"tpu9000", Layout::kNCHW, DType::kF32, StatusCode::kInvalidArgument, "unknown target 'tpu9000' (known targets: host"},
      {"", Layout::kNCHW, DType::kF32, StatusCode::kInvalidArgument, "unknown target ''"},
  };
  for (const SelectCase& c : cases) {
    Params params;
    params.layout = c.layout;
    params.dtype = c.dtype;
    Selection r = SelectKernel(c.target, params);
    EXPECT_EQ(r.status().code(), c.code) << c.target << ": " << r.status().message();
    const std::string text = r.ok() ? r->name() : r.status().message();
    EXPECT_NE(text.find(c.fragment), std::string::npos) << c.target << ": '" << text << "'";
  }
}

// Each ISA target is selectable exactly when this CPU supports it; otherwise the refusal says so.
TEST(Strategy, EachCompiledIsaSelectableExactlyWhenSupported) {
  int compiled = 0;
  for (const internal::IsaTarget& t : internal::IsaTargets()) {
    bool in_build = false;
    for (const auto& impl : internal::AllImplementations()) in_build |= impl->hwy_target == t.hwy_target;
    if (!in_build) continue;
    ++compiled;
    Params params;
    params.layout = Layout::kNHWC;
    Selection r = SelectKernel(t.target, params);
    if (internal::CpuSupports(t.hwy_target)) {
      ASSERT_TRUE(r.ok()) << t.target << ": " << r.status().message();
      // "portable" has two candidate fallbacks; only one is ever compiled.
      EXPECT_EQ(r->name(), std::string("roi_align_nhwc.") + t.isa);
    } else {
      EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
      EXPECT_NE(r.status().message().find("needs an ISA this CPU lacks"), std::string::npos) << r.status().message();
    }
  }
  EXPECT_GE(compiled, 2);
}

// "host" picks the highest-priority runnable implementation.
TEST(Strategy, HostPicksTheBest) {
  int32_t best = -1;
  std::string best_name;
  for (const auto& impl : internal::AllImplementations()) {
    if (impl->is_builtin() && impl->hwy_target != 0 && internal::CpuSupports(impl->hwy_target) &&
        (impl->layouts & internal::Bit(Layout::kNCHW)) && impl->priority > best) {
      best = impl->priority;
      best_name = impl->name;
    }
  }
  Params params;
  Selection r = SelectKernel("host", params);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->name(), best_name);
#if defined(__x86_64__)
  if (internal::CpuSupports(HWY_AVX3)) {
    EXPECT_EQ(r->name(), "roi_align_nchw.avx512");
  } else if (internal::CpuSupports(HWY_AVX2)) {
    EXPECT_EQ(r->name(), "roi_align_nchw.avx2");
  }
#endif
}

// CI runs the aarch64 tests on several emulated CPUs and names the ISA "host" must pick on each, so a silently
// skipped SVE/SVE2 run cannot pass.
TEST(Strategy, HostPicksTheIsaCiExpects) {
  const char* expected = std::getenv("ROIALIGN_EXPECT_HOST_ISA");
  if (expected == nullptr) return;  // not set outside CI's qemu runs: nothing to compare with
  for (Layout layout : {Layout::kNCHW, Layout::kNHWC}) {
    Params params;
    params.layout = layout;
    Selection r = SelectKernel("host", params);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->name(), std::string(layout == Layout::kNCHW ? "roi_align_nchw." : "roi_align_nhwc.") + expected);
  }
}

TEST(Strategy, QueryTargetForLayoutPlanning) {
  TargetInfo info;
  ASSERT_TRUE(DescribeTarget("host", &info).ok());
  EXPECT_EQ(info.layouts, (std::vector<Layout>{Layout::kNCHW, Layout::kNHWC, Layout::kNCHW4c, Layout::kNCHW8c,
                                               Layout::kNCHW16c}));
  EXPECT_EQ(info.dtypes, (std::vector<DType>{DType::kF32, DType::kF16, DType::kBF16, DType::kF64}));
  EXPECT_EQ(info.pool_modes.size(), 3u);
  EXPECT_EQ(info.coordinate_modes.size(), 4u);
  EXPECT_EQ(info.preferred_layout, Layout::kNHWC);
  EXPECT_TRUE(info.preferred_block == 4 || info.preferred_block == 8 || info.preferred_block == 16);
#if defined(__x86_64__)
  for (auto [target, block] : {std::pair<const char*, int32_t>{"x86-sse4", 4}, {"x86-avx2", 8}, {"x86-avx512", 16}}) {
    TargetInfo t;
    if (!DescribeTarget(target, &t).ok()) continue;  // a CPU without the ISA
    EXPECT_EQ(t.preferred_block, block) << target;
    EXPECT_EQ(t.layouts.size(), 5u) << target;
  }
#endif
  EXPECT_EQ(DescribeTarget("nope", &info).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(DescribeTarget("generic", &info).ok());
  EXPECT_EQ(info.dtypes, (std::vector<DType>{DType::kF32, DType::kF16, DType::kBF16, DType::kF64}));
  EXPECT_EQ(info.preferred_block, 0);  // the scalar reference has no vectors
  ASSERT_TRUE(DescribeTarget("portable", &info).ok());
  EXPECT_EQ(info.dtypes, (std::vector<DType>{DType::kF32, DType::kF64}));
}

// An NHWC-only accelerator registered by an engine: NCHW is refused at selection, NHWC runs its function.
roialign_status NpuRun(const roialign_problem* p, void* user_data) {
  // A real (if simple) implementation: delegates to the reference through the public API on the same data.
  auto* calls = static_cast<std::atomic<int>*>(user_data);
  ++*calls;
  Params params;
  params.pooled_height = p->params->pooled_height;
  params.pooled_width = p->params->pooled_width;
  params.spatial_scale = p->params->spatial_scale;
  params.sampling_ratio = p->params->sampling_ratio;
  params.layout = Layout::kNHWC;
  Selection r = SelectKernel("generic", params);
  if (!r.ok()) return ROIALIGN_INTERNAL;
  Inputs in;
  in.input = p->input;
  in.batch = p->batch;
  in.channels = p->channels;
  in.height = p->height;
  in.width = p->width;
  in.rois = p->rois;
  in.batch_indices = p->batch_indices;
  in.num_rois = p->num_rois;
  return static_cast<roialign_status>(r->Run(in, p->output, 1).code());
}

TEST(Strategy, CustomNhwcOnlyTarget) {
  static std::atomic<int> calls{0};
  roialign_implementation impl;
  roialign_implementation_init(&impl);
  impl.target = "npu";
  impl.name = "roi_align_nhwc.npu";
  impl.priority = 5;
  impl.layouts = 1u << ROIALIGN_LAYOUT_NHWC;
  impl.dtypes = 1u << ROIALIGN_DTYPE_F32;
  impl.pool_modes = 1u << ROIALIGN_POOL_AVG;
  impl.coordinate_modes = (1u << ROIALIGN_COORD_LEGACY) | (1u << ROIALIGN_COORD_HALF_PIXEL);
  impl.fn = &NpuRun;
  impl.user_data = &calls;
  ASSERT_EQ(roialign_register(&impl), ROIALIGN_OK) << roialign_last_error();
  EXPECT_EQ(roialign_register(&impl), ROIALIGN_INVALID_ARGUMENT);  // duplicate name
  EXPECT_NE(std::string(roialign_last_error()).find("already exists"), std::string::npos);

  Params params;
  params.layout = Layout::kNCHW;
  Selection nchw = SelectKernel("npu", params);
  EXPECT_EQ(nchw.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(nchw.status().message(), "target 'npu' has no roi_align for layout NCHW (supported: NHWC)");
  params.layout = Layout::kNHWC;
  params.pool_mode = PoolMode::kMax;
  EXPECT_NE(SelectKernel("npu", params).status().message().find("pool mode MAX (supported: AVG)"), std::string::npos);
  params.pool_mode = PoolMode::kAvg;
  Selection nhwc = SelectKernel("npu", params);
  ASSERT_TRUE(nhwc.ok()) << nhwc.status().message();
  EXPECT_EQ(nhwc->name(), "roi_align_nhwc.npu");

  std::mt19937 rng(3);
  const Problem p = RandomProblem(&rng, 1, 6, 8, 8, 5, 1.0f);
  const int before = calls.load();
  const std::vector<float> got = RunOrFail("npu", params, p);
  EXPECT_EQ(calls.load(), before + 1);
  EXPECT_EQ(got, RunOrFail("generic", params, p));
  TargetInfo info;
  ASSERT_TRUE(DescribeTarget("npu", &info).ok());
  EXPECT_EQ(info.layouts, std::vector<Layout>{Layout::kNHWC});
  EXPECT_EQ(info.preferred_layout, Layout::kNHWC);
  // The custom target is not part of "host".
  for (const std::string& n : ImplementationsOf("host")) EXPECT_NE(n, "roi_align_nhwc.npu");
}

TEST(Strategy, RegisterRefusesBuiltinTargetsAndEmptyMasks) {
  CustomImplementation c;
  c.target = "x86-avx2";
  c.name = "evil";
  c.layouts = {Layout::kNCHW};
  c.dtypes = {DType::kF32};
  c.pool_modes = {PoolMode::kAvg};
  c.coordinate_modes = {CoordinateMode::kLegacy};
  c.fn = [](const roialign_problem&) { return Status::Ok(); };
  EXPECT_EQ(RegisterCustomImplementation(c).code(), StatusCode::kInvalidArgument);
  c.target = "dsp";
  c.layouts.clear();
  EXPECT_EQ(RegisterCustomImplementation(c).code(), StatusCode::kInvalidArgument);
  c.layouts = {static_cast<Layout>(5)};
  EXPECT_EQ(RegisterCustomImplementation(c).code(), StatusCode::kInvalidArgument);
}

// Threads selecting and running while another registers new targets: every selection succeeds with the same
// implementation and every result is exact.
TEST(Strategy, ConcurrentSelectAndRegister) {
  std::mt19937 rng(21);
  const Problem p = RandomProblem(&rng, 1, 8, 10, 10, 4, 1.0f);
  Params params;
  const std::vector<float> expected = RunOrFail("host", params, p);
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      while (!stop.load()) {
        Selection r = SelectKernel("host", params);
        if (!r.ok()) {
          ++failures;
          continue;
        }
        Inputs in;
        in.input = p.input.data();
        in.batch = p.n;
        in.channels = p.c;
        in.height = p.h;
        in.width = p.w;
        in.rois = p.rois5.data();
        in.num_rois = p.k();
        std::vector<float> out(expected.size());
        if (!r->Run(in, out.data(), 1).ok() || out != expected) ++failures;
      }
    });
  }
  for (int i = 0; i < 200; ++i) {
    CustomImplementation c;
    c.target = "concurrent-" + std::to_string(i);
    c.name = "roi_align_nhwc.concurrent" + std::to_string(i);
    c.layouts = {Layout::kNHWC};
    c.dtypes = {DType::kF32};
    c.pool_modes = {PoolMode::kAvg};
    c.coordinate_modes = {CoordinateMode::kLegacy};
    c.fn = [](const roialign_problem&) { return Status::Ok(); };
    ASSERT_TRUE(RegisterCustomImplementation(c).ok());
  }
  stop = true;
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(SelectKernel("concurrent-199", [] { Params q; q.layout = Layout::kNHWC; return q; }()).ok());
}

}  // namespace
}  // namespace testing
}  // namespace roialign
