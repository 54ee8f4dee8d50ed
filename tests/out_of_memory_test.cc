// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Every public entry point with each of its allocations failing in turn (that one alone, and it with every later
// one), and with every request above a size failing: the call returns OUT_OF_MEMORY with a message or succeeds,
// never writes its output when it fails, never crashes or aborts, and the next clean call gives the same bits.
// The allocator is tests/failing_allocator.cc; docs/errors-and-limits.md states the guarantee this checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "examples/worker_pool.h"
#include "roialign/roialign.h"
#include "tests/c_calls.h"
#include "tests/failing_allocator.h"

namespace {

using failing_allocator::Mode;
using Bytes = std::vector<unsigned char>;

constexpr unsigned char kSentinel = 0xA5;

// What the injections of one case found.
struct Tally {
  int64_t sites = 0;       // allocations the call makes (the largest count seen)
  int64_t injections = 0;  // calls made with a failing allocation
  int64_t failed_calls = 0;
};

Tally g_total;  // over the whole suite, printed at the end

// One case: `reset` brings the state before the call (no failures while it runs); `call` writes its result into
// `out`; a clean call must give `expected`. `check_after` (optional) runs clean calls on other state that an
// earlier failure must not have broken.
struct Case {
  std::function<void()> reset;
  std::function<roialign_status(unsigned char* out)> call;
  Bytes expected;
  std::function<void()> check_after;
  std::function<void()> after_failure;  // optional: checks of the state a failed call left, before the clean call
};

// The status, message and output of one call made under `mode`/`n`; returns how many allocations failed.
int64_t InjectOnce(const Case& c, Mode mode, int64_t n, const std::string& label) {
  c.reset();
  Bytes out(c.expected.size(), kSentinel);
  failing_allocator::Arm(mode, n);
  const roialign_status status = c.call(out.data());
  const failing_allocator::Window w = failing_allocator::Disarm();
  if (w.failed == 0) return 0;
  ++g_total.injections;
  if (status == ROIALIGN_OUT_OF_MEMORY) {
    ++g_total.failed_calls;
    EXPECT_NE(std::string(roialign_last_error()).find("out of memory"), std::string::npos)
        << label << ": " << roialign_last_error();
    EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](unsigned char b) { return b == kSentinel; }))
        << label << ": OUT_OF_MEMORY, but the output was written";
    if (c.after_failure) c.after_failure();
  } else {
    // A failure the library could absorb (a cache it keeps) must not change the result.
    EXPECT_EQ(status, ROIALIGN_OK) << label << ": " << roialign_last_error();
    EXPECT_TRUE(out == c.expected) << label << ": succeeded with a different result";
  }
  Bytes clean(c.expected.size(), kSentinel);
  EXPECT_EQ(c.call(clean.data()), ROIALIGN_OK) << label << ": the clean call after a failure";
  EXPECT_TRUE(clean == c.expected) << label << ": the clean call after a failure gave other bits";
  if (c.check_after) c.check_after();
  return w.failed;
}

// Every injection of `c`; returns its tally.
Tally InjectAll(const Case& c, const std::string& name) {
  c.reset();
  Bytes out(c.expected.size(), kSentinel);
  failing_allocator::Arm(Mode::kCount, 0);
  EXPECT_EQ(c.call(out.data()), ROIALIGN_OK) << name << ": " << roialign_last_error();
  const failing_allocator::Window counted = failing_allocator::Disarm();
  EXPECT_TRUE(out == c.expected) << name << ": an uninjected call gave other bits";
  EXPECT_EQ(counted.other_threads, 0) << name << ": worker threads allocated";
  Tally t;
  t.sites = counted.allocations;
  const int64_t before = g_total.injections;
  for (int64_t n = 0; n < counted.allocations; ++n) {
    InjectOnce(c, Mode::kFailNth, n, name + ", allocation " + std::to_string(n) + " fails");
    InjectOnce(c, Mode::kFailFromNth, n, name + ", allocations from " + std::to_string(n) + " on fail");
  }
  for (size_t size = counted.largest; size > 0; size /= 2) {
    InjectOnce(c, Mode::kFailAbove, static_cast<int64_t>(size), name + ", requests of " + std::to_string(size) +
                                                                    " bytes and more fail");
  }
  t.injections = g_total.injections - before;
  g_total.sites += t.sites;
  return t;
}

// ---- inputs ----

uint16_t HalfBits(float f) {  // exact for the multiples of 1/64 in (-4, 4) that the maps hold
  if (f == 0.0f) return 0;
  uint32_t b;
  std::memcpy(&b, &f, 4);
  const uint32_t sign = (b >> 16) & 0x8000u, exponent = ((b >> 23) & 0xffu) - 127u + 15u, mantissa = (b >> 13) & 0x3ffu;
  return static_cast<uint16_t>(sign | (exponent << 10) | mantissa);
}

// n elements of `dtype` with values in [-2, 2) on a 1/64 grid.
Bytes MakeMap(roialign_dtype dtype, int64_t n) {
  const size_t bytes = dtype == ROIALIGN_DTYPE_F32 ? 4 : 2;
  Bytes out(static_cast<size_t>(n) * bytes);
  for (int64_t i = 0; i < n; ++i) {
    const float v = static_cast<float>((i * 37 + 11) % 256) / 64.0f - 2.0f;
    uint16_t h = 0;
    uint32_t f;
    std::memcpy(&f, &v, 4);
    switch (dtype) {
      case ROIALIGN_DTYPE_F32: std::memcpy(&out[static_cast<size_t>(i) * 4], &v, 4); continue;
      case ROIALIGN_DTYPE_F16: h = HalfBits(v); break;
      case ROIALIGN_DTYPE_BF16: h = static_cast<uint16_t>(f >> 16); break;
      case ROIALIGN_DTYPE_F64: ADD_FAILURE() << "F64 maps are not made here"; return out;
    }
    std::memcpy(&out[static_cast<size_t>(i) * 2], &h, 2);
  }
  return out;
}

// K boxes [batch, x1, y1, x2, y2] over a map of `extent` pixels at scale 1/4: large ones that cover most of it
// (so that NCHW runs take the band path) and small ones; every `zero_every`-th box has zero area.
std::vector<float> MakeRois(int64_t K, float extent, int64_t zero_every = 0) {
  std::vector<float> rois;
  for (int64_t k = 0; k < K; ++k) {
    const float x = static_cast<float>((k * 29) % 97) / 97.0f * extent * 0.5f;
    const float y = static_cast<float>((k * 53) % 89) / 89.0f * extent * 0.5f;
    const float size = (k % 3 == 0) ? extent * 0.45f : extent * (0.04f + 0.02f * static_cast<float>(k % 5));
    const bool zero = zero_every > 0 && k % zero_every == zero_every - 1;
    rois.insert(rois.end(), {static_cast<float>(k % 2), x, y, zero ? x : x + size, zero ? y : y + size});
  }
  return rois;
}

roialign_params Params(roialign_layout layout, roialign_dtype dtype) {
  roialign_params p;
  roialign_params_init(&p);
  p.pooled_height = 7;
  p.pooled_width = 7;
  p.spatial_scale = 0.25f;
  p.sampling_ratio = 2;
  p.coordinate_mode = ROIALIGN_COORD_HALF_PIXEL;
  p.pool_mode = ROIALIGN_POOL_AVG;
  p.layout = layout;
  p.dtype = dtype;
  return p;
}

size_t BytesOf(roialign_dtype dtype) { return dtype == ROIALIGN_DTYPE_F32 ? 4 : 2; }

const char* DtypeName(roialign_dtype d) {
  return d == ROIALIGN_DTYPE_F32 ? "f32" : d == ROIALIGN_DTYPE_F16 ? "f16" : "bf16";
}

// Where a call's work runs: its own threads (num_threads) or a caller's pool.
struct Threading {
  const char* name;
  int32_t num_threads;
  bool pool;
};
constexpr Threading kThreadings[] = {{"1 thread", 1, false}, {"2 threads", 2, false}, {"a pool of 2", 0, true}};

class OutOfMemory : public ::testing::Test {
 public:
  static roialign_threadpool Pool() { return worker_pool_interface(pool_); }

 protected:
  static void SetUpTestSuite() { pool_ = worker_pool_create(2); }
  static void TearDownTestSuite() {
    worker_pool_destroy(pool_);
    std::printf("[ out of memory ] %lld allocation sites, %lld injections, %lld calls returned OUT_OF_MEMORY\n",
                static_cast<long long>(g_total.sites), static_cast<long long>(g_total.injections),
                static_cast<long long>(g_total.failed_calls));
  }
  static worker_pool* pool_;
};
worker_pool* OutOfMemory::pool_ = nullptr;

// A single-level problem: map, RoIs and the output size.
struct Problem {
  int64_t N = 2, C = 64, H = 48, W = 48, K = 24;
  Bytes map;
  std::vector<float> rois;
  size_t out_bytes = 0;
};

Problem MakeProblem(roialign_dtype dtype, int64_t C) {
  Problem p;
  p.C = C;
  p.map = MakeMap(dtype, p.N * p.C * p.H * p.W);
  p.rois = MakeRois(p.K, 4.0f * static_cast<float>(p.W));
  p.out_bytes = static_cast<size_t>(p.K * p.C * 49) * BytesOf(dtype);
  return p;
}

roialign_status RunOn(const roialign_kernel* kernel, const Problem& p, unsigned char* out, const Threading& t) {
  if (t.pool) {
    const roialign_threadpool pool = OutOfMemory::Pool();
    return roialign_c::RunOnPool(kernel, p.map.data(), p.N, p.C, p.H, p.W, p.rois.data(), nullptr, p.K, out, &pool);
  }
  return roialign_c::Run(kernel, p.map.data(), p.N, p.C, p.H, p.W, p.rois.data(), nullptr, p.K, out, t.num_threads);
}

Bytes RunClean(const roialign_kernel* kernel, const Problem& p, const Threading& t) {
  Bytes out(p.out_bytes, kSentinel);
  EXPECT_EQ(RunOn(kernel, p, out.data(), t), ROIALIGN_OK) << roialign_last_error();
  return out;
}

roialign_kernel* Select(const char* target, const roialign_params& params) {
  roialign_kernel* kernel = nullptr;
  EXPECT_EQ(roialign_select(target, &params, &kernel), ROIALIGN_OK) << roialign_last_error();
  return kernel;
}

// Warm: the kernel ran this very call before. Growing: it ran only a call with fewer channels (its working memory
// must grow), and after a failure that smaller call must still work: a buffer that failed to grow once kept its
// old size and the next smaller call wrote through a null pointer.
TEST_F(OutOfMemory, RunWarmAndGrowingKernels) {
  for (const char* target : {"host", "generic"}) {
    for (roialign_layout layout : {ROIALIGN_LAYOUT_NCHW, ROIALIGN_LAYOUT_NHWC}) {
      for (roialign_dtype dtype : {ROIALIGN_DTYPE_F32, ROIALIGN_DTYPE_F16, ROIALIGN_DTYPE_BF16}) {
        const roialign_params params = Params(layout, dtype);
        const Problem small = MakeProblem(dtype, 16), large = MakeProblem(dtype, 64);
        roialign_kernel* reference = Select(target, params);
        const Bytes expected_small = RunClean(reference, small, kThreadings[0]);
        const Bytes expected_large = RunClean(reference, large, kThreadings[0]);
        roialign_kernel_free(reference);
        for (const Threading& t : kThreadings) {
          for (bool growing : {false, true}) {
            roialign_kernel* kernel = nullptr;
            Case c;
            c.expected = expected_large;
            c.call = [&](unsigned char* out) { return RunOn(kernel, large, out, t); };
            c.reset = [&] {
              roialign_kernel_free(kernel);
              kernel = Select(target, params);
              RunClean(kernel, growing ? small : large, t);
            };
            c.check_after = [&] { EXPECT_TRUE(RunClean(kernel, small, t) == expected_small); };
            const std::string name = std::string(target) + " " + (layout == ROIALIGN_LAYOUT_NCHW ? "NCHW" : "NHWC") +
                                     " " + DtypeName(dtype) + ", " + t.name + (growing ? ", growing" : ", warm");
            const Tally tally = InjectAll(c, name);
            EXPECT_GT(tally.injections, 0) << name << ": no allocation was reached";
            roialign_kernel_free(kernel);
          }
        }
      }
    }
  }
}

// The first regression, without counting: a failed growth of the NCHW band buffer or of the 16-bit NHWC
// partial state, then a smaller call.
TEST_F(OutOfMemory, FailedGrowthThenSmallerCall) {
  for (roialign_layout layout : {ROIALIGN_LAYOUT_NCHW, ROIALIGN_LAYOUT_NHWC}) {
    const roialign_dtype dtype = layout == ROIALIGN_LAYOUT_NCHW ? ROIALIGN_DTYPE_F32 : ROIALIGN_DTYPE_F16;
    const roialign_params params = Params(layout, dtype);
    const Problem small = MakeProblem(dtype, 16), large = MakeProblem(dtype, 64);
    roialign_kernel* kernel = Select("host", params);
    const Bytes expected_small = RunClean(kernel, small, kThreadings[0]);
    // The largest request the large call makes on a kernel warmed on the small one: the buffer that grows.
    roialign_kernel* probe = Select("host", params);
    RunClean(probe, small, kThreadings[0]);
    Bytes out(large.out_bytes, kSentinel);
    failing_allocator::Arm(Mode::kCount, 0);
    ASSERT_EQ(RunOn(probe, large, out.data(), kThreadings[0]), ROIALIGN_OK);
    const size_t largest = failing_allocator::Disarm().largest;
    roialign_kernel_free(probe);
    ASSERT_GT(largest, 4 * small.out_bytes) << "the large call grows no buffer beyond the small one's";

    // Highway pads each aligned block by a varying offset, so the same buffer's request varies a little.
    std::fill(out.begin(), out.end(), kSentinel);
    failing_allocator::Arm(Mode::kFailAbove, static_cast<int64_t>(largest - largest / 4));
    EXPECT_EQ(RunOn(kernel, large, out.data(), kThreadings[0]), ROIALIGN_OUT_OF_MEMORY);
    failing_allocator::Disarm();
    EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](unsigned char b) { return b == kSentinel; }));
    EXPECT_TRUE(RunClean(kernel, small, kThreadings[0]) == expected_small);
    roialign_kernel_free(kernel);
  }
}

// roialign_kernel_trim frees what a kernel keeps between runs: a warm run requests no working memory, the first
// run after a trim requests it again, and the results do not change.
TEST_F(OutOfMemory, TrimReleasesWorkingMemory) {
  for (roialign_layout layout : {ROIALIGN_LAYOUT_NCHW, ROIALIGN_LAYOUT_NHWC}) {
    const roialign_dtype dtype = layout == ROIALIGN_LAYOUT_NCHW ? ROIALIGN_DTYPE_F32 : ROIALIGN_DTYPE_F16;
    const Problem p = MakeProblem(dtype, 64);
    roialign_kernel* kernel = Select("host", Params(layout, dtype));
    const Bytes expected = RunClean(kernel, p, kThreadings[0]);
    Bytes out(p.out_bytes, kSentinel);
    failing_allocator::Arm(Mode::kCount, 0);
    ASSERT_EQ(RunOn(kernel, p, out.data(), kThreadings[0]), ROIALIGN_OK);
    const size_t warm = failing_allocator::Disarm().largest;
    roialign_kernel_trim(kernel);
    std::fill(out.begin(), out.end(), kSentinel);
    failing_allocator::Arm(Mode::kCount, 0);
    ASSERT_EQ(RunOn(kernel, p, out.data(), kThreadings[0]), ROIALIGN_OK);
    const size_t trimmed = failing_allocator::Disarm().largest;
    EXPECT_GT(trimmed, 2 * warm) << "the run after a trim allocates no more than a warm run";
    EXPECT_TRUE(out == expected);
    roialign_kernel_free(kernel);
  }
  roialign_kernel_trim(nullptr);
  roialign_multi_level_kernel_trim(nullptr);
}

// Two levels, some RoIs on each and some not pooled (zero area under the OPENVINO rule, written as zeros).
TEST_F(OutOfMemory, MultiLevelRun) {
  for (const char* target : {"host", "generic"}) {
    for (roialign_layout layout : {ROIALIGN_LAYOUT_NCHW, ROIALIGN_LAYOUT_NHWC}) {
      for (roialign_dtype dtype : {ROIALIGN_DTYPE_F32, ROIALIGN_DTYPE_F16, ROIALIGN_DTYPE_BF16}) {
        const roialign_params params = Params(layout, dtype);
        roialign_multi_level_params mp;
        roialign_multi_level_params_init(&mp);
        mp.num_levels = 2;
        mp.scales[0] = 0.25f;
        mp.scales[1] = 0.125f;
        mp.level_rule = ROIALIGN_LEVEL_RULE_OPENVINO;
        mp.canonical_size = 224.0f;
        mp.canonical_level = 4;
        const int64_t N = 2, K = 30;
        const Bytes map0 = MakeMap(dtype, N * 32 * 48 * 48), map1 = MakeMap(dtype, N * 32 * 24 * 24);
        roialign_inputs in = roialign_c::Inputs(map0.data(), N, 32, 48, 48, nullptr, nullptr, 0);
        in.num_maps = 2;
        in.maps[1] = {map1.data(), 24, 24, {0, 0, 0, 0}};
        const std::vector<float> rois = MakeRois(K, 192.0f, 7);
        const size_t out_bytes = static_cast<size_t>(K * 32 * 49) * BytesOf(dtype);
        for (const Threading& t : kThreadings) {
          for (bool warm : {true, false}) {
            roialign_multi_level_kernel* kernel = nullptr;
            Case c;
            in.rois = rois.data();
            in.num_rois = K;
            c.call = [&](unsigned char* out) {
              if (t.pool) {
                const roialign_threadpool pool = Pool();
                const roialign_options on_pool = roialign_c::OnPool(&pool);
                return roialign_multi_level_run(kernel, &in, out, &on_pool);
              }
              const roialign_options threads = roialign_c::Threads(t.num_threads);
              return roialign_multi_level_run(kernel, &in, out, &threads);
            };
            c.reset = [&] {
              roialign_multi_level_kernel_free(kernel);
              kernel = nullptr;
              ASSERT_EQ(roialign_multi_level_select(target, &params, &mp, &kernel), ROIALIGN_OK) << roialign_last_error();
              if (warm) {
                Bytes scratch(out_bytes);
                ASSERT_EQ(c.call(scratch.data()), ROIALIGN_OK);
              }
            };
            c.reset();
            c.expected.assign(out_bytes, kSentinel);
            ASSERT_EQ(c.call(c.expected.data()), ROIALIGN_OK) << roialign_last_error();
            const std::string name = std::string("multi-level ") + target + " " +
                                     (layout == ROIALIGN_LAYOUT_NCHW ? "NCHW " : "NHWC ") + DtypeName(dtype) + ", " +
                                     t.name + (warm ? ", warm" : ", new kernel");
            const Tally tally = InjectAll(c, name);
            EXPECT_GT(tally.injections, 0) << name;
            roialign_multi_level_kernel_free(kernel);
          }
        }
      }
    }
  }
}

// The backward: a kernel selected with ROIALIGN_PARAMS_BACKWARD, warm or new, dX from a fixed dY; a failed call
// leaves dX untouched (InjectAll's sentinel check) and the next clean call gives the same bits.
TEST_F(OutOfMemory, RunBackward) {
  for (const char* target : {"host", "generic"}) {
    for (roialign_layout layout : {ROIALIGN_LAYOUT_NCHW, ROIALIGN_LAYOUT_NHWC}) {
      for (roialign_dtype dtype : {ROIALIGN_DTYPE_F32, ROIALIGN_DTYPE_BF16}) {
        roialign_params params = Params(layout, dtype);
        params.flags = ROIALIGN_PARAMS_BACKWARD;
        const Problem p = MakeProblem(dtype, 32);
        const Bytes dy = MakeMap(dtype, p.K * p.C * 49);
        const roialign_inputs in = roialign_c::Inputs(p.map.data(), p.N, p.C, p.H, p.W, p.rois.data(), nullptr, p.K);
        const size_t dx_bytes = p.map.size();
        for (const Threading& t : kThreadings) {
          for (bool warm : {true, false}) {
            roialign_kernel* kernel = nullptr;
            Case c;
            c.call = [&](unsigned char* dx) {
              if (t.pool) {
                const roialign_threadpool pool = Pool();
                const roialign_options on_pool = roialign_c::OnPool(&pool);
                return roialign_run_backward(kernel, &in, dy.data(), dx, &on_pool);
              }
              const roialign_options threads = roialign_c::Threads(t.num_threads);
              return roialign_run_backward(kernel, &in, dy.data(), dx, &threads);
            };
            c.reset = [&] {
              roialign_kernel_free(kernel);
              kernel = Select(target, params);
              if (warm) {
                Bytes scratch(dx_bytes);
                ASSERT_EQ(c.call(scratch.data()), ROIALIGN_OK) << roialign_last_error();
              }
            };
            c.reset();
            c.expected.assign(dx_bytes, kSentinel);
            ASSERT_EQ(c.call(c.expected.data()), ROIALIGN_OK) << roialign_last_error();
            const std::string name = std::string("backward ") + target + " " +
                                     (layout == ROIALIGN_LAYOUT_NCHW ? "NCHW " : "NHWC ") + DtypeName(dtype) + ", " +
                                     t.name + (warm ? ", warm" : ", new kernel");
            const Tally tally = InjectAll(c, name);
            EXPECT_GT(tally.injections, 0) << name;
            roialign_kernel_free(kernel);
          }
        }
      }
    }
  }
}

// Rotated RoIs (the same boxes turned), forward and backward: the NCHW forward's channels-last image is a large
// buffer of its own.
TEST_F(OutOfMemory, RotatedRunAndBackward) {
  for (roialign_layout layout : {ROIALIGN_LAYOUT_NCHW, ROIALIGN_LAYOUT_NHWC}) {
    for (bool backward : {false, true}) {
      const roialign_dtype dtype = backward ? ROIALIGN_DTYPE_BF16 : ROIALIGN_DTYPE_F16;
      roialign_params params = Params(layout, dtype);
      params.roi_kind = ROIALIGN_ROI_ROTATED;
      params.angle_unit = ROIALIGN_ANGLE_DEGREES;
      if (backward) params.flags = ROIALIGN_PARAMS_BACKWARD;
      const Problem p = MakeProblem(dtype, 32);
      std::vector<float> rows;  // (batch, cx, cy, w, h, angle)
      for (int64_t k = 0; k < p.K; ++k) {
        const float* b = &p.rois[static_cast<size_t>(5 * k)];
        rows.insert(rows.end(), {b[0], 0.5f * (b[1] + b[3]), 0.5f * (b[2] + b[4]), b[3] - b[1], b[4] - b[2],
                                 static_cast<float>(k * 37 % 180) - 90.0f});
      }
      const Bytes dy = MakeMap(dtype, p.K * p.C * 49);
      const roialign_inputs in = roialign_c::Inputs(p.map.data(), p.N, p.C, p.H, p.W, rows.data(), nullptr, p.K);
      const size_t bytes = backward ? p.map.size() : p.out_bytes;
      for (const Threading& t : {kThreadings[0], kThreadings[2]}) {
        roialign_kernel* kernel = nullptr;
        Case c;
        c.call = [&](unsigned char* out) {
          const roialign_threadpool pool = Pool();
          const roialign_options options = t.pool ? roialign_c::OnPool(&pool) : roialign_c::Threads(t.num_threads);
          return backward ? roialign_run_backward(kernel, &in, dy.data(), out, &options)
                          : roialign_run(kernel, &in, out, &options);
        };
        c.reset = [&] {
          roialign_kernel_free(kernel);
          kernel = Select("host", params);
        };
        c.reset();
        c.expected.assign(bytes, kSentinel);
        ASSERT_EQ(c.call(c.expected.data()), ROIALIGN_OK) << roialign_last_error();
        const std::string name = std::string("rotated ") + (backward ? "backward " : "forward ") +
                                 (layout == ROIALIGN_LAYOUT_NCHW ? "NCHW " : "NHWC ") + DtypeName(dtype) + ", " + t.name;
        const Tally tally = InjectAll(c, name);
        EXPECT_GT(tally.injections, 0) << name;
        roialign_kernel_free(kernel);
      }
    }
  }
}

TEST_F(OutOfMemory, LayoutTransforms) {
  const int64_t N = 2, C = 70, H = 33, W = 20;
  // The 1.0 pair through its own entry points, and blocked pairs (70 channels: partial blocks) through
  // roialign_transform_layout. The input is large enough for every layout's padded size.
  struct Pair {
    const char* name;
    roialign_layout from, to;
    int64_t out_channels;  // stored, padded to the block
  };
  const Pair pairs[] = {{"NCHW->NHWC", ROIALIGN_LAYOUT_NCHW, ROIALIGN_LAYOUT_NHWC, C},
                        {"NHWC->NCHW", ROIALIGN_LAYOUT_NHWC, ROIALIGN_LAYOUT_NCHW, C},
                        {"NCHW->NCHW16c", ROIALIGN_LAYOUT_NCHW, ROIALIGN_LAYOUT_NCHW16C, 80},
                        {"NCHW8c->NHWC", ROIALIGN_LAYOUT_NCHW8C, ROIALIGN_LAYOUT_NHWC, C},
                        {"NHWC->NCHW4c", ROIALIGN_LAYOUT_NHWC, ROIALIGN_LAYOUT_NCHW4C, 72}};
  for (roialign_dtype dtype : {ROIALIGN_DTYPE_F32, ROIALIGN_DTYPE_F16, ROIALIGN_DTYPE_BF16}) {
    const Bytes input = MakeMap(dtype, N * 80 * H * W);
    const size_t bytes = dtype == ROIALIGN_DTYPE_F32 ? 4 : 2;
    for (const Threading& t : kThreadings) {
      for (const Pair& pair : pairs) {
        Case c;
        c.reset = [] {};
        c.call = [&](unsigned char* out) {
          const roialign_threadpool pool = Pool();
          const roialign_options options = t.pool ? roialign_c::OnPool(&pool) : roialign_c::Threads(t.num_threads);
          if (pair.from == ROIALIGN_LAYOUT_NCHW && pair.to == ROIALIGN_LAYOUT_NHWC) {
            return roialign_nchw_to_nhwc(dtype, input.data(), N, C, H, W, out, &options);
          }
          if (pair.from == ROIALIGN_LAYOUT_NHWC && pair.to == ROIALIGN_LAYOUT_NCHW) {
            return roialign_nhwc_to_nchw(dtype, input.data(), N, C, H, W, out, &options);
          }
          return roialign_transform_layout(dtype, pair.from, pair.to, input.data(), N, C, H, W, out, &options);
        };
        c.expected.assign(static_cast<size_t>(N * pair.out_channels * H * W) * bytes, kSentinel);
        ASSERT_EQ(c.call(c.expected.data()), ROIALIGN_OK);
        const std::string name = std::string(pair.name) + " " + DtypeName(dtype) + ", " + t.name;
        InjectAll(c, name);
        // A transform needs no memory of its own: it succeeds when nothing can be allocated.
        Bytes out(c.expected.size(), kSentinel);
        failing_allocator::Arm(Mode::kFailFromNth, 0);
        const roialign_status s = c.call(out.data());
        failing_allocator::Disarm();
        EXPECT_EQ(s, ROIALIGN_OK) << name;
        EXPECT_TRUE(out == c.expected) << name;
      }
    }
  }
}

// Selection writes only the kernel pointer: NULL on failure. The case's output is the selected name.
TEST_F(OutOfMemory, Select) {
  for (const char* target : {"host", "generic"}) {
    for (roialign_layout layout : {ROIALIGN_LAYOUT_NCHW, ROIALIGN_LAYOUT_NHWC}) {
      const roialign_params params = Params(layout, ROIALIGN_DTYPE_F16);
      roialign_kernel* kernel = nullptr;
      Case c;
      c.reset = [] {};
      c.call = [&](unsigned char* out) {
        roialign_kernel_free(kernel);
        kernel = reinterpret_cast<roialign_kernel*>(0x1);  // select must overwrite it
        const roialign_status s = roialign_select(target, &params, &kernel);
        if (s != ROIALIGN_OK) {
          EXPECT_EQ(kernel, nullptr) << "a failed select left the kernel pointer set";
          kernel = nullptr;
          return s;
        }
        const char* name = roialign_kernel_name(kernel);
        std::memcpy(out, name, std::min<size_t>(std::strlen(name) + 1, 64));
        return s;
      };
      c.expected.assign(64, kSentinel);
      ASSERT_EQ(c.call(c.expected.data()), ROIALIGN_OK);
      InjectAll(c, std::string("select ") + target + (layout == ROIALIGN_LAYOUT_NCHW ? " NCHW" : " NHWC"));
      roialign_kernel_free(kernel);
    }
  }
}

roialign_status NoopImplementation(const roialign_problem*, void*) { return ROIALIGN_OK; }

// All or nothing: after a failed registration the target is still unknown, and the clean call that follows
// registers the same name again, which a half-registered name would refuse as a duplicate.
TEST_F(OutOfMemory, RegisterAndQuery) {
  // Names made before any window: the test itself must not allocate while allocations fail.
  std::vector<std::string> targets, names;
  for (int i = 0; i < 4096; ++i) {
    targets.push_back("oom" + std::to_string(i));
    names.push_back("roi_align_nhwc." + targets.back());
  }
  size_t attempt = 0;
  const auto next_name = [&] { ASSERT_LT(++attempt, targets.size()); };
  Case c;
  c.reset = next_name;
  c.call = [&](unsigned char* out) {
    roialign_implementation impl;
    roialign_implementation_init(&impl);
    impl.target = targets[attempt].c_str();
    impl.name = names[attempt].c_str();
    impl.priority = 1;
    impl.layouts = 1u << ROIALIGN_LAYOUT_NHWC;
    impl.dtypes = 1u << ROIALIGN_DTYPE_F32;
    impl.pool_modes = 1u << ROIALIGN_POOL_AVG;
    impl.coordinate_modes = 1u << ROIALIGN_COORD_HALF_PIXEL;
    impl.fn = &NoopImplementation;
    const roialign_status s = roialign_register(&impl);
    if (s != ROIALIGN_OK) return s;
    next_name();  // registered: the next call registers another name
    out[0] = 1;
    return s;
  };
  c.after_failure = [&] {
    roialign_target_info info;
    roialign_target_info_init(&info);
    EXPECT_EQ(roialign_query_target(targets[attempt].c_str(), &info), ROIALIGN_INVALID_ARGUMENT)
        << targets[attempt] << ": a failed registration left the target behind";
  };
  c.expected.assign(1, 1);
  InjectAll(c, "register");

  // The query of a built-in target writes the info struct only on success. The struct's size is set as a caller
  // sets it; every byte after it is the case's, so the case sees whether a failed query wrote any of them.
  Case q;
  q.reset = [] {};
  q.call = [](unsigned char* out) {
    unsigned char info[sizeof(roialign_target_info)];
    const uint32_t size = sizeof(roialign_target_info);
    std::memcpy(info, &size, sizeof(size));
    std::memcpy(info + sizeof(size), out + sizeof(size), sizeof(info) - sizeof(size));
    const roialign_status s = roialign_query_target("host", reinterpret_cast<roialign_target_info*>(info));
    std::memcpy(out + sizeof(size), info + sizeof(size), sizeof(info) - sizeof(size));
    return s;
  };
  q.expected.assign(sizeof(roialign_target_info), kSentinel);
  ASSERT_EQ(q.call(q.expected.data()), ROIALIGN_OK);
  InjectAll(q, "query_target");
}

// The third regression: a thread's first error, and its first roialign_last_error(), with nothing left to
// allocate. Both used to abort in glibc when the thread_local message registered its destructor.
TEST_F(OutOfMemory, FirstErrorOnAThreadWithMemoryExhausted) {
  roialign_status status = ROIALIGN_OK;
  std::string message;
  std::thread first_error([&] {
    failing_allocator::Arm(Mode::kFailFromNth, 0);
    status = roialign_run(nullptr, nullptr, nullptr, nullptr);
    const char* m = roialign_last_error();
    failing_allocator::Disarm();
    message = m;
  });
  first_error.join();
  EXPECT_TRUE(status == ROIALIGN_INVALID_ARGUMENT || status == ROIALIGN_OUT_OF_MEMORY);
  EXPECT_FALSE(message.empty());

  bool read_empty = false;
  std::thread first_read([&] {
    failing_allocator::Arm(Mode::kFailFromNth, 0);
    const char* m = roialign_last_error();
    failing_allocator::Disarm();
    read_empty = m != nullptr && m[0] == '\0';
  });
  first_read.join();
  EXPECT_TRUE(read_empty) << "a thread with no error yet reads \"\"";
}

}  // namespace
