// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The backward through the C API (roialign_run_backward and its multi-level and workspace forms): selection with
// ROIALIGN_PARAMS_BACKWARD, the same bits for every thread count and pool, the forward's transpose (the adjoint
// identity against the SIMD forward kernels), each level's dX in a multi-level call, and every bad input refused
// with dX untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "include/roialign/roialign.h"
#include "tests/test_util.h"

namespace roialign {
namespace testing {
namespace {

constexpr unsigned char kUntouched = 0xA5;  // dX's bytes before a call; a refused call must leave them

roialign_params CParams(Layout layout, DType dtype, PoolMode mode, bool backward) {
  roialign_params p;
  roialign_params_init(&p);
  p.pooled_height = 3;
  p.pooled_width = 4;
  p.spatial_scale = 0.5f;
  p.sampling_ratio = 2;
  p.coordinate_mode = ROIALIGN_COORD_HALF_PIXEL;
  p.pool_mode = static_cast<roialign_pool_mode>(mode);
  p.layout = static_cast<roialign_layout>(layout);
  p.dtype = static_cast<roialign_dtype>(dtype);
  if (backward) p.flags |= ROIALIGN_PARAMS_BACKWARD;
  return p;
}

// A backward call's tensors, stored in the kernel's layout and dtype.
struct Tensors {
  std::vector<unsigned char> map, dy;
  size_t dx_bytes = 0;
  roialign_inputs inputs;
};

Tensors Store(const Problem& p, const roialign_params& params, std::mt19937* rng) {
  const Layout layout = static_cast<Layout>(params.layout);
  const DType dtype = static_cast<DType>(params.dtype);
  Tensors t;
  t.map = StoreAs(dtype, ToLayout(p.input, layout, p.n, p.c, p.h, p.w));
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> dy(static_cast<size_t>(p.k() * p.c * params.pooled_height * params.pooled_width));
  for (float& v : dy) v = value(*rng);
  t.dy = StoreAs(dtype, ToLayout(dy, layout, p.k(), p.c, params.pooled_height, params.pooled_width));
  t.dx_bytes = OutputSize(layout, p.n, p.c, p.h, p.w) * static_cast<size_t>(internal::BytesOf(dtype));
  roialign_inputs_init(&t.inputs);
  t.inputs.batch = p.n;
  t.inputs.channels = p.c;
  t.inputs.maps[0].data = t.map.data();
  t.inputs.maps[0].height = p.h;
  t.inputs.maps[0].width = p.w;
  t.inputs.rois = p.rois5.data();
  if (dtype == DType::kF64) {  // read in double
    t.inputs.rois = nullptr;
    t.inputs.rois_f64 = p.rois5_f64.data();
  }
  t.inputs.num_rois = p.k();
  return t;
}

std::vector<unsigned char> Backward(const roialign_kernel* kernel, const Tensors& t, const roialign_options* options) {
  std::vector<unsigned char> dx(t.dx_bytes, kUntouched);
  const roialign_status s = roialign_run_backward(kernel, &t.inputs, t.dy.data(), dx.data(), options);
  EXPECT_EQ(s, ROIALIGN_OK) << roialign_last_error();
  return dx;
}

TEST(Backward, SelectionNeedsAnImplementationWithABackward) {
  for (DType dtype : internal::AllValues<DType>()) {
    for (Layout layout : internal::AllValues<Layout>()) {
      roialign_params p = CParams(layout, dtype, PoolMode::kAvg, true);
      KernelHolder generic;
      ASSERT_EQ(roialign_select("generic", &p, &generic.k), ROIALIGN_OK) << roialign_last_error();
      EXPECT_NE(std::string(roialign_kernel_name(generic.k)).find(".reference"), std::string::npos);
    }
  }
  // The host's best SIMD kernel has one too.
  roialign_params p = CParams(Layout::kNHWC, DType::kF32, PoolMode::kAvg, true);
  KernelHolder host, plain;
  ASSERT_EQ(roialign_select("host", &p, &host.k), ROIALIGN_OK) << roialign_last_error();
  p.flags = 0;
  ASSERT_EQ(roialign_select("host", &p, &plain.k), ROIALIGN_OK);
  EXPECT_STREQ(roialign_kernel_name(host.k), roialign_kernel_name(plain.k));
  p.flags = 2;  // no such flag
  KernelHolder none;
  EXPECT_EQ(roialign_select("generic", &p, &none.k), ROIALIGN_UNSUPPORTED);
  EXPECT_EQ(none.k, nullptr);
}

roialign_status ForwardOnly(const roialign_problem*, void*) { return ROIALIGN_OK; }

// A registered implementation has no backward: selection with the flag refuses its target, and a kernel selected
// without the flag refuses the backward, leaving dX untouched.
TEST(Backward, ARegisteredImplementationRefusesTheBackward) {
  roialign_implementation impl;
  roialign_implementation_init(&impl);
  impl.target = "backward-test-npu";
  impl.name = "roi_align_nhwc.backward-test-npu";
  impl.layouts = 1u << ROIALIGN_LAYOUT_NHWC;
  impl.dtypes = 1u << ROIALIGN_DTYPE_F32;
  impl.pool_modes = 0x7u;
  impl.coordinate_modes = 0xFu;
  impl.fn = ForwardOnly;
  ASSERT_EQ(roialign_register(&impl), ROIALIGN_OK) << roialign_last_error();
  roialign_params p = CParams(Layout::kNHWC, DType::kF32, PoolMode::kAvg, true);
  KernelHolder refused, kernel;
  EXPECT_EQ(roialign_select(impl.target, &p, &refused.k), ROIALIGN_UNSUPPORTED);
  EXPECT_NE(std::string(roialign_last_error()).find("no roi_align backward"), std::string::npos);
  p.flags = 0;
  ASSERT_EQ(roialign_select(impl.target, &p, &kernel.k), ROIALIGN_OK) << roialign_last_error();
  std::mt19937 rng(3);
  const Problem prob = RandomProblem(&rng, 1, 5, 6, 7, 4, 0.5f);
  const Tensors t = Store(prob, p, &rng);
  std::vector<unsigned char> dx(t.dx_bytes, kUntouched);
  EXPECT_EQ(roialign_run_backward(kernel.k, &t.inputs, t.dy.data(), dx.data(), nullptr), ROIALIGN_UNSUPPORTED);
  EXPECT_NE(std::string(roialign_last_error()).find("has no backward"), std::string::npos) << roialign_last_error();
  EXPECT_EQ(dx, std::vector<unsigned char>(t.dx_bytes, kUntouched));
}

// Every target's backward against the scalar reference's, bit for bit: every compiled target this CPU runs, layout,
// dtype and pool mode, maps with NaN and infinities (which decide the MAX modes' argmax), ties (a constant
// region), RoIs outside and across the map, bins with one sample and with many, split over 3 threads; and a map
// two rows tall on 8 threads, which the plan splits into channel ranges that start and end inside blocks.
TEST(Backward, EveryTargetGivesTheReferenceBits) {
  std::vector<std::string> targets;
  {
    std::vector<char> names(4096);
    size_t needed = 0;
    ASSERT_EQ(roialign_known_targets(names.data(), names.size(), &needed), ROIALIGN_OK);
    for (const char* n = names.data(); *n != '\0'; n += std::strlen(n) + 1) targets.emplace_back(n);
  }
  std::mt19937 rng(17);
  std::vector<std::string> tested;
  for (PoolMode mode : internal::AllValues<PoolMode>()) {
    for (DType dtype : internal::AllValues<DType>()) {
      for (Layout layout : internal::AllValues<Layout>()) {
        for (int shape = 0; shape < 3; ++shape) {
          // Channels that end mid-vector and mid-block; a map wider than tall, one taller than wide, a flat one.
          Problem prob = shape == 0   ? RandomProblem(&rng, 2, 21, 9, 14, 16, 0.5f)
                         : shape == 1 ? RandomProblem(&rng, 1, 35, 17, 6, 12, 0.5f)
                                      : RandomProblem(&rng, 1, 37, 2, 9, 10, 0.5f);
          for (size_t i = 0; i < prob.input.size(); i += 37) prob.input[i] = NAN;
          prob.input[5] = INFINITY;
          prob.input[11] = -INFINITY;
          for (size_t i = 40; i < 60 && i < prob.input.size(); ++i) prob.input[i] = 0.25f;  // ties
          roialign_params p = CParams(layout, dtype, mode, true);
          p.sampling_ratio = shape == 0 ? 2 : 0;  // fixed, and adaptive (many samples in large bins)
          KernelHolder reference;
          ASSERT_EQ(roialign_select("generic", &p, &reference.k), ROIALIGN_OK);
          const Tensors t = Store(prob, p, &rng);
          const std::vector<unsigned char> want = Backward(reference.k, t, nullptr);
          for (const std::string& target : targets) {
            KernelHolder kernel;
            if (target == "generic" || roialign_select(target.c_str(), &p, &kernel.k) != ROIALIGN_OK) continue;
            const std::string name = roialign_kernel_name(kernel.k);
            if (std::find(tested.begin(), tested.end(), name) == tested.end()) tested.push_back(name);
            roialign_options options;
            roialign_options_init(&options);
            options.num_threads = shape == 2 ? 8 : 3;
            const std::vector<unsigned char> got = Backward(kernel.k, t, &options);
            EXPECT_TRUE(got == want) << name << " " << ToString(mode) << " " << ToString(dtype) << " shape " << shape;
          }
        }
      }
    }
  }
  // Every layout on the host's best target at least, and its f32 portable fallback.
  EXPECT_GE(tested.size(), internal::AllValues<Layout>().size()) << "kernels tested: " << tested.size();
}

// The same bits for 1, 2, 3 and 8 threads, the caller's pool running tasks backwards, and a caller's workspace of
// exactly the queried size; every byte of dX is written.
TEST(Backward, SameBitsForAnyThreadsPoolAndWorkspace) {
  std::mt19937 rng(11);
  for (PoolMode mode : internal::AllValues<PoolMode>()) {
    for (DType dtype : internal::AllValues<DType>()) {
      for (Layout layout : internal::AllValues<Layout>()) {
        SCOPED_TRACE(std::string(ToString(mode)) + " " + ToString(dtype) + " " + ToString(layout));
        const Problem prob = RandomProblem(&rng, 2, 19, 9, 11, 12, 0.5f);
        roialign_params p = CParams(layout, dtype, mode, true);
        KernelHolder kernel;
        ASSERT_EQ(roialign_select("generic", &p, &kernel.k), ROIALIGN_OK) << roialign_last_error();
        const Tensors t = Store(prob, p, &rng);
        roialign_options options;
        roialign_options_init(&options);
        options.num_threads = 1;
        const std::vector<unsigned char> one = Backward(kernel.k, t, &options);
        // Every byte written: the same call into a dX of other bytes gives the same result.
        std::vector<unsigned char> other(t.dx_bytes, 0x3C);
        ASSERT_EQ(roialign_run_backward(kernel.k, &t.inputs, t.dy.data(), other.data(), &options), ROIALIGN_OK);
        EXPECT_EQ(other, one);
        for (int threads : {2, 3, 8}) {
          options.num_threads = threads;
          EXPECT_EQ(Backward(kernel.k, t, &options), one) << threads << " threads";
        }
        roialign_threadpool pool;
        roialign_threadpool_init(&pool);
        pool.parallel_for = ReversePool;
        pool.num_threads = 5;
        roialign_options_init(&options);
        options.threadpool = &pool;
        EXPECT_EQ(Backward(kernel.k, t, &options), one) << "pool";
        size_t bytes = 0;
        ASSERT_EQ(roialign_backward_workspace_size(kernel.k, &t.inputs, &options, &bytes), ROIALIGN_OK);
        std::vector<unsigned char> workspace(bytes + 1);
        options.workspace = workspace.data() + 1;  // any alignment
        options.workspace_size = bytes;
        EXPECT_EQ(Backward(kernel.k, t, &options), one) << "workspace";
      }
    }
  }
}

// AVG is linear, Y = A X, and the backward is its transpose: <dY, A X> = <A^T dY, X>, with A X from the host's SIMD
// forward kernel and A^T dY from the backward, in f64 sums.
TEST(Backward, AvgIsTheTransposeOfTheForward) {
  std::mt19937 rng(5);
  for (Layout layout : internal::AllValues<Layout>()) {
    SCOPED_TRACE(ToString(layout));
    const Problem prob = RandomProblem(&rng, 2, 10, 13, 12, 20, 0.5f);
    roialign_params forward_params = CParams(layout, DType::kF32, PoolMode::kAvg, false);
    roialign_params backward_params = CParams(layout, DType::kF32, PoolMode::kAvg, true);
    KernelHolder forward, backward;
    ASSERT_EQ(roialign_select("host", &forward_params, &forward.k), ROIALIGN_OK);
    ASSERT_EQ(roialign_select("generic", &backward_params, &backward.k), ROIALIGN_OK);
    const Tensors t = Store(prob, backward_params, &rng);
    std::vector<float> y(t.dy.size() / sizeof(float));
    ASSERT_EQ(roialign_run(forward.k, &t.inputs, y.data(), nullptr), ROIALIGN_OK) << roialign_last_error();
    const std::vector<unsigned char> dx = Backward(backward.k, t, nullptr);
    // Padded lanes: NaN in the map and dY, +0 in dX and the forward's output; skip them on both sides.
    double lhs = 0, rhs = 0, scale = 0;
    const float* dy = reinterpret_cast<const float*>(t.dy.data());
    for (size_t i = 0; i < y.size(); ++i) {
      if (std::isnan(dy[i])) continue;
      lhs += static_cast<double>(dy[i]) * y[i];
      scale += std::fabs(static_cast<double>(dy[i]) * y[i]);
    }
    const float* x = reinterpret_cast<const float*>(t.map.data());
    const float* g = reinterpret_cast<const float*>(dx.data());
    for (size_t i = 0; i < t.dx_bytes / sizeof(float); ++i) {
      if (std::isnan(x[i])) {
        EXPECT_EQ(g[i], 0.0f) << "padded lane " << i;
        continue;
      }
      rhs += static_cast<double>(g[i]) * x[i];
    }
    EXPECT_GT(scale, 0.0);
    EXPECT_NEAR(lhs, rhs, 1e-5 * scale);
  }
}

TEST(Backward, NoRoisGiveZeros) {
  std::mt19937 rng(2);
  Problem prob = RandomProblem(&rng, 2, 3, 4, 5, 0, 1.0f);
  roialign_params p = CParams(Layout::kNCHW8c, DType::kBF16, PoolMode::kMax, true);
  KernelHolder kernel;
  ASSERT_EQ(roialign_select("generic", &p, &kernel.k), ROIALIGN_OK);
  const Tensors t = Store(prob, p, &rng);
  EXPECT_EQ(Backward(kernel.k, t, nullptr), std::vector<unsigned char>(t.dx_bytes, 0));
}

TEST(Backward, BadInputIsRefusedWithDxUntouched) {
  std::mt19937 rng(7);
  Problem prob = RandomProblem(&rng, 2, 6, 8, 9, 5, 0.5f);
  roialign_params p = CParams(Layout::kNHWC, DType::kF32, PoolMode::kMax, true);
  KernelHolder kernel;
  ASSERT_EQ(roialign_select("generic", &p, &kernel.k), ROIALIGN_OK);
  Tensors t = Store(prob, p, &rng);
  const std::vector<unsigned char> untouched(t.dx_bytes, kUntouched);
  std::vector<unsigned char> dx = untouched;
  auto expect_refused = [&](const roialign_inputs& in, const void* dy, void* grad, const char* what) {
    EXPECT_EQ(roialign_run_backward(kernel.k, &in, dy, grad, nullptr), ROIALIGN_INVALID_ARGUMENT) << what;
    EXPECT_NE(std::string(roialign_last_error()).find(what), std::string::npos) << roialign_last_error();
    EXPECT_EQ(dx, untouched) << what;
  };
  expect_refused(t.inputs, nullptr, dx.data(), "grad_output");
  expect_refused(t.inputs, t.dy.data(), nullptr, "grad_input");
  // dX over dY, and over the map that the MAX backward reads.
  std::vector<unsigned char> shared(t.dx_bytes + t.dy.size());
  roialign_inputs in = t.inputs;
  EXPECT_EQ(roialign_run_backward(kernel.k, &in, shared.data() + 4, shared.data(), nullptr), ROIALIGN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(roialign_last_error()).find("overlaps grad_output"), std::string::npos);
  std::vector<unsigned char> map_and_dx = t.map;
  in.maps[0].data = map_and_dx.data();
  EXPECT_EQ(roialign_run_backward(kernel.k, &in, t.dy.data(), map_and_dx.data(), nullptr), ROIALIGN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(roialign_last_error()).find("overlaps the map"), std::string::npos);
  EXPECT_EQ(map_and_dx, t.map);
  // The forward's checks: a batch index out of range, a non-finite box, two maps.
  std::vector<float> rois = prob.rois5;
  in = t.inputs;
  in.rois = rois.data();
  rois[5] = 2.0f;  // RoI 1 in image 2 of 2
  expect_refused(in, t.dy.data(), dx.data(), "roi 1");
  rois = prob.rois5;
  rois[7] = NAN;
  expect_refused(in, t.dy.data(), dx.data(), "roi 1");
  in = t.inputs;
  in.num_maps = 2;
  expect_refused(in, t.dy.data(), dx.data(), "num_maps");
  // A workspace one byte short.
  size_t bytes = 0;
  ASSERT_EQ(roialign_backward_workspace_size(kernel.k, &t.inputs, nullptr, &bytes), ROIALIGN_OK);
  ASSERT_GT(bytes, 0u);
  std::vector<unsigned char> workspace(bytes);
  roialign_options options;
  roialign_options_init(&options);
  options.workspace = workspace.data();
  options.workspace_size = bytes - 1;
  EXPECT_EQ(roialign_run_backward(kernel.k, &t.inputs, t.dy.data(), dx.data(), &options), ROIALIGN_INVALID_ARGUMENT);
  EXPECT_EQ(dx, untouched);
}

// Multi-level with given levels: level l's dX is the single-level backward of the RoIs on level l, at its scale.
TEST(Backward, MultiLevelWritesEachLevelsGradient) {
  std::mt19937 rng(13);
  for (PoolMode mode : {PoolMode::kAvg, PoolMode::kMax}) {
    const int64_t N = 2, C = 7, K = 16;
    const float scales[3] = {0.5f, 0.25f, 0.125f};
    const int64_t sizes[3] = {16, 8, 4};
    std::vector<Problem> maps;
    for (int l = 0; l < 3; ++l) maps.push_back(RandomProblem(&rng, N, C, sizes[l], sizes[l] + 1, 0, scales[l]));
    Problem rois = RandomProblem(&rng, N, C, 16, 17, K, 0.5f);
    std::vector<int32_t> levels(K);
    for (int64_t k = 0; k < K; ++k) levels[static_cast<size_t>(k)] = static_cast<int32_t>(rng() % 3);
    levels[0] = 2;  // level 1 gets RoIs only at random; 2 has at least one

    roialign_params p = CParams(Layout::kNCHW4c, DType::kF32, mode, true);
    roialign_multi_level_params mp;
    roialign_multi_level_params_init(&mp);
    mp.num_levels = 3;
    std::copy(scales, scales + 3, mp.scales);
    mp.level_rule = ROIALIGN_LEVEL_RULE_GIVEN;
    roialign_multi_level_kernel* ml = nullptr;
    ASSERT_EQ(roialign_multi_level_select("generic", &p, &mp, &ml), ROIALIGN_OK) << roialign_last_error();
    std::vector<std::vector<unsigned char>> stored(3), dx(3);
    roialign_inputs in;
    roialign_inputs_init(&in);
    in.batch = N;
    in.channels = C;
    in.num_maps = 3;
    in.rois = rois.rois5.data();
    in.num_rois = K;
    in.levels = levels.data();
    void* grads[3];
    for (int l = 0; l < 3; ++l) {
      stored[l] = StoreAs(DType::kF32, ToLayout(maps[l].input, Layout::kNCHW4c, N, C, maps[l].h, maps[l].w));
      in.maps[l].data = stored[l].data();
      in.maps[l].height = maps[l].h;
      in.maps[l].width = maps[l].w;
      dx[l].assign(stored[l].size(), kUntouched);
      grads[l] = dx[l].data();
    }
    const Tensors dy_source = Store(rois, p, &rng);
    ASSERT_EQ(roialign_multi_level_run_backward(ml, &in, dy_source.dy.data(), grads, nullptr), ROIALIGN_OK)
        << roialign_last_error();
    roialign_multi_level_kernel_free(ml);

    for (int l = 0; l < 3; ++l) {
      // The RoIs of level l alone, with their rows of dY, on level l's map at its scale.
      Problem one = maps[l];
      const size_t row = dy_source.dy.size() / static_cast<size_t>(K);
      std::vector<unsigned char> dy;
      for (int64_t k = 0; k < K; ++k) {
        if (levels[static_cast<size_t>(k)] != l) continue;
        const float* b = rois.rois5.data() + 5 * k;
        AddRoi(&one, static_cast<int64_t>(b[0]), b[1], b[2], b[3], b[4]);
        dy.insert(dy.end(), dy_source.dy.begin() + static_cast<std::ptrdiff_t>(row * static_cast<size_t>(k)),
                  dy_source.dy.begin() + static_cast<std::ptrdiff_t>(row * static_cast<size_t>(k + 1)));
      }
      roialign_params single = p;
      single.spatial_scale = scales[l];
      KernelHolder kernel;
      ASSERT_EQ(roialign_select("generic", &single, &kernel.k), ROIALIGN_OK);
      Tensors t = Store(one, single, &rng);
      t.map = stored[l];
      t.inputs.maps[0].data = t.map.data();
      t.dy = dy;
      EXPECT_EQ(Backward(kernel.k, t, nullptr), dx[l]) << "level " << l;
    }
  }
}

}  // namespace
}  // namespace testing
}  // namespace roialign
