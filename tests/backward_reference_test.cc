// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The scalar reference's backward (docs/semantics.md#backward) against what it must be: the transpose of the
// forward reference (AVG: the adjoint identity), a brute-force search of every bin written here from the kernels'
// per-axis taps (every pool mode, ties and non-finite maps included) with the sums in the documented order,
// hand-worked cases, its ownership of dX (any split into ranges gives the bits of the whole, every element is
// written), and 16-bit dX as the f32 result rounded once.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <memory_resource>
#include <random>
#include <string>
#include <vector>

#include <hwy/targets.h>

#include "core/enums.h"
#include "execution/execute_backward.h"
#include "execution/validate_data.h"
#include "kernels/kernel_descriptor.h"
#include "kernels/roi_geometry.h"
#include "strategy/registry.h"
#include "tests/test_util.h"

namespace roialign {
namespace testing {
namespace {

using internal::GradientRange;
using internal::MapStrides;
using internal::StoredChannels;
using internal::StridesOf;

constexpr unsigned char kNanByte = 0xFF;  // an element of 0xFF bytes is a NaN in f32, f16 and bf16 alike

// The backward of the generic target for `dtype`, as the registry holds it (the same functions for every layout).
internal::WholeRoisBackwardFn BackwardOf(DType dtype) {
  for (const internal::ImplementationPtr& impl : internal::AllImplementations()) {
    if (impl->is_builtin() && impl->target == "generic") {
      return impl->builtin[static_cast<size_t>(dtype)].whole_rois_backward;
    }
  }
  return nullptr;
}

// One backward call: the forward's map (logical NCHW) and RoIs, its attributes, and dY (logical [K, C, PH, PW]).
// Map and dY hold values params.dtype represents exactly, so the f32 arithmetic below sees what the kernel reads.
struct Case {
  Params params;
  Problem p;
  std::vector<float> dy;
  bool batch_indices = false;   // [K,4] + indices instead of [K,5]
  std::vector<int64_t> subset;  // the RoIs the call runs, ascending (empty: all)
};

int64_t Ph(const Case& c) { return c.params.pooled_height; }
int64_t Pw(const Case& c) { return c.params.pooled_width; }
MapStrides MapOf(const Case& c) { return StridesOf(c.params.layout, c.p.c, c.p.h, c.p.w); }
size_t DxElements(const Case& c) { return static_cast<size_t>(c.p.n * MapOf(c).image); }
size_t LogicalIndex(const Case& c, int64_t b, int64_t ch, int64_t y, int64_t x) {
  return static_cast<size_t>(((b * c.p.c + ch) * c.p.h + y) * c.p.w + x);
}

// `values` as `dtype` holds them (rounded to nearest even, widened back).
std::vector<float> RoundedTo(DType dtype, const std::vector<float>& values) {
  return WidenFrom(dtype, StoreAs(dtype, values).data(), values.size());
}

// The RoIs a case runs, in the order the call walks them.
std::vector<int64_t> RunOrder(const Case& c) {
  if (!c.subset.empty()) return c.subset;
  std::vector<int64_t> all(static_cast<size_t>(c.p.k()));
  for (size_t k = 0; k < all.size(); ++k) all[k] = static_cast<int64_t>(k);
  return all;
}

// One range per image, each the whole image.
std::vector<GradientRange> WholeRanges(const Case& c) {
  std::vector<GradientRange> ranges;
  for (int64_t b = 0; b < c.p.n; ++b) ranges.push_back({b, 0, c.p.c, 0, c.p.h});
  return ranges;
}

// Runs the reference backward of `c` over `ranges`, in order, into a dX first filled with NaN; returns dX's bytes
// (params.layout and params.dtype, padded lanes included). The padded lanes of dY hold NaN, which must never
// reach dX.
std::vector<unsigned char> RunBackward(const Case& c, const std::vector<GradientRange>& ranges) {
  const Params& params = c.params;
  const std::vector<unsigned char> map = StoreAs(params.dtype, ToLayout(c.p.input, params.layout, c.p.n, c.p.c, c.p.h,
                                                                        c.p.w));
  const std::vector<unsigned char> dy = StoreAs(params.dtype, ToLayout(c.dy, params.layout, c.p.k(), c.p.c, Ph(c),
                                                                       Pw(c)));
  std::vector<unsigned char> y(dy.size() + 1);  // where a forward would write: validation wants it, nothing writes it
  std::vector<unsigned char> dx(DxElements(c) * static_cast<size_t>(internal::BytesOf(params.dtype)), kNanByte);
  internal::Problem problem;
  std::pmr::vector<internal::RoiAxes> axes;
  std::pmr::vector<internal::RoiAxesOf<double>> axes_f64;  // F64 computes its geometry in double
  const Inputs inputs = InputsOf(c.p, map.data(), c.batch_indices, params.dtype);
  const Status s = params.dtype == DType::kF64
                       ? internal::ValidateData(params, inputs, y.data(), &axes_f64, &problem)
                       : internal::ValidateData(params, inputs, y.data(), &axes, &problem);
  EXPECT_TRUE(s.ok()) << s.message();
  if (!s.ok()) return dx;
  problem.grad_output = dy.data();
  problem.grad_input = dx.data();
  if (!c.subset.empty()) {
    problem.roi_subset = c.subset.data();
    problem.subset_size = static_cast<int64_t>(c.subset.size());
  }
  const internal::WholeRoisBackwardFn backward = BackwardOf(params.dtype);
  EXPECT_NE(backward, nullptr);
  if (backward == nullptr) return dx;
  for (const GradientRange& r : ranges) backward(problem, r, {});
  return dx;
}

// dX's bytes as logical NCHW f32 values.
std::vector<float> LogicalDx(const Case& c, const std::vector<unsigned char>& dx) {
  const std::vector<float> stored = WidenFrom(c.params.dtype, dx.data(), DxElements(c));
  const MapStrides map = MapOf(c);
  std::vector<float> out(static_cast<size_t>(c.p.n * c.p.c * c.p.h * c.p.w));
  for (int64_t b = 0; b < c.p.n; ++b)
    for (int64_t ch = 0; ch < c.p.c; ++ch)
      for (int64_t y = 0; y < c.p.h; ++y)
        for (int64_t x = 0; x < c.p.w; ++x) {
          out[LogicalIndex(c, b, ch, y, x)] = stored[static_cast<size_t>(map.Offset(b, ch, y, x))];
        }
  return out;
}

// The forward reference's output of `c` as logical [K, C, PH, PW] f32 values.
std::vector<float> Forward(const Case& c) {
  const std::vector<float> stored = RunOrFail("generic", c.params, c.p, c.batch_indices);
  const MapStrides out = StridesOf(c.params.layout, c.p.c, Ph(c), Pw(c));
  std::vector<float> y;
  for (int64_t k = 0; k < c.p.k(); ++k)
    for (int64_t ch = 0; ch < c.p.c; ++ch)
      for (int64_t ph = 0; ph < Ph(c); ++ph)
        for (int64_t pw = 0; pw < Pw(c); ++pw) y.push_back(stored[static_cast<size_t>(out.Offset(k, ch, ph, pw))]);
  return y;
}

size_t BinIndex(const Case& c, int64_t k, int64_t ch, int64_t ph, int64_t pw) {
  return static_cast<size_t>(((k * c.p.c + ch) * Ph(c) + ph) * Pw(c) + pw);
}

// A random case on a 2 x 5 x 7 x 9 map, spatial scale 1/2, 2 x 3 bins: RandomProblem's RoIs (partly or wholly
// outside, tiny) plus the whole map, a box whose samples reach the inclusive edges -1 and H, W, one across the
// far corner, an inverted and a zero-size box, and one wholly outside. `quantized`: map values from {-1, -0.5, 0,
// 0.5, 1}, so that samples often tie exactly. Map and dY rounded to `dtype`.
Case RandomCase(std::mt19937* rng, Layout layout, DType dtype, PoolMode pool, CoordinateMode coord, int32_t ratio,
                bool quantized = false) {
  Case c;
  const float scale = 0.5f;
  c.p = RandomProblem(rng, 2, 5, 7, 9, 16, scale);
  const float iw = 9.0f / scale, ih = 7.0f / scale;  // the map in image coordinates
  AddRoi(&c.p, 0, 0.0f, 0.0f, iw, ih);
  AddRoi(&c.p, 1, -1.0f / scale, -1.0f / scale, iw + 1.0f / scale, ih + 1.0f / scale);
  AddRoi(&c.p, 1, iw - 1.0f, ih - 1.0f, iw + 1.0f, ih + 1.0f);
  AddRoi(&c.p, 0, 6.0f, 5.0f, 2.0f, 1.0f);
  AddRoi(&c.p, 1, 4.0f, 4.0f, 4.0f, 4.0f);
  AddRoi(&c.p, 0, iw + 4.0f, 2.0f, iw + 10.0f, 6.0f);
  if (quantized) {
    std::uniform_int_distribution<int> level(-2, 2);
    for (float& v : c.p.input) v = 0.5f * static_cast<float>(level(*rng));
  }
  c.p.input = RoundedTo(dtype, c.p.input);
  c.params.pooled_height = 2;
  c.params.pooled_width = 3;
  c.params.spatial_scale = scale;
  c.params.sampling_ratio = ratio;
  c.params.coordinate_mode = coord;
  c.params.pool_mode = pool;
  c.params.layout = layout;
  c.params.dtype = dtype;
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  c.dy.resize(BinIndex(c, c.p.k(), 0, 0, 0));
  for (float& v : c.dy) v = value(*rng);
  c.dy = RoundedTo(dtype, c.dy);
  return c;
}

std::string Describe(const Case& c) {
  return std::string(ToString(c.params.layout)) + " " + ToString(c.params.dtype) + " " +
         ToString(c.params.pool_mode) + " " + ToString(c.params.coordinate_mode) + " ratio " +
         std::to_string(c.params.sampling_ratio);
}

// What the backward of an F32 case must give, worked out here from the kernels' per-axis taps (roi_geometry.h
// TapOf) rather than the reference's own bilinear rule, logical NCHW: `exact` in double; `scale` the sum of the
// contributions' magnitudes, the size of the error f32 sums may make; `ordered` the f32 sums in the documented
// order (RoIs ascending, then ph, pw, iy, ix, taps (y0,x0) (y0,x1) (y1,x0) (y1,x1), from +0). MAX and MAX_ONNX
// search each bin explicitly for the first sample (tap) whose value is the forward's output, and check that none
// exceeds it.
struct Expected {
  std::vector<double> exact, scale;
  std::vector<float> ordered;
};

Expected BruteForce(const Case& c) {
  const Params& params = c.params;
  const Problem& p = c.p;
  const std::vector<float> y = Forward(c);
  const size_t n = static_cast<size_t>(p.n * p.c * p.h * p.w);
  Expected e = {std::vector<double>(n, 0.0), std::vector<double>(n, 0.0), std::vector<float>(n, 0.0f)};
  struct Tap {
    int64_t y, x;
    float w, value;  // value: w * v, as the forward weighs the pixel
  };
  for (int64_t k : RunOrder(c)) {
    const internal::RoiRecord roi = internal::RoiAt(p.rois5.data(), nullptr, k);
    const internal::AxisGeometry gy = internal::AxisOf(roi.y1, roi.y2, Ph(c), params);
    const internal::AxisGeometry gx = internal::AxisOf(roi.x1, roi.x2, Pw(c), params);
    const int64_t samples = gy.grid * gx.grid;
    if (samples == 0) continue;
    auto add = [&](int64_t ch, const Tap& t, double exact, float ordered) {
      const size_t j = LogicalIndex(c, roi.batch, ch, t.y, t.x);
      e.exact[j] += exact;
      e.scale[j] += std::fabs(exact);
      e.ordered[j] += ordered;
    };
    for (int64_t ch = 0; ch < p.c; ++ch) {
      for (int64_t ph = 0; ph < Ph(c); ++ph) {
        for (int64_t pw = 0; pw < Pw(c); ++pw) {
          const float g = c.dy[BinIndex(c, k, ch, ph, pw)];
          std::vector<std::array<Tap, 4>> taps(static_cast<size_t>(samples));
          std::vector<bool> inside(static_cast<size_t>(samples));
          std::vector<float> values(static_cast<size_t>(samples));
          for (int64_t iy = 0; iy < gy.grid; ++iy) {
            for (int64_t ix = 0; ix < gx.grid; ++ix) {
              const size_t s = static_cast<size_t>(iy * gx.grid + ix);
              const internal::AxisTap ty = internal::TapOf(internal::SamplePosition(gy, ph, iy), p.h);
              const internal::AxisTap tx = internal::TapOf(internal::SamplePosition(gx, pw, ix), p.w);
              inside[s] = ty.valid && tx.valid;
              taps[s] = {Tap{ty.lo, tx.lo, ty.w_lo * tx.w_lo, 0.0f}, Tap{ty.lo, tx.hi, ty.w_lo * tx.w_hi, 0.0f},
                         Tap{ty.hi, tx.lo, ty.w_hi * tx.w_lo, 0.0f}, Tap{ty.hi, tx.hi, ty.w_hi * tx.w_hi, 0.0f}};
              if (inside[s]) {
                for (Tap& t : taps[s]) t.value = t.w * p.input[LogicalIndex(c, roi.batch, ch, t.y, t.x)];
              }
              values[s] = taps[s][0].value + taps[s][1].value + taps[s][2].value + taps[s][3].value;
            }
          }
          const float m = y[BinIndex(c, k, ch, ph, pw)];
          switch (params.pool_mode) {
            case PoolMode::kAvg: {
              const float d = g / static_cast<float>(samples);
              for (size_t s = 0; s < taps.size(); ++s) {
                if (!inside[s]) continue;
                for (const Tap& t : taps[s]) {
                  add(ch, t, double{t.w} * double{g} / static_cast<double>(samples), t.w * d);
                }
              }
              break;
            }
            case PoolMode::kMax: {
              int64_t arg = -1;
              for (size_t s = 0; s < values.size(); ++s) {
                EXPECT_FALSE(values[s] > m) << "RoI " << k << ": the forward's MAX is not the largest sample";
                if (arg < 0 && values[s] == m) arg = static_cast<int64_t>(s);
              }
              if (arg < 0) {
                EXPECT_EQ(m, -INFINITY) << "RoI " << k << ": no sample attains the forward's MAX";
              } else if (inside[static_cast<size_t>(arg)]) {
                for (const Tap& t : taps[static_cast<size_t>(arg)]) add(ch, t, double{t.w} * double{g}, t.w * g);
              }
              break;
            }
            case PoolMode::kMaxOnnx: {
              int64_t arg = -1;
              for (size_t s = 0; s < values.size(); ++s) {
                for (size_t t = 0; t < 4; ++t) {
                  EXPECT_FALSE(taps[s][t].value > m) << "RoI " << k << ": the forward's MAX_ONNX is not the top tap";
                  if (arg < 0 && taps[s][t].value == m) arg = static_cast<int64_t>(4 * s + t);
                }
              }
              if (arg < 0) {
                EXPECT_EQ(m, -INFINITY) << "RoI " << k << ": no tap attains the forward's MAX_ONNX";
              } else if (inside[static_cast<size_t>(arg / 4)]) {
                const Tap& t = taps[static_cast<size_t>(arg / 4)][static_cast<size_t>(arg % 4)];
                add(ch, t, double{t.w} * double{g}, t.w * g);
              }
              break;
            }
          }
        }
      }
    }
  }
  return e;
}

// The backward of an F32 case against BruteForce: every element within 1e-5 of its scale (+0 exactly where
// nothing reaches it), and bit for bit the f32 sums in the documented order where the compiler cannot fuse a
// multiply and an add into one rounding (no fast FMA: then both sides round every product and every sum).
void ExpectBruteForce(const Case& c, const std::string& what) {
  ASSERT_EQ(c.params.dtype, DType::kF32);
  const Expected e = BruteForce(c);
  const std::vector<float> got = LogicalDx(c, RunBackward(c, WholeRanges(c)));
  int failures = 0;
  for (size_t j = 0; j < got.size(); ++j) {
    bool ok = std::fabs(double{got[j]} - e.exact[j]) <= 1e-5 * e.scale[j] && !(e.scale[j] == 0 && std::signbit(got[j]));
#ifndef __FP_FAST_FMAF
    ok = ok && std::memcmp(&got[j], &e.ordered[j], sizeof(float)) == 0;
#endif
    if (!ok && ++failures <= 5) {
      ADD_FAILURE() << what << " (" << Describe(c) << "): dX element " << j << " is " << got[j] << ", expected "
                    << e.exact[j] << " (f32 in order: " << e.ordered[j] << ", scale " << e.scale[j] << ")";
    }
  }
}

std::string LayoutName(const ::testing::TestParamInfo<Layout>& info) { return ToString(info.param); }

// ---------------------------------------------------------------------------------------------------------------
// Where the backward is reached.

TEST(BackwardReferenceTable, EveryBuiltinImplementationHasABackwardForTheDtypesItServes) {
  for (DType dtype : internal::AllValues<DType>()) EXPECT_NE(BackwardOf(dtype), nullptr) << ToString(dtype);
  for (const internal::ImplementationPtr& impl : internal::AllImplementations()) {
    if (!impl->is_builtin()) continue;
    for (DType dtype : internal::AllValues<DType>()) {
      const internal::KernelFns& f = impl->builtin[static_cast<size_t>(dtype)];
      const bool forward = f.pool_bin != nullptr || f.whole_rois != nullptr;
      EXPECT_EQ(f.whole_rois_backward != nullptr, forward) << impl->name << " " << ToString(dtype);
      EXPECT_EQ((impl->backward_dtypes & internal::Bit(dtype)) != 0, forward) << impl->name << " " << ToString(dtype);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Worked by hand.

// A case of one RoI on an h x w map with one bin and a fixed grid.
Case OneBin(int64_t h, int64_t w, std::vector<float> map, float x1, float y1, float x2, float y2, CoordinateMode coord,
            PoolMode pool, int32_t ratio, float g) {
  Case c;
  c.p.h = h;
  c.p.w = w;
  c.p.input = std::move(map);
  AddRoi(&c.p, 0, x1, y1, x2, y2);
  c.params.pooled_height = c.params.pooled_width = 1;
  c.params.sampling_ratio = ratio;
  c.params.coordinate_mode = coord;
  c.params.pool_mode = pool;
  c.dy = {g};
  return c;
}

// Expects dX (one channel, NCHW) to be `want` exactly, +0 where `want` is 0.
void ExpectDx(const Case& c, const std::vector<float>& want, const std::string& what) {
  const std::vector<float> got = LogicalDx(c, RunBackward(c, WholeRanges(c)));
  ASSERT_EQ(got.size(), want.size());
  for (size_t j = 0; j < got.size(); ++j) {
    EXPECT_EQ(got[j], want[j]) << what << ": pixel " << j / static_cast<size_t>(c.p.w) << ","
                               << j % static_cast<size_t>(c.p.w);
    if (want[j] == 0.0f) {
      EXPECT_FALSE(std::signbit(got[j])) << what << ": pixel " << j << " is -0";
    }
  }
}

// One sample at (0.5, 0.5) of a 2 x 2 map: its taps all weigh 1/4.
TEST(BackwardReferenceGolden, OneSampleSpreadsDyOverItsFourTaps) {
  for (PoolMode pool : {PoolMode::kAvg, PoolMode::kMax}) {
    const Case c = OneBin(2, 2, {1.0f, 2.0f, 3.0f, 4.0f}, 0.25f, 0.25f, 0.75f, 0.75f,
                          CoordinateMode::kHalfPixelCentered, pool, 1, 2.0f);
    ExpectDx(c, {0.5f, 0.5f, 0.5f, 0.5f}, ToString(pool));
  }
  // MAX_ONNX: taps 1, -1, -1, 1; the first of the two largest, (y0,x0), takes dY * 1/4.
  const Case onnx = OneBin(2, 2, {4.0f, -4.0f, -4.0f, 4.0f}, 0.25f, 0.25f, 0.75f, 0.75f,
                           CoordinateMode::kHalfPixelCentered, PoolMode::kMaxOnnx, 1, 2.0f);
  ExpectDx(onnx, {0.5f, 0.0f, 0.0f, 0.0f}, "MAX_ONNX");
}

// AVG over a 2 x 2 grid divides dY by 4 before weighing it: box (0.5, 0.5, 2.5, 2.5), LEGACY, one bin, samples at
// 1 and 2 on both axes (whole pixels: weights 1 and 0).
TEST(BackwardReferenceGolden, AvgDividesByTheSampleCount) {
  const Case c = OneBin(4, 4, std::vector<float>(16, 1.0f), 0.5f, 0.5f, 2.5f, 2.5f, CoordinateMode::kLegacy,
                        PoolMode::kAvg, 2, 8.0f);
  std::vector<float> want(16, 0.0f);
  for (int y : {1, 2})
    for (int x : {1, 2}) want[static_cast<size_t>(4 * y + x)] = 2.0f;
  ExpectDx(c, want, "AVG 2x2");
}

// Samples on and past the edges of a 5 x 5 map (LEGACY box of 1 pixel around the sample, one bin, one sample).
TEST(BackwardReferenceGolden, EdgeSamplesFoldTheirTaps) {
  auto at = [](float y, float x) {
    return OneBin(5, 5, std::vector<float>(25, 1.0f), x - 0.5f, y - 0.5f, x + 0.5f, y + 0.5f,
                  CoordinateMode::kLegacy, PoolMode::kAvg, 1, 2.0f);
  };
  std::vector<float> want(25, 0.0f);
  // y in (H-1, H]: rows y0 = y1 = 4 and ly = 0, so the (y1, .) taps weigh 0; x = 2.25 splits 3/4, 1/4.
  want[4 * 5 + 2] = 1.5f;
  want[4 * 5 + 3] = 0.5f;
  ExpectDx(at(4.5f, 2.25f), want, "y = 4.5");
  // (-1, -1) is inside and snaps to pixel (0, 0), all of it.
  std::fill(want.begin(), want.end(), 0.0f);
  want[0] = 2.0f;
  ExpectDx(at(-1.0f, -1.0f), want, "(-1, -1)");
  // (5, 5): y == H and x == W are inside and fold onto the last pixel.
  std::fill(want.begin(), want.end(), 0.0f);
  want[24] = 2.0f;
  ExpectDx(at(5.0f, 5.0f), want, "(5, 5)");
  // Just outside: nothing, and every element is +0.
  ExpectDx(at(-1.0625f, 2.0f), std::vector<float>(25, 0.0f), "outside");
}

// Ties: on a constant map with weights that are exact (samples at 1.5 and 3.5: every weight 1/4, every sample 1),
// MAX gives dY to the first sample's taps and MAX_ONNX to its first tap. A second, identical RoI adds its own.
TEST(BackwardReferenceTies, ConstantMapFirstSampleAndTapWin) {
  for (int rois : {1, 2}) {
    Case c = OneBin(6, 6, std::vector<float>(36, 1.0f), 0.5f, 0.5f, 4.5f, 4.5f, CoordinateMode::kLegacy,
                    PoolMode::kMax, 2, 4.0f);
    if (rois == 2) {
      AddRoi(&c.p, 0, 0.5f, 0.5f, 4.5f, 4.5f);
      c.dy.push_back(4.0f);
    }
    std::vector<float> want(36, 0.0f);
    for (int y : {1, 2})
      for (int x : {1, 2}) want[static_cast<size_t>(6 * y + x)] = static_cast<float>(rois);
    ExpectDx(c, want, "MAX, " + std::to_string(rois) + " RoIs");
    c.params.pool_mode = PoolMode::kMaxOnnx;
    std::fill(want.begin(), want.end(), 0.0f);
    want[6 * 1 + 1] = static_cast<float>(rois);
    ExpectDx(c, want, "MAX_ONNX, " + std::to_string(rois) + " RoIs");
  }
}

// A maximum attained outside the map (a sample of value 0 over negative data) reads no pixel, so nothing flows
// back; neither does a bin whose every value is NaN (its maximum is the initial -Inf, which no value attains).
TEST(BackwardReferenceTies, ArgmaxOutsideOrAllNanGivesNothing) {
  for (PoolMode pool : {PoolMode::kMax, PoolMode::kMaxOnnx}) {
    // x samples from -9.725: the first ones are outside.
    ExpectDx(OneBin(2, 2, std::vector<float>(4, -1.0f), -10.0f, 0.0f, 1.0f, 1.0f, CoordinateMode::kLegacy, pool, 4,
                    1.0f),
             std::vector<float>(4, 0.0f), std::string(ToString(pool)) + " outside");
    ExpectDx(OneBin(2, 2, std::vector<float>(4, NAN), 0.0f, 0.0f, 1.0f, 1.0f, CoordinateMode::kLegacy, pool, 2, 1.0f),
             std::vector<float>(4, 0.0f), std::string(ToString(pool)) + " NaN");
  }
}

// A non-finite dY reaches exactly the pixels its bin's samples tap, taps of weight 0 included (0 * Inf is NaN, as
// in the forward's AVG); a bin without samples, or samples outside the map, pass nothing on.
TEST(BackwardReferenceNonFinite, NonFiniteDyReachesOnlyItsTaps) {
  // 5 x 5 map, sample at (4.5, 2.25): taps (4,2) (4,3), and the (y1, .) taps of weight 0 on the same pixels.
  Case c = OneBin(5, 5, std::vector<float>(25, 1.0f), 1.75f, 4.0f, 2.75f, 5.0f, CoordinateMode::kLegacy,
                  PoolMode::kAvg, 1, INFINITY);
  const std::vector<float> inf = LogicalDx(c, RunBackward(c, WholeRanges(c)));
  for (size_t j = 0; j < inf.size(); ++j) {
    if (j == 22 || j == 23) {
      EXPECT_TRUE(std::isnan(inf[j])) << j;  // Inf * 3/4 + Inf * 0: NaN
    } else {
      EXPECT_EQ(inf[j], 0.0f) << j;
      EXPECT_FALSE(std::signbit(inf[j])) << j;
    }
  }
  // HALF_PIXEL, adaptive grid, zero-size box: no samples; a box wholly outside: samples read nothing.
  for (float x1 : {2.0f, 40.0f}) {
    Case empty = OneBin(5, 5, std::vector<float>(25, 1.0f), x1, 2.0f, x1 + (x1 > 10.0f ? 3.0f : 0.0f), 2.0f,
                        CoordinateMode::kHalfPixel, PoolMode::kAvg, 0, NAN);
    empty.params.sampling_ratio = x1 > 10.0f ? 2 : 0;
    ExpectDx(empty, std::vector<float>(25, 0.0f), "NaN dY, x1 = " + std::to_string(x1));
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The transpose of the forward, per layout.

class BackwardReferenceAdjoint : public ::testing::TestWithParam<Layout> {};

// <A x, dY> == <x, A^T dY>, both in double from the f32 results, within 1e-5 of <A|x|, |dY|>: the size of the
// terms the two f32 computations round. A wrong tap, weight or count moves one side by far more.
TEST_P(BackwardReferenceAdjoint, AvgEveryCoordinateModeAndSamplingRatio) {
  std::mt19937 rng(42);
  for (CoordinateMode coord : internal::AllValues<CoordinateMode>()) {
    for (int32_t ratio : {0, 1, 2, 3}) {
      const Case c = RandomCase(&rng, GetParam(), DType::kF32, PoolMode::kAvg, coord, ratio);
      Case magnitude = c;
      for (float& v : magnitude.p.input) v = std::fabs(v);
      const std::vector<float> y = Forward(c), y_abs = Forward(magnitude);
      const std::vector<float> dx = LogicalDx(c, RunBackward(c, WholeRanges(c)));
      double lhs = 0, rhs = 0, scale = 0;
      for (size_t i = 0; i < y.size(); ++i) {
        lhs += double{y[i]} * double{c.dy[i]};
        scale += double{y_abs[i]} * std::fabs(double{c.dy[i]});
      }
      for (size_t j = 0; j < dx.size(); ++j) rhs += double{c.p.input[j]} * double{dx[j]};
      EXPECT_GT(scale, 1.0) << Describe(c);  // the problem is not trivial
      EXPECT_NEAR(lhs, rhs, 1e-5 * scale) << Describe(c);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, BackwardReferenceAdjoint, ::testing::ValuesIn(internal::AllValues<Layout>()),
                         LayoutName);

// ---------------------------------------------------------------------------------------------------------------
// Against the brute force, per layout.

class BackwardReferenceBruteForce : public ::testing::TestWithParam<Layout> {};

TEST_P(BackwardReferenceBruteForce, EveryPoolAndCoordinateModeAndSamplingRatio) {
  std::mt19937 rng(7);
  for (PoolMode pool : internal::AllValues<PoolMode>()) {
    for (CoordinateMode coord : internal::AllValues<CoordinateMode>()) {
      for (int32_t ratio : {0, 1, 2}) {
        ExpectBruteForce(RandomCase(&rng, GetParam(), DType::kF32, pool, coord, ratio), "random map");
      }
    }
  }
}

// Maps of five values: samples tie exactly, most of all where a zero-size or inverted box stacks every sample on
// one point, and the first must win.
TEST_P(BackwardReferenceBruteForce, MaxModesOnMapsFullOfTies) {
  std::mt19937 rng(11);
  for (PoolMode pool : {PoolMode::kMax, PoolMode::kMaxOnnx}) {
    for (CoordinateMode coord : internal::AllValues<CoordinateMode>()) {
      for (int32_t ratio : {0, 2, 3}) {
        ExpectBruteForce(RandomCase(&rng, GetParam(), DType::kF32, pool, coord, ratio, true), "quantized map");
      }
    }
    Case constant = RandomCase(&rng, GetParam(), DType::kF32, pool, CoordinateMode::kHalfPixel, 2);
    std::fill(constant.p.input.begin(), constant.p.input.end(), 0.75f);
    ExpectBruteForce(constant, "constant map");
  }
}

// NaN and +-Inf pixels: the argmax follows the forward's rule for which sample is the maximum.
TEST_P(BackwardReferenceBruteForce, MaxModesOnNonFiniteMaps) {
  std::mt19937 rng(13);
  for (PoolMode pool : {PoolMode::kMax, PoolMode::kMaxOnnx}) {
    for (int32_t ratio : {0, 2}) {
      Case c = RandomCase(&rng, GetParam(), DType::kF32, pool, CoordinateMode::kLegacy, ratio);
      for (size_t i = 0; i < c.p.input.size(); ++i) {
        if (i % 7 == 2) c.p.input[i] = NAN;
        if (i % 11 == 4) c.p.input[i] = INFINITY;
        if (i % 13 == 6) c.p.input[i] = -INFINITY;
      }
      ExpectBruteForce(c, "non-finite map");
    }
  }
}

// The [K, 4] format with batch indices, and a subset of the RoIs (as a multi-level call runs one level's).
TEST_P(BackwardReferenceBruteForce, RoiFormatsAndSubsets) {
  std::mt19937 rng(17);
  for (PoolMode pool : internal::AllValues<PoolMode>()) {
    Case c = RandomCase(&rng, GetParam(), DType::kF32, pool, CoordinateMode::kHalfPixel, 2);
    const std::vector<unsigned char> five = RunBackward(c, WholeRanges(c));
    c.batch_indices = true;
    EXPECT_EQ(RunBackward(c, WholeRanges(c)), five) << Describe(c);
    c.subset = {1, 3, 4, 16, 17, 20};
    ExpectBruteForce(c, "subset");
  }
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, BackwardReferenceBruteForce,
                         ::testing::ValuesIn(internal::AllValues<Layout>()), LayoutName);

// Maps larger than the reference's accumulation tile (4096 elements of one channel): rows split into bands of
// tiles (70 x 64) and a row split into column tiles (3 x 4200), RoIs across the tiles' borders and inside one.
TEST(BackwardReferenceBruteForceTiles, TallAndWideMaps) {
  std::mt19937 rng(19);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (Layout layout : {Layout::kNCHW, Layout::kNHWC, Layout::kNCHW8c}) {
    for (PoolMode pool : internal::AllValues<PoolMode>()) {
      for (const std::array<int64_t, 2> shape : {std::array<int64_t, 2>{70, 64}, std::array<int64_t, 2>{3, 4200}}) {
        Case c;
        c.p.n = 1;
        c.p.c = 2;
        c.p.h = shape[0];
        c.p.w = shape[1];
        c.p.input.resize(static_cast<size_t>(c.p.c * c.p.h * c.p.w));
        for (float& v : c.p.input) v = value(rng);
        const float h = static_cast<float>(c.p.h), w = static_cast<float>(c.p.w);
        const bool tall = c.p.h > c.p.w;
        AddRoi(&c.p, 0, 0.0f, 0.0f, w, h);                                    // everything
        AddRoi(&c.p, 0, w - 20.0f, h - 2.5f, w - 1.0f, h);                    // near the far corner only
        if (tall) {
          AddRoi(&c.p, 0, 10.0f, 60.0f, 30.0f, 67.0f);                        // across row 64
        } else {
          AddRoi(&c.p, 0, 4080.0f, 0.5f, 4110.0f, 2.5f);                      // across column 4096
        }
        AddRoi(&c.p, 0, 3.0f, 1.0f, 9.0f, 2.5f);                              // in the first tile only
        AddRoi(&c.p, 0, 12.0f, 2.0f, 5.0f, 0.5f);                             // inverted
        c.params.pooled_height = 3;
        c.params.pooled_width = 5;  // the adaptive grid of 4200 columns stays under the cap
        c.params.sampling_ratio = 0;
        c.params.coordinate_mode = CoordinateMode::kHalfPixel;
        c.params.pool_mode = pool;
        c.params.layout = layout;
        c.dy.resize(BinIndex(c, c.p.k(), 0, 0, 0));
        for (float& v : c.dy) v = value(rng);
        ExpectBruteForce(c, std::to_string(shape[0]) + " x " + std::to_string(shape[1]));
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Ownership of dX, per layout.

class BackwardReferenceOwnership : public ::testing::TestWithParam<Layout> {};

// The element offsets range `r` owns: its channels, rows and every column, plus the padded lanes of the last block
// when it holds the last channel.
std::vector<int64_t> OwnedElements(const Case& c, const GradientRange& r) {
  const MapStrides map = MapOf(c);
  const int64_t stored = StoredChannels(c.params.layout, c.p.c);
  const int64_t c_end = r.c_begin < r.c_end && r.c_end == c.p.c ? stored : r.c_end;
  std::vector<int64_t> out;
  for (int64_t ch = r.c_begin; ch < c_end; ++ch)
    for (int64_t y = r.y_begin; y < r.y_end; ++y)
      for (int64_t x = 0; x < c.p.w; ++x) out.push_back(map.Offset(r.image, ch, y, x));
  return out;
}

// Each range of several splits, run alone into dX full of NaN, writes exactly its own elements and gives them
// the bits of the whole; the ranges of a split own every element once; and the whole leaves no element unwritten
// (no NaN: every input is finite), padded lanes +0.
TEST_P(BackwardReferenceOwnership, EverySplitGivesTheBitsOfTheWhole) {
  std::mt19937 rng(23);
  for (DType dtype : internal::AllValues<DType>()) {
    for (PoolMode pool : internal::AllValues<PoolMode>()) {
      const Case c = RandomCase(&rng, GetParam(), dtype, pool, CoordinateMode::kHalfPixel, 0);
      const size_t bytes = static_cast<size_t>(internal::BytesOf(dtype));
      const std::vector<unsigned char> whole = RunBackward(c, WholeRanges(c));
      for (float v : WidenFrom(dtype, whole.data(), DxElements(c))) ASSERT_FALSE(std::isnan(v)) << Describe(c);
      const MapStrides map = MapOf(c);
      for (int64_t ch = c.p.c; ch < StoredChannels(c.params.layout, c.p.c); ++ch) {  // padded lanes: +0 bits
        const size_t at = static_cast<size_t>(map.Offset(1, ch, c.p.h - 1, 0)) * bytes;
        for (size_t byte = at; byte < at + bytes; ++byte) EXPECT_EQ(whole[byte], 0) << Describe(c) << " lane " << ch;
      }
      std::uniform_int_distribution<int64_t> cut_c(1, c.p.c - 1), cut_y(1, c.p.h - 1);
      const std::vector<std::vector<int64_t>> c_cuts = {{0, c.p.c}, {0, 1, 3, c.p.c}, {0, cut_c(rng), c.p.c}};
      const std::vector<std::vector<int64_t>> y_cuts = {{0, 2, 3, c.p.h}, {0, c.p.h}, {0, cut_y(rng), c.p.h}};
      for (size_t split = 0; split < c_cuts.size(); ++split) {
        std::vector<GradientRange> ranges;
        for (int64_t b = 0; b < c.p.n; ++b)
          for (size_t i = 0; i + 1 < c_cuts[split].size(); ++i)
            for (size_t j = 0; j + 1 < y_cuts[split].size(); ++j)
              ranges.push_back({b, c_cuts[split][i], c_cuts[split][i + 1], y_cuts[split][j], y_cuts[split][j + 1]});
        std::vector<int> owners(DxElements(c), 0);
        for (const GradientRange& r : ranges) {
          const std::vector<unsigned char> alone = RunBackward(c, {r});
          std::vector<bool> own(DxElements(c), false);
          for (int64_t e : OwnedElements(c, r)) {
            own[static_cast<size_t>(e)] = true;
            ++owners[static_cast<size_t>(e)];
          }
          for (size_t e = 0; e < own.size(); ++e) {
            for (size_t byte = e * bytes; byte < (e + 1) * bytes; ++byte) {
              if (own[e]) {
                ASSERT_EQ(alone[byte], whole[byte]) << Describe(c) << ": range image " << r.image << " channels "
                                                    << r.c_begin << ".." << r.c_end << " rows " << r.y_begin << ".."
                                                    << r.y_end << ", element " << e;
              } else {
                ASSERT_EQ(alone[byte], kNanByte) << Describe(c) << ": range image " << r.image << " channels "
                                                 << r.c_begin << ".." << r.c_end << " rows " << r.y_begin << ".."
                                                 << r.y_end << " wrote element " << e << ", not its own";
              }
            }
          }
        }
        for (size_t e = 0; e < owners.size(); ++e) ASSERT_EQ(owners[e], 1) << Describe(c) << ": element " << e;
      }
    }
  }
}

// Ranges without channels or rows write nothing, also at the end of the channels (no padded lanes).
TEST_P(BackwardReferenceOwnership, EmptyRangesWriteNothing) {
  std::mt19937 rng(29);
  const Case c = RandomCase(&rng, GetParam(), DType::kF32, PoolMode::kAvg, CoordinateMode::kLegacy, 2);
  const std::vector<unsigned char> untouched(DxElements(c) * sizeof(float), kNanByte);
  EXPECT_EQ(RunBackward(c, {{0, c.p.c, c.p.c, 0, c.p.h}}), untouched);
  EXPECT_EQ(RunBackward(c, {{1, 0, 0, 0, c.p.h}}), untouched);
  EXPECT_EQ(RunBackward(c, {{1, 0, c.p.c, 4, 4}}), untouched);
}

// No RoI, or RoIs of the other image only: every element of the image is written, +0.
TEST_P(BackwardReferenceOwnership, ElementsNothingReachesArePositiveZero) {
  std::mt19937 rng(31);
  for (DType dtype : internal::AllValues<DType>()) {
    Case c = RandomCase(&rng, GetParam(), dtype, PoolMode::kMax, CoordinateMode::kLegacy, 2);
    const size_t bytes = static_cast<size_t>(internal::BytesOf(dtype));
    const std::vector<unsigned char> zeros(DxElements(c) * bytes, 0);
    Case none = c;
    none.p.rois5.clear();
    none.p.rois4.clear();
    none.p.rois5_f64.clear();
    none.p.rois4_f64.clear();
    none.p.batch_idx.clear();
    none.dy.clear();
    EXPECT_EQ(RunBackward(none, WholeRanges(none)), zeros) << Describe(c);
    // Image 1 alone, when every RoI is on image 0.
    for (size_t k = 0; k < c.p.batch_idx.size(); ++k) {
      c.p.batch_idx[k] = 0;
      c.p.rois5[5 * k] = 0.0f;
      c.p.rois5_f64[5 * k] = 0.0;
    }
    const std::vector<unsigned char> image1 = RunBackward(c, {{1, 0, c.p.c, 0, c.p.h}});
    const size_t half = image1.size() / 2;
    EXPECT_EQ(std::vector<unsigned char>(image1.begin() + static_cast<std::ptrdiff_t>(half), image1.end()),
              std::vector<unsigned char>(half, 0))
        << Describe(c);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, BackwardReferenceOwnership, ::testing::ValuesIn(internal::AllValues<Layout>()),
                         LayoutName);

// ---------------------------------------------------------------------------------------------------------------
// Precision, per layout.

class BackwardReferencePrecision : public ::testing::TestWithParam<Layout> {};

// A 16-bit dX is the f32 dX of the same (widened) map and dY, rounded to nearest even once: bit for bit, padded
// lanes included. Large RoIs and dY of 8 make every element a sum of many contributions, whose f32 bits a rounding
// per contribution or a 16-bit accumulator would lose.
TEST_P(BackwardReferencePrecision, SixteenBitIsTheF32ResultRoundedOnce) {
  std::mt19937 rng(37);
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    for (PoolMode pool : internal::AllValues<PoolMode>()) {
      for (int32_t ratio : {0, 3}) {
        Case c = RandomCase(&rng, GetParam(), dtype, pool, CoordinateMode::kHalfPixel, ratio);
        for (float& v : c.dy) v *= 8.0f;  // exact: a power of two
        const std::vector<unsigned char> narrow = RunBackward(c, WholeRanges(c));
        Case wide = c;
        wide.params.dtype = DType::kF32;
        const std::vector<unsigned char> f32 = RunBackward(wide, WholeRanges(wide));
        const std::vector<unsigned char> rounded =
            StoreAs(dtype, WidenFrom(DType::kF32, f32.data(), DxElements(wide)));
        EXPECT_EQ(narrow, rounded) << Describe(c);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, BackwardReferencePrecision, ::testing::ValuesIn(internal::AllValues<Layout>()),
                         LayoutName);

// ---------------------------------------------------------------------------------------------------------------
// The streamed write-out of the SIMD backward.

// The plan streams dX (GradientRange::stream) exactly when it is larger than 16 MB, as the forward's output.
TEST(BackwardStreaming, ThePlanStreamsDxLargerThanTheLastLevelCache) {
  for (DType dtype : {DType::kF32, DType::kF64, DType::kBF16}) {
    internal::Problem problem;
    problem.params.layout = Layout::kNCHW16c;
    problem.params.dtype = dtype;
    problem.batch = 1;
    problem.channels = 64;
    problem.width = 256;
    const int64_t bytes_per_row = 64 * 256 * internal::BytesOf(dtype);
    for (int64_t height : {int64_t{16} * 1024 * 1024 / bytes_per_row, int64_t{16} * 1024 * 1024 / bytes_per_row + 1}) {
      problem.height = height;
      const internal::BackwardPlan plan = internal::PlanBackward(problem, internal::KernelFns{}, {1, nullptr});
      EXPECT_EQ(plan.stream_dx, height * bytes_per_row > 16 * 1024 * 1024) << ToString(dtype) << " " << height;
      EXPECT_EQ(plan.Range(0, problem.channels, problem.height).stream, plan.stream_dx);
    }
  }
}

// Every built-in backward this CPU runs writes a range streamed with the bits it stores: channels last and blocked,
// every dtype (f32 and f64 stream where a run's lines are whole; the 16-bit dtypes never do), on a 64-byte aligned
// dX split into ranges whose channel runs are whole lines, and ranges that are not.
TEST(BackwardStreaming, StreamedRangesGiveTheStoredBits) {
  std::mt19937 rng(31);
  int64_t compared = 0;
  for (Layout layout : {Layout::kNHWC, Layout::kNCHW8c, Layout::kNCHW16c, Layout::kNCHW}) {
    for (DType dtype : internal::AllValues<DType>()) {
      Case c = RandomCase(&rng, layout, dtype, PoolMode::kAvg, CoordinateMode::kLegacy, 2);
      c.p = RandomProblem(&rng, 1, 48, 6, 9, 12, 0.5f);
      c.p.input = RoundedTo(dtype, c.p.input);
      c.dy = RoundedTo(dtype, std::vector<float>(static_cast<size_t>(c.p.k() * 48 * Ph(c) * Pw(c)), 0.75f));
      for (size_t i = 0; i < c.dy.size(); i += 7) c.dy[i] = -1.5f;
      const std::vector<unsigned char> map = StoreAs(dtype, ToLayout(c.p.input, layout, 1, 48, 6, 9));
      const std::vector<unsigned char> dy = StoreAs(dtype, ToLayout(c.dy, layout, c.p.k(), 48, Ph(c), Pw(c)));
      std::vector<unsigned char> y(dy.size() + 1);
      internal::Problem problem;
      std::pmr::vector<internal::RoiAxes> axes;
      std::pmr::vector<internal::RoiAxesOf<double>> axes_f64;
      const Inputs inputs = InputsOf(c.p, map.data(), false, dtype);
      const Status s = dtype == DType::kF64 ? internal::ValidateData(c.params, inputs, y.data(), &axes_f64, &problem)
                                            : internal::ValidateData(c.params, inputs, y.data(), &axes, &problem);
      ASSERT_TRUE(s.ok()) << s.message();
      problem.grad_output = dy.data();
      // Channels [0, 16) and [16, 48) by rows [0, 4) and [4, 6); then [0, 20) and [20, 48), runs of part lines.
      const std::vector<GradientRange> ranges = {{0, 0, 16, 0, 4}, {0, 16, 48, 0, 4}, {0, 0, 16, 4, 6},
                                                 {0, 16, 48, 4, 6}, {0, 0, 20, 0, 6},  {0, 20, 48, 0, 6}};
      const size_t bytes = DxElements(c) * static_cast<size_t>(internal::BytesOf(dtype));
      for (const internal::ImplementationPtr& impl : internal::AllImplementations()) {
        const internal::KernelFns& f = impl->builtin[static_cast<size_t>(dtype)];
        if (!impl->is_builtin() || f.whole_rois_backward == nullptr || f.backward_scratch == nullptr) continue;
        if (impl->hwy_target != 0 && (hwy::SupportedTargets() & impl->hwy_target) == 0) continue;
        if ((impl->layouts & internal::Bit(layout)) == 0) continue;
        std::vector<std::vector<unsigned char>> dx;
        for (bool stream : {false, true}) {
          std::vector<float> scratch;
          std::vector<unsigned char> buffer(bytes + 64, kNanByte);
          unsigned char* const out = buffer.data() + (64 - reinterpret_cast<uintptr_t>(buffer.data()) % 64) % 64;
          problem.grad_input = out;
          for (size_t i = 0; i < ranges.size(); ++i) {
            GradientRange r = ranges[i];
            r.stream = stream;
            if (i == 4) std::fill(out, out + bytes, kNanByte);  // the second split writes dX again
            scratch.assign(static_cast<size_t>(f.backward_scratch(problem, r)) + 16, 0.0f);
            float* const aligned = scratch.data() + (16 - reinterpret_cast<uintptr_t>(scratch.data()) / 4 % 16) % 16;
            f.whole_rois_backward(problem, r, {aligned, f.backward_scratch(problem, r)});
            if (i == 3) dx.emplace_back(out, out + bytes);
          }
          dx.emplace_back(out, out + bytes);
        }
        // Stored and streamed, over both splits: four copies of one dX.
        EXPECT_TRUE(dx[0] == dx[2]) << impl->name << " " << ToString(dtype) << " whole lines";
        EXPECT_TRUE(dx[1] == dx[3]) << impl->name << " " << ToString(dtype) << " part lines";
        EXPECT_TRUE(dx[0] == dx[1]) << impl->name << " " << ToString(dtype) << " splits";
        ++compared;
      }
    }
  }
  EXPECT_GE(compared, 4 * 4);
}

}  // namespace
}  // namespace testing
}  // namespace roialign
