// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Caller-owned working memory through the public C API (docs/api.md, "Workspace"): a run given a workspace of
// roialign_workspace_size() bytes succeeds while every allocation of the process fails, and gives the bits of a
// run without one; one byte less is INVALID_ARGUMENT naming the bytes needed, with the output untouched. Over every
// target this CPU runs, both layouts, every dtype and pool mode, staged tiles and the band transform (small and
// large footprints), in-place row bands, strided maps, multi-level kernels, 1 and 2 threads and a caller's pool.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "examples/worker_pool.h"
#include "roialign/roialign.h"
#include "tests/failing_allocator.h"

namespace {

using Bytes = std::vector<unsigned char>;
constexpr unsigned char kSentinel = 0xA5;

// Names from a roialign_* name list (each NUL-terminated, then one more NUL).
std::vector<std::string> NameList(roialign_status (*list)(char*, size_t, size_t*)) {
  size_t needed = 0;
  EXPECT_EQ(list(nullptr, 0, &needed), ROIALIGN_OK);
  std::vector<char> buffer(needed);
  EXPECT_EQ(list(buffer.data(), buffer.size(), &needed), ROIALIGN_OK);
  std::vector<std::string> names;
  for (const char* p = buffer.data(); *p != '\0'; p += std::strlen(p) + 1) names.emplace_back(p);
  return names;
}

size_t BytesOf(roialign_dtype d) { return d == ROIALIGN_DTYPE_F32 ? 4 : 2; }

// n elements of `dtype`, values in [-2, 2) on a 1/64 grid (exact in every dtype).
Bytes MakeMap(roialign_dtype dtype, int64_t n, int seed) {
  Bytes out(static_cast<size_t>(n) * BytesOf(dtype));
  for (int64_t i = 0; i < n; ++i) {
    const float v = static_cast<float>((i * 37 + 11 + seed) % 256) / 64.0f - 2.0f;
    uint32_t f;
    std::memcpy(&f, &v, 4);
    if (dtype == ROIALIGN_DTYPE_F32) {
      std::memcpy(&out[static_cast<size_t>(i) * 4], &f, 4);
      continue;
    }
    uint16_t h = static_cast<uint16_t>(f >> 16);  // bf16: the upper half, exact here
    if (dtype == ROIALIGN_DTYPE_F16 && v != 0.0f) {
      const uint32_t sign = (f >> 16) & 0x8000u, exponent = ((f >> 23) & 0xffu) - 127u + 15u;
      h = static_cast<uint16_t>(sign | (exponent << 10) | ((f >> 13) & 0x3ffu));
    }
    std::memcpy(&out[static_cast<size_t>(i) * 2], &h, 2);
  }
  return out;
}

// `count` boxes [K,5] over an H x W map of `batch` images, about `extent` of its size each.
std::vector<float> MakeRois(int64_t count, int64_t batch, float height, float width, float extent) {
  std::vector<float> r;
  for (int64_t k = 0; k < count; ++k) {
    const float fy = static_cast<float>((k * 7) % 11) / 11.0f, fx = static_cast<float>((k * 5) % 13) / 13.0f;
    const float h = extent * height * (0.5f + 0.5f * fy), w = extent * width * (0.5f + 0.5f * fx);
    const float y1 = fy * (height - h), x1 = fx * (width - w);
    r.insert(r.end(), {static_cast<float>(k % batch), x1, y1, x1 + w, y1 + h});
  }
  return r;
}

// One map's call: the dense map, or the same channels as a slice of a map with more of them (a strided view).
struct Call {
  int64_t N, C, H, W;
  Bytes map;    // what the view reads
  Bytes dense;  // the same data, dense
  std::vector<float> rois;
  roialign_inputs inputs;
};

Call MakeCall(roialign_layout layout, roialign_dtype dtype, int64_t N, int64_t C, int64_t H, int64_t W,
              std::vector<float> rois, bool strided) {
  Call c{N, C, H, W, {}, {}, std::move(rois), {}};
  const size_t e = BytesOf(dtype);
  const int64_t big_c = strided ? C + 5 : C, c0 = strided ? 3 : 0;
  c.map = MakeMap(dtype, N * big_c * H * W, 1);
  c.dense.resize(static_cast<size_t>(N * C * H * W) * e);
  const bool nhwc = layout == ROIALIGN_LAYOUT_NHWC;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < W; ++x) {
          const int64_t src = nhwc ? ((n * H + y) * W + x) * big_c + c0 + ch : ((n * big_c + c0 + ch) * H + y) * W + x;
          const int64_t dst = nhwc ? ((n * H + y) * W + x) * C + ch : ((n * C + ch) * H + y) * W + x;
          std::memcpy(&c.dense[static_cast<size_t>(dst) * e], &c.map[static_cast<size_t>(src) * e], e);
        }
  roialign_inputs_init(&c.inputs);
  c.inputs.batch = N;
  c.inputs.channels = C;
  c.inputs.maps[0].height = H;
  c.inputs.maps[0].width = W;
  c.inputs.rois = c.rois.data();
  c.inputs.num_rois = static_cast<int64_t>(c.rois.size() / 5);
  if (strided) {
    c.inputs.maps[0].data = c.map.data() + static_cast<size_t>(c0 * (nhwc ? 1 : H * W)) * e;
    const int64_t s[4] = {big_c * H * W, nhwc ? W * big_c : H * W, nhwc ? big_c : W, 1};
    std::copy(s, s + 4, c.inputs.maps[0].strides);
  } else {
    c.inputs.maps[0].data = c.map.data();
  }
  return c;
}

// The threadings every case runs on.
struct Threading {
  const char* name;
  int32_t threads;  // 0: the pool
};
constexpr Threading kThreadings[] = {{"1 thread", 1}, {"2 threads", 2}, {"pool of 2", 0}};

// run(options, out) with and without a workspace; `size` the query's answer. Checks everything the header
// promises of a workspace run and returns whether it held.
template <typename Run, typename Size>
void CheckWorkspace(const std::string& label, size_t output_bytes, const roialign_options& base, Run run, Size size) {
  Bytes expected(output_bytes, kSentinel);
  ASSERT_EQ(run(base, expected.data()), ROIALIGN_OK) << label << ": " << roialign_last_error();
  size_t needed = 0;
  ASSERT_EQ(size(base, &needed), ROIALIGN_OK) << label << ": " << roialign_last_error();
  ASSERT_GT(needed, 0u);
  // Any alignment: one byte in.
  Bytes block(needed + 1);
  roialign_options options = base;
  options.workspace = block.data() + 1;
  options.workspace_size = needed;
  Bytes out(output_bytes, kSentinel);
  failing_allocator::Arm(failing_allocator::Mode::kFailFromNth, 0);
  const roialign_status status = run(options, out.data());
  const failing_allocator::Window w = failing_allocator::Disarm();
  EXPECT_EQ(status, ROIALIGN_OK) << label << ": " << roialign_last_error();
  EXPECT_EQ(w.allocations, 0) << label << ": a workspace run allocated (largest request " << w.largest << ")";
  EXPECT_TRUE(out == expected) << label << ": other bits than without a workspace";
  // One byte short, at an aligned pointer too: refused by name, output untouched.
  for (unsigned char* p : {block.data(), block.data() + 1}) {
    options.workspace = p;
    options.workspace_size = needed - 1;
    Bytes untouched(output_bytes, kSentinel);
    EXPECT_EQ(run(options, untouched.data()), ROIALIGN_INVALID_ARGUMENT) << label;
    EXPECT_NE(std::string(roialign_last_error()).find("needs " + std::to_string(needed)), std::string::npos)
        << label << ": " << roialign_last_error();
    EXPECT_TRUE(std::all_of(untouched.begin(), untouched.end(), [](unsigned char b) { return b == kSentinel; }))
        << label << ": a refused run wrote its output";
  }
}

class Workspace : public ::testing::Test {
 protected:
  void SetUp() override {
    pool_ = worker_pool_create(2);
    ASSERT_NE(pool_, nullptr);
    interface_ = worker_pool_interface(pool_);
  }
  void TearDown() override { worker_pool_destroy(pool_); }
  roialign_options OptionsFor(const Threading& t) const {
    roialign_options o;
    roialign_options_init(&o);
    o.num_threads = t.threads;
    if (t.threads == 0) o.threadpool = &interface_;
    return o;
  }
  worker_pool* pool_ = nullptr;
  roialign_threadpool interface_{};
};

// The shapes that reach each path of the planner.
struct Shape {
  const char* name;
  int64_t N, C, H, W, K;
  float extent;
  bool strided;
};
constexpr Shape kShapes[] = {
    {"few small RoIs (tiles)", 2, 19, 23, 29, 4, 0.2f, false},
    {"many large RoIs (band transform)", 2, 19, 23, 29, 40, 0.7f, false},
    {"strided channel slice", 2, 19, 23, 29, 40, 0.7f, true},
    {"strided, few RoIs", 2, 19, 23, 29, 4, 0.2f, true},
};

TEST_F(Workspace, SingleLevelRunsAllocateNothingAndMatch) {
  const std::vector<std::string> names = NameList(
      [](char* b, size_t s, size_t* n) { return roialign_implementation_names("host", b, s, n); });
  ASSERT_FALSE(names.empty());
  int kernels = 0;
  for (const char* target : {"host", "generic", "x86-avx2", "x86-sse4", "x86-avx512", "portable"}) {
    for (roialign_layout layout : {ROIALIGN_LAYOUT_NCHW, ROIALIGN_LAYOUT_NHWC}) {
      for (roialign_dtype dtype : {ROIALIGN_DTYPE_F32, ROIALIGN_DTYPE_F16, ROIALIGN_DTYPE_BF16}) {
        for (roialign_pool_mode mode : {ROIALIGN_POOL_AVG, ROIALIGN_POOL_MAX, ROIALIGN_POOL_MAX_ONNX}) {
          roialign_params params;
          roialign_params_init(&params);
          params.pooled_height = 3;
          params.pooled_width = 4;
          params.sampling_ratio = 2;
          params.layout = layout;
          params.dtype = dtype;
          params.pool_mode = mode;
          roialign_kernel* kernel = nullptr;
          if (roialign_select(target, &params, &kernel) != ROIALIGN_OK) continue;  // not on this CPU
          ++kernels;
          const std::string kname = roialign_kernel_name(kernel);
          for (const Shape& sh : kShapes) {
            const Call c = MakeCall(layout, dtype, sh.N, sh.C, sh.H, sh.W,
                                    MakeRois(sh.K, sh.N, static_cast<float>(sh.H), static_cast<float>(sh.W),
                                             sh.extent), sh.strided);
            const size_t out_bytes = static_cast<size_t>(sh.K * sh.C * 12) * BytesOf(dtype);
            for (const Threading& t : kThreadings) {
              const std::string label = std::string(target) + " " + kname + " " + sh.name + " " + t.name;
              CheckWorkspace(
                  label, out_bytes, OptionsFor(t),
                  [&](const roialign_options& o, unsigned char* out) { return roialign_run(kernel, &c.inputs, out, &o); },
                  [&](const roialign_options& o, size_t* n) { return roialign_workspace_size(kernel, &c.inputs, &o, n); });
            }
            if (sh.strided) {  // the view agrees with its dense copy bit for bit
              roialign_inputs dense = c.inputs;
              dense.maps[0].data = c.dense.data();
              std::fill(dense.maps[0].strides, dense.maps[0].strides + 4, 0);
              Bytes a(out_bytes), b(out_bytes);
              const roialign_options o = OptionsFor(kThreadings[0]);
              ASSERT_EQ(roialign_run(kernel, &c.inputs, a.data(), &o), ROIALIGN_OK);
              ASSERT_EQ(roialign_run(kernel, &dense, b.data(), &o), ROIALIGN_OK);
              EXPECT_TRUE(a == b) << kname << ": a strided view and its dense copy differ";
            }
          }
          roialign_kernel_free(kernel);
        }
      }
    }
  }
  EXPECT_GE(kernels, 2 * 2 * 3 * 3) << "host and generic serve every layout, dtype and pool mode";
}

// Rotated RoIs, forward and backward: NCHW's channels-last image and the backward's scratch come from the
// workspace too.
TEST_F(Workspace, RotatedRunsAllocateNothingAndMatch) {
  for (roialign_layout layout : {ROIALIGN_LAYOUT_NCHW, ROIALIGN_LAYOUT_NHWC}) {
    for (roialign_dtype dtype : {ROIALIGN_DTYPE_F32, ROIALIGN_DTYPE_BF16}) {
      for (bool backward : {false, true}) {
        roialign_params params;
        roialign_params_init(&params);
        params.pooled_height = 3;
        params.pooled_width = 4;
        params.coordinate_mode = ROIALIGN_COORD_HALF_PIXEL;
        params.layout = layout;
        params.dtype = dtype;
        params.roi_kind = ROIALIGN_ROI_ROTATED;
        params.angle_unit = ROIALIGN_ANGLE_DEGREES;
        if (backward) params.flags = ROIALIGN_PARAMS_BACKWARD;
        roialign_kernel* kernel = nullptr;
        ASSERT_EQ(roialign_select("host", &params, &kernel), ROIALIGN_OK) << roialign_last_error();
        const Shape& sh = kShapes[1];
        std::vector<float> rows;  // (batch, cx, cy, w, h, angle) of the same boxes, turned
        const std::vector<float> boxes =
            MakeRois(sh.K, sh.N, static_cast<float>(sh.H), static_cast<float>(sh.W), sh.extent);
        for (size_t k = 0; k < boxes.size() / 5; ++k) {
          const float* b = &boxes[5 * k];
          rows.insert(rows.end(), {b[0], 0.5f * (b[1] + b[3]), 0.5f * (b[2] + b[4]), b[3] - b[1], b[4] - b[2],
                                   static_cast<float>(k * 41 % 180) - 90.0f});
        }
        Call c = MakeCall(layout, dtype, sh.N, sh.C, sh.H, sh.W, rows, false);
        c.inputs.num_rois = sh.K;  // rows of 6
        const size_t out_bytes = static_cast<size_t>(sh.K * sh.C * 12) * BytesOf(dtype);
        const size_t dx_bytes = c.dense.size();
        const Bytes dy = MakeMap(dtype, static_cast<int64_t>(out_bytes / BytesOf(dtype)), 2);
        for (const Threading& t : kThreadings) {
          const std::string label = std::string(roialign_kernel_name(kernel)) + (backward ? " backward " : " ") + t.name;
          if (backward) {
            CheckWorkspace(
                label, dx_bytes, OptionsFor(t),
                [&](const roialign_options& o, unsigned char* dx) {
                  return roialign_run_backward(kernel, &c.inputs, dy.data(), dx, &o);
                },
                [&](const roialign_options& o, size_t* n) {
                  return roialign_backward_workspace_size(kernel, &c.inputs, &o, n);
                });
          } else {
            CheckWorkspace(
                label, out_bytes, OptionsFor(t),
                [&](const roialign_options& o, unsigned char* out) { return roialign_run(kernel, &c.inputs, out, &o); },
                [&](const roialign_options& o, size_t* n) { return roialign_workspace_size(kernel, &c.inputs, &o, n); });
          }
        }
        roialign_kernel_free(kernel);
      }
    }
  }
}

// Maps larger than a band of rows: NHWC reads them in place band by band, NCHW through the band transform.
TEST_F(Workspace, RowBandsAllocateNothingAndMatch) {
  for (roialign_layout layout : {ROIALIGN_LAYOUT_NCHW, ROIALIGN_LAYOUT_NHWC}) {
    for (roialign_pool_mode mode : {ROIALIGN_POOL_AVG, ROIALIGN_POOL_MAX}) {
      roialign_params params;
      roialign_params_init(&params);
      params.layout = layout;
      params.pool_mode = mode;
      params.sampling_ratio = 2;
      roialign_kernel* kernel = nullptr;
      ASSERT_EQ(roialign_select("host", &params, &kernel), ROIALIGN_OK);
      // 128 channels x 120 columns of f32: 60 KB a row, so 8 MB bands of about 136 rows; 150 rows make two.
      const Call c = MakeCall(layout, ROIALIGN_DTYPE_F32, 1, 128, 150, 120, MakeRois(300, 1, 150, 120, 0.5f), false);
      const size_t out_bytes = static_cast<size_t>(300 * 128 * 49) * 4;
      for (const Threading& t : kThreadings) {
        CheckWorkspace(
            std::string(roialign_kernel_name(kernel)) + " bands " + t.name, out_bytes, OptionsFor(t),
            [&](const roialign_options& o, unsigned char* out) { return roialign_run(kernel, &c.inputs, out, &o); },
            [&](const roialign_options& o, size_t* n) { return roialign_workspace_size(kernel, &c.inputs, &o, n); });
      }
      roialign_kernel_free(kernel);
    }
  }
}

TEST_F(Workspace, MultiLevelRunsAllocateNothingAndMatch) {
  for (const char* target : {"host", "generic"}) {
    for (roialign_layout layout : {ROIALIGN_LAYOUT_NCHW, ROIALIGN_LAYOUT_NHWC}) {
      for (roialign_dtype dtype : {ROIALIGN_DTYPE_F32, ROIALIGN_DTYPE_BF16}) {
        for (bool strided : {false, true}) {
          roialign_params params;
          roialign_params_init(&params);
          params.layout = layout;
          params.dtype = dtype;
          roialign_multi_level_params levels;
          roialign_multi_level_params_init(&levels);
          levels.num_levels = 2;
          levels.scales[0] = 0.25f;
          levels.scales[1] = 0.125f;
          levels.canonical_size = 64.0f;
          levels.canonical_level = 3;
          roialign_multi_level_kernel* kernel = nullptr;
          ASSERT_EQ(roialign_multi_level_select(target, &params, &levels, &kernel), ROIALIGN_OK) << target;
          // Level maps of 32 x 40 and 16 x 20 for a 128 x 160 image; RoIs from small to large pick both levels.
          const Call l0 = MakeCall(layout, dtype, 2, 11, 32, 40, MakeRois(30, 2, 128, 160, 0.6f), strided);
          const Call l1 = MakeCall(layout, dtype, 2, 11, 16, 20, {}, strided);
          roialign_inputs in = l0.inputs;
          in.num_maps = 2;
          in.maps[1] = l1.inputs.maps[0];
          const size_t out_bytes = static_cast<size_t>(30 * 11 * 49) * BytesOf(dtype);
          for (const Threading& t : kThreadings) {
            CheckWorkspace(
                std::string(roialign_multi_level_kernel_name(kernel)) + (strided ? " strided " : " ") + t.name,
                out_bytes, OptionsFor(t),
                [&](const roialign_options& o, unsigned char* out) {
                  return roialign_multi_level_run(kernel, &in, out, &o);
                },
                [&](const roialign_options& o, size_t* n) {
                  return roialign_multi_level_workspace_size(kernel, &in, &o, n);
                });
          }
          roialign_multi_level_kernel_free(kernel);
        }
      }
    }
  }
}

TEST_F(Workspace, MalformedWorkspaceAndQueriesAreRefused) {
  roialign_params params;
  roialign_params_init(&params);
  roialign_kernel* kernel = nullptr;
  ASSERT_EQ(roialign_select("host", &params, &kernel), ROIALIGN_OK);
  const Call c = MakeCall(ROIALIGN_LAYOUT_NCHW, ROIALIGN_DTYPE_F32, 1, 8, 16, 16, MakeRois(3, 1, 16, 16, 0.5f), false);
  Bytes out(3 * 8 * 49 * 4, kSentinel), block(64);
  roialign_options o;
  roialign_options_init(&o);
  o.workspace_size = 64;  // NULL with a size
  EXPECT_EQ(roialign_run(kernel, &c.inputs, out.data(), &o), ROIALIGN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(roialign_last_error()).find("workspace"), std::string::npos) << roialign_last_error();
  o.workspace = block.data();
  o.workspace_size = 0;  // a block of no size
  EXPECT_EQ(roialign_run(kernel, &c.inputs, out.data(), &o), ROIALIGN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(roialign_last_error()).find("workspace_size is 0"), std::string::npos) << roialign_last_error();
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](unsigned char b) { return b == kSentinel; }));
  // The query validates as the run does, with the run's messages.
  size_t bytes = 7;
  EXPECT_EQ(roialign_workspace_size(kernel, &c.inputs, nullptr, nullptr), ROIALIGN_INVALID_ARGUMENT);
  roialign_inputs bad = c.inputs;
  bad.rois = nullptr;
  const roialign_options none = [] { roialign_options d; roialign_options_init(&d); return d; }();
  EXPECT_EQ(roialign_run(kernel, &bad, out.data(), &none), ROIALIGN_INVALID_ARGUMENT);
  const std::string run_message = roialign_last_error();
  EXPECT_EQ(roialign_workspace_size(kernel, &bad, &none, &bytes), ROIALIGN_INVALID_ARGUMENT);
  EXPECT_EQ(run_message, roialign_last_error());
  EXPECT_EQ(bytes, 7u) << "a refused query wrote its answer";
  // More threads need more per-thread scratch. A caller's pool, because a build without OpenMP runs num_threads
  // on the calling thread alone; a pool's slots count in every build.
  size_t one = 0, two = 0;
  roialign_options t = none;
  roialign_threadpool single = interface_;
  single.num_threads = 1;
  t.threadpool = &single;
  ASSERT_EQ(roialign_workspace_size(kernel, &c.inputs, &t, &one), ROIALIGN_OK);
  t.threadpool = &interface_;
  ASSERT_EQ(roialign_workspace_size(kernel, &c.inputs, &t, &two), ROIALIGN_OK);
  EXPECT_GT(two, one);
  roialign_kernel_free(kernel);
}

}  // namespace
