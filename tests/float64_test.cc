// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// float64 (docs/semantics.md#float64): maps, RoIs, the spatial scale and every intermediate in double, on every
// target and layout, forward and backward; and its inputs refused where they do not belong. The kernels' bits
// against the reference are checked with every other dtype (kernels_test.cc, backward_test.cc, multi_level_test.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/enums.h"
#include "tests/test_util.h"

namespace roialign {
namespace testing {
namespace {

// Every target that serves F64 here, with each layout.
std::vector<std::pair<std::string, Layout>> F64Targets() {
  std::vector<std::pair<std::string, Layout>> out;
  for (const std::string& name : TargetNames()) {
    TargetInfo t;
    if (!DescribeTarget(name, &t).ok()) continue;  // a target this CPU cannot run
    if (std::find(t.dtypes.begin(), t.dtypes.end(), DType::kF64) == t.dtypes.end()) continue;
    for (Layout layout : t.layouts) out.push_back({name, layout});
  }
  return out;
}

// A map that is linear in (y, x) per channel, v = a_c + b_c y + d_c x: bilinear interpolation reproduces it
// exactly, so a bin's AVG is the map at its samples' mean position, known in closed form. The RoIs' coordinates
// and the scale (1/3) are not representable in float: a float computation misses by ~1e-7 relative, a double one
// by ~1e-15.
struct LinearCase {
  int64_t c = 5, h = 23, w = 31, ph = 3, pw = 4;
  int32_t ratio = 2;
  double scale = 1.0 / 3.0;
  std::vector<double> map;   // NCHW
  std::vector<double> rois;  // [K,5]
  double a(int64_t ch) const { return 0.1 * static_cast<double>(ch) + 0.3; }
  double b(int64_t ch) const { return 1.0 + 0.25 * static_cast<double>(ch); }
  double d(int64_t ch) const { return 0.7 - 0.125 * static_cast<double>(ch); }
  LinearCase() {
    map.resize(static_cast<size_t>(c * h * w));
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x)
          map[static_cast<size_t>((ch * h + y) * w + x)] =
              a(ch) + b(ch) * static_cast<double>(y) + d(ch) * static_cast<double>(x);
    // Boxes inside the map (no clamping at the border), HALF_PIXEL coordinates.
    rois = {0, 3.1234567890123, 4.9876543210987, 60.2222222222221, 50.7777777777771,
            0, 10.000000012345, 7.3333333333333, 31.4159265358979, 27.1828182845904};
  }
  // The exact AVG of bin (i, j) of RoI k, channel ch: the map at the mean of the bin's sample positions.
  double Expected(int64_t k, int64_t ch, int64_t i, int64_t j) const {
    const double* r = &rois[static_cast<size_t>(5 * k)];
    auto mean = [&](double c1, double c2, int64_t pooled, int64_t bin) {
      const double start = c1 * scale - 0.5, size = (c2 - c1) * scale, step = size / static_cast<double>(pooled);
      return start + (static_cast<double>(bin) + 0.5) * step;  // the samples are symmetric about the bin's centre
    };
    return a(ch) + b(ch) * mean(r[2], r[4], ph, i) + d(ch) * mean(r[1], r[3], pw, j);
  }
};

TEST(Float64, EveryTargetAndLayoutComputesInDouble) {
  const LinearCase lc;
  const int64_t K = 2;
  size_t checked = 0;
  for (const auto& [target, layout] : F64Targets()) {
    Params params;
    params.pooled_height = lc.ph;
    params.pooled_width = lc.pw;
    params.sampling_ratio = lc.ratio;
    params.coordinate_mode = CoordinateMode::kHalfPixel;
    params.layout = layout;
    params.dtype = DType::kF64;
    params.spatial_scale = static_cast<float>(lc.scale);  // what a float scale would be: not read for F64
    params.spatial_scale_f64 = lc.scale;
    Selection sel = SelectKernel(target, params);
    ASSERT_TRUE(sel.ok()) << target << ": " << sel.status().message();
    const std::vector<double> map = ToLayout(lc.map, layout, 1, lc.c, lc.h, lc.w, 0.0);
    const size_t n = OutputSize(layout, K, lc.c, lc.ph, lc.pw);
    std::vector<double> out(n, -777.0);
    Inputs in;
    in.input = map.data();
    in.batch = 1;
    in.channels = lc.c;
    in.height = lc.h;
    in.width = lc.w;
    in.rois_f64 = lc.rois.data();
    in.num_rois = K;
    const Status s = sel->Run(in, out.data(), 2);
    ASSERT_TRUE(s.ok()) << s.message();
    const internal::MapStrides o = internal::StridesOf(layout, lc.c, lc.ph, lc.pw);
    for (int64_t k = 0; k < K; ++k)
      for (int64_t ch = 0; ch < lc.c; ++ch)
        for (int64_t i = 0; i < lc.ph; ++i)
          for (int64_t j = 0; j < lc.pw; ++j) {
            const double want = lc.Expected(k, ch, i, j), got = out[static_cast<size_t>(o.Offset(k, ch, i, j))];
            // 1e-12 relative: a float computation anywhere (coordinates, scale, weights, sums) misses by 1e-7.
            EXPECT_NEAR(got, want, 1e-12 * std::fabs(want)) << sel->name() << " k " << k << " c " << ch << " bin "
                                                             << i << "," << j;
            ++checked;
          }
  }
  EXPECT_GT(checked, 0u);
}

// A scale of 0 in spatial_scale_f64 takes spatial_scale (widened), as every caller before 1.3 had it.
TEST(Float64, ZeroDoubleScaleTakesTheFloatScale) {
  const LinearCase lc;
  Params params;
  params.pooled_height = lc.ph;
  params.pooled_width = lc.pw;
  params.sampling_ratio = lc.ratio;
  params.coordinate_mode = CoordinateMode::kHalfPixel;
  params.layout = Layout::kNCHW;
  params.dtype = DType::kF64;
  std::vector<double> a(OutputSize(Layout::kNCHW, 2, lc.c, lc.ph, lc.pw)), b = a;
  Inputs in;
  in.input = lc.map.data();
  in.batch = 1;
  in.channels = lc.c;
  in.height = lc.h;
  in.width = lc.w;
  in.rois_f64 = lc.rois.data();
  in.num_rois = 2;
  params.spatial_scale = 0.25f;
  Selection implicit = SelectKernel("host", params);
  ASSERT_TRUE(implicit.ok()) << implicit.status().message();
  ASSERT_TRUE(implicit->Run(in, a.data()).ok());
  params.spatial_scale = 1.0f;
  params.spatial_scale_f64 = 0.25;
  Selection explicit_scale = SelectKernel("host", params);
  ASSERT_TRUE(explicit_scale.ok()) << explicit_scale.status().message();
  ASSERT_TRUE(explicit_scale->Run(in, b.data()).ok());
  EXPECT_EQ(a, b);
}

TEST(Float64, TheDoubleScaleIsForF64OnlyAndMustBeValid) {
  Params params;
  params.dtype = DType::kF32;
  params.spatial_scale_f64 = 0.5;
  Selection sel = SelectKernel("host", params);
  ASSERT_FALSE(sel.ok());
  EXPECT_NE(sel.status().message().find("spatial_scale_f64 is 0.5, but it is read for dtype F64 only"),
            std::string::npos)
      << sel.status().message();
  params.dtype = DType::kF64;
  for (double bad : {-1.0, static_cast<double>(NAN), static_cast<double>(INFINITY)}) {
    params.spatial_scale_f64 = bad;
    sel = SelectKernel("host", params);
    ASSERT_FALSE(sel.ok()) << bad;
    EXPECT_NE(sel.status().message().find("spatial_scale_f64 must be finite and > 0"), std::string::npos)
        << sel.status().message();
  }
}

// The RoIs of each dtype come from their own field; the wrong one, a missing one or a bad value in double is refused
// with the output untouched, on every target that serves F64.
TEST(Float64, BadRoisAreRefusedWithTheOutputUntouched) {
  const std::vector<double> map(2 * 16 * 8 * 9, 1.0);  // room for a blocked layout's padded block
  const std::vector<float> rois_f32 = {0, 1, 1, 4, 4};
  for (const auto& [target, layout] : F64Targets()) {
    Params params;
    params.pooled_height = params.pooled_width = 2;
    params.layout = layout;
    params.dtype = DType::kF64;
    Selection sel = SelectKernel(target, params);
    ASSERT_TRUE(sel.ok()) << sel.status().message();
    struct Bad {
      std::vector<double> rois;
      bool float_rois;  // also (or instead) pass rois_f32 in `rois`
      bool null_f64;
      const char* message;
    };
    const Bad cases[] = {
        {{0, 1, 1, 4, 4}, true, false, "dtype F64 reads its RoIs in double from rois_f64; rois must be null"},
        {{0, 1, 1, 4, 4}, true, true, "dtype F64 reads its RoIs in double from rois_f64; rois must be null"},
        {{0, 1, 1, 4, 4}, false, true, "rois_f64 is null but num_rois is 1"},
        {{0, 1, NAN, 4, 4}, false, false, "roi 0: y1 is not finite (nan)"},
        {{2, 1, 1, 4, 4}, false, false, "roi 0: batch index 2 is outside [0, 2)"},
        {{0.5, 1, 1, 4, 4}, false, false, "roi 0: batch index 0.5 is not an integer"},
        {{0, -1e308, 1, 1e308, 4}, false, false, "coordinates overflow float64 after scaling"},
    };
    for (const Bad& c : cases) {
      std::vector<double> out(OutputSize(layout, 1, 3, 2, 2), -12345.0);
      const std::vector<double> before = out;
      Inputs in;
      in.input = map.data();
      in.batch = 2;
      in.channels = 3;
      in.height = 8;
      in.width = 9;
      in.rois = c.float_rois ? rois_f32.data() : nullptr;
      in.rois_f64 = c.null_f64 ? nullptr : c.rois.data();
      in.num_rois = 1;
      const Status s = sel->Run(in, out.data());
      ASSERT_FALSE(s.ok()) << sel->name() << ": " << c.message;
      EXPECT_NE(s.message().find(c.message), std::string::npos) << sel->name() << ": " << s.message();
      EXPECT_EQ(out, before) << sel->name() << ": " << c.message;
    }
  }
  // And double RoIs are refused by every other dtype.
  Params params;
  params.pooled_height = params.pooled_width = 2;
  Selection sel = SelectKernel("host", params);
  ASSERT_TRUE(sel.ok());
  const std::vector<float> map32(3 * 8 * 9, 1.0f);
  const std::vector<double> rois = {0, 1, 1, 4, 4};
  std::vector<float> out(12, -1.0f);
  Inputs in;
  in.input = map32.data();
  in.batch = 1;
  in.channels = 3;
  in.height = 8;
  in.width = 9;
  in.rois = rois_f32.data();
  in.rois_f64 = rois.data();
  in.num_rois = 1;
  const Status s = sel->Run(in, out.data());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("rois_f64 is for dtype F64; dtype F32 reads its RoIs from rois (float)"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(out, std::vector<float>(12, -1.0f));
}

// The backward in double, through the C API: AVG is the transpose of the forward, so <dY, forward(X)> =
// <backward(dY), X> for any X and dY, to double rounding (a float computation misses by ~1e-7 relative).
TEST(Float64, AvgBackwardIsTheForwardsTransposeInDouble) {
  std::mt19937 rng(5);
  Problem p = RandomProblem(&rng, 2, 7, 13, 17, 9, 0.5f);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> x(p.input.size());
  for (double& v : x) v = u(rng);
  size_t checked = 0;
  for (const auto& [target, layout] : F64Targets()) {
    roialign_params params;
    roialign_params_init(&params);
    params.pooled_height = 3;
    params.pooled_width = 2;
    params.sampling_ratio = 0;
    params.spatial_scale_f64 = 0.5;
    params.coordinate_mode = ROIALIGN_COORD_HALF_PIXEL;
    params.layout = static_cast<roialign_layout>(layout);
    params.dtype = ROIALIGN_DTYPE_F64;
    params.flags = ROIALIGN_PARAMS_BACKWARD;
    roialign_kernel* kernel = nullptr;
    ASSERT_EQ(roialign_select(target.c_str(), &params, &kernel), ROIALIGN_OK) << roialign_last_error();
    const std::vector<double> xs = ToLayout(x, layout, p.n, p.c, p.h, p.w, 0.0);
    const size_t ny = OutputSize(layout, p.k(), p.c, 3, 2);
    std::vector<double> dy(ny, 0.0), y(ny), dx(xs.size(), NAN);
    const internal::MapStrides o = internal::StridesOf(layout, p.c, 3, 2);
    for (int64_t k = 0; k < p.k(); ++k)
      for (int64_t c = 0; c < p.c; ++c)
        for (int64_t i = 0; i < 6; ++i) dy[static_cast<size_t>(o.Offset(k, c, i / 2, i % 2))] = u(rng);
    roialign_inputs in;
    roialign_inputs_init(&in);
    in.batch = p.n;
    in.channels = p.c;
    in.maps[0] = {xs.data(), p.h, p.w, {0, 0, 0, 0}};
    in.rois_f64 = p.rois5_f64.data();
    in.num_rois = p.k();
    roialign_options options;
    roialign_options_init(&options);
    options.num_threads = 2;
    ASSERT_EQ(roialign_run(kernel, &in, y.data(), &options), ROIALIGN_OK) << roialign_last_error();
    ASSERT_EQ(roialign_run_backward(kernel, &in, dy.data(), dx.data(), &options), ROIALIGN_OK)
        << roialign_last_error();
    double lhs = 0, rhs = 0, scale = 0;
    for (size_t i = 0; i < ny; ++i) lhs += dy[i] * y[i], scale += std::fabs(dy[i] * y[i]);
    for (size_t i = 0; i < xs.size(); ++i) rhs += dx[i] * xs[i];
    EXPECT_NEAR(lhs, rhs, 1e-13 * scale) << roialign_kernel_name(kernel);
    roialign_kernel_free(kernel);
    ++checked;
  }
  EXPECT_GT(checked, 0u);
}

}  // namespace
}  // namespace testing
}  // namespace roialign
