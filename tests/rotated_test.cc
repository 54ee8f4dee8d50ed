// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Rotated RoIs (docs/semantics.md#rotated-rois) through the C API: every target, layout, dtype and pool mode against
// the scalar reference, forward and backward; an independent double transcription of the definition; the
// conventions' relations (an angle of 0 is the axis-aligned HALF_PIXEL box, degrees are radians, clockwise is a
// negated angle); the same bits for any threads and pool; multi-level calls; and every bad input refused with the
// output untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "execution/plan.h"
#include "include/roialign/roialign.h"
#include "tests/test_util.h"

namespace roialign {
namespace testing {
namespace {

constexpr unsigned char kUntouched = 0xA5;

// A map and rotated RoIs, rows (batch, cx, cy, w, h, angle) and the same without the batch column.
struct RotatedCase {
  int64_t n = 0, c = 0, h = 0, w = 0;
  std::vector<float> input;  // NCHW
  std::vector<float> rows6, rows5;
  std::vector<double> rows6_f64, rows5_f64;
  std::vector<int64_t> batch;
  int64_t k() const { return static_cast<int64_t>(batch.size()); }
  void Add(int64_t b, double cx, double cy, double bw, double bh, double angle) {
    const double v[5] = {cx, cy, bw, bh, angle};
    rows6.push_back(static_cast<float>(b));
    rows6_f64.push_back(static_cast<double>(b));
    for (double x : v) {
      rows6.push_back(static_cast<float>(x));
      rows5.push_back(static_cast<float>(x));
      rows6_f64.push_back(static_cast<float>(x));  // the float value, so both precisions see one box
      rows5_f64.push_back(static_cast<float>(x));
    }
    batch.push_back(b);
  }
};

// Random values in [-1, 1] and RoIs of every angle (in `unit`) centred inside, across and outside the map, some
// tiny, some of size 0, in image coordinates (map / scale).
RotatedCase RandomCase(std::mt19937* rng, int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, double scale,
                       roialign_angle_unit unit) {
  RotatedCase r;
  r.n = n, r.c = c, r.h = h, r.w = w;
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  r.input.resize(static_cast<size_t>(n * c * h * w));
  for (float& v : r.input) v = value(*rng);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double iw = static_cast<double>(w) / scale, ih = static_cast<double>(h) / scale;
  const double turn = unit == ROIALIGN_ANGLE_DEGREES ? 180.0 : M_PI;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t b = static_cast<int64_t>(u(*rng) * static_cast<double>(n)) % n;
    double cx = (u(*rng) * 1.4 - 0.2) * iw, cy = (u(*rng) * 1.4 - 0.2) * ih;
    double bw = u(*rng) * 0.7 * iw, bh = u(*rng) * 0.7 * ih;
    if (i % 7 == 3) bw = bh = u(*rng) * 0.5;  // tiny
    if (i % 9 == 4) bw = 0;                   // no width
    if (i % 11 == 5) cx = -3.0 * iw;          // wholly outside
    r.Add(b, cx, cy, bw, bh, (2.0 * u(*rng) - 1.0) * turn);
  }
  return r;
}

roialign_params RotatedParams(Layout layout, DType dtype, PoolMode mode, roialign_coordinate_mode coordinates,
                              roialign_angle_unit unit, roialign_rotation rotation, int32_t ratio, bool backward) {
  roialign_params p;
  roialign_params_init(&p);
  p.pooled_height = 3;
  p.pooled_width = 4;
  p.spatial_scale = 0.5f;
  p.sampling_ratio = ratio;
  p.coordinate_mode = coordinates;
  p.pool_mode = static_cast<roialign_pool_mode>(mode);
  p.layout = static_cast<roialign_layout>(layout);
  p.dtype = static_cast<roialign_dtype>(dtype);
  p.roi_kind = ROIALIGN_ROI_ROTATED;
  p.angle_unit = unit;
  p.rotation = rotation;
  if (backward) p.flags |= ROIALIGN_PARAMS_BACKWARD;
  return p;
}

// A call's tensors in the kernel's layout and dtype: the map, dY and the inputs over them.
struct Tensors {
  std::vector<unsigned char> map, dy;
  size_t out_bytes = 0, dx_bytes = 0;
  roialign_inputs inputs;
};

Tensors Store(const RotatedCase& r, const roialign_params& p, bool batch_indices, std::mt19937* rng) {
  const Layout layout = static_cast<Layout>(p.layout);
  const DType dtype = static_cast<DType>(p.dtype);
  const size_t bytes = static_cast<size_t>(internal::BytesOf(dtype));
  Tensors t;
  t.map = StoreAs(dtype, ToLayout(r.input, layout, r.n, r.c, r.h, r.w));
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> dy(static_cast<size_t>(r.k() * r.c * p.pooled_height * p.pooled_width));
  for (float& v : dy) v = value(*rng);
  t.dy = StoreAs(dtype, ToLayout(dy, layout, r.k(), r.c, p.pooled_height, p.pooled_width));
  t.out_bytes = OutputSize(layout, r.k(), r.c, p.pooled_height, p.pooled_width) * bytes;
  t.dx_bytes = OutputSize(layout, r.n, r.c, r.h, r.w) * bytes;
  roialign_inputs_init(&t.inputs);
  t.inputs.batch = r.n;
  t.inputs.channels = r.c;
  t.inputs.maps[0].data = t.map.data();
  t.inputs.maps[0].height = r.h;
  t.inputs.maps[0].width = r.w;
  t.inputs.num_rois = r.k();
  t.inputs.batch_indices = batch_indices ? r.batch.data() : nullptr;
  if (dtype == DType::kF64) {
    t.inputs.rois_f64 = batch_indices ? r.rows5_f64.data() : r.rows6_f64.data();
  } else {
    t.inputs.rois = batch_indices ? r.rows5.data() : r.rows6.data();
  }
  return t;
}

std::vector<unsigned char> Forward(const roialign_kernel* kernel, const Tensors& t, int32_t threads = 1) {
  std::vector<unsigned char> out(t.out_bytes, kUntouched);
  roialign_options o;
  roialign_options_init(&o);
  o.num_threads = threads;
  EXPECT_EQ(roialign_run(kernel, &t.inputs, out.data(), &o), ROIALIGN_OK) << roialign_last_error();
  return out;
}

std::vector<unsigned char> Backward(const roialign_kernel* kernel, const Tensors& t, const roialign_options* o) {
  std::vector<unsigned char> dx(t.dx_bytes, kUntouched);
  EXPECT_EQ(roialign_run_backward(kernel, &t.inputs, t.dy.data(), dx.data(), o), ROIALIGN_OK) << roialign_last_error();
  return dx;
}

std::vector<std::string> KnownTargetNames() {
  std::vector<char> names(4096);
  size_t needed = 0;
  EXPECT_EQ(roialign_known_targets(names.data(), names.size(), &needed), ROIALIGN_OK);
  std::vector<std::string> out;
  for (const char* s = names.data(); *s != '\0'; s += std::strlen(s) + 1) out.emplace_back(s);
  return out;
}

// The attribute sets the target tests cover: detectron2's (DEGREES, counter-clockwise, aligned) with a fixed grid,
// and mmcv's aligned=False clockwise in RADIANS with an adaptive one.
struct Convention {
  roialign_coordinate_mode coordinates;
  roialign_angle_unit unit;
  roialign_rotation rotation;
  int32_t ratio;
};
constexpr Convention kConventions[] = {
    {ROIALIGN_COORD_HALF_PIXEL, ROIALIGN_ANGLE_DEGREES, ROIALIGN_ROTATION_COUNTER_CLOCKWISE, 2},
    {ROIALIGN_COORD_LEGACY, ROIALIGN_ANGLE_RADIANS, ROIALIGN_ROTATION_CLOCKWISE, 0},
};

TEST(Rotated, EveryTargetMatchesTheReferenceForward) {
  const std::vector<std::string> targets = KnownTargetNames();
  std::mt19937 rng(5);
  std::vector<std::string> tested;
  for (const Convention& conv : kConventions) {
    for (PoolMode mode : internal::AllValues<PoolMode>()) {
      // AVG reads each sample's taps below kMergePixelsChannels and merges a bin's shared pixels from there on (the
      // plan's choice): both.
      for (int64_t channels : {int64_t{21}, internal::kMergePixelsChannels}) {
        if (channels != 21 && mode != PoolMode::kAvg) continue;
        for (DType dtype : internal::AllValues<DType>()) {
          for (Layout layout : internal::AllValues<Layout>()) {
            const bool batch_indices = layout == Layout::kNHWC;  // both row forms
            const RotatedCase r = RandomCase(&rng, 2, channels, 11, 13, 14, 0.5, conv.unit);
            const roialign_params p =
                RotatedParams(layout, dtype, mode, conv.coordinates, conv.unit, conv.rotation, conv.ratio, false);
            KernelHolder reference;
            ASSERT_EQ(roialign_select("generic", &p, &reference.k), ROIALIGN_OK) << roialign_last_error();
            const Tensors t = Store(r, p, batch_indices, &rng);
            const std::vector<unsigned char> want = Forward(reference.k, t);
            const size_t count = t.out_bytes / static_cast<size_t>(internal::BytesOf(dtype));
            const std::vector<float> want_f = WidenFrom(dtype, want.data(), count);
            for (const std::string& target : targets) {
              KernelHolder kernel;
              if (target == "generic" || roialign_select(target.c_str(), &p, &kernel.k) != ROIALIGN_OK) continue;
              const std::string name = roialign_kernel_name(kernel.k);
              if (std::find(tested.begin(), tested.end(), name) == tested.end()) tested.push_back(name);
              const std::vector<unsigned char> got = Forward(kernel.k, t, 2);
              const std::string what = name + " " + ToString(mode) + " " + ToString(dtype) + " unit " +
                                       std::to_string(conv.unit) + " C " + std::to_string(channels);
              if (dtype == DType::kF64) {  // float64 kernels give the reference's bits
                EXPECT_TRUE(got == want) << what;
                continue;
              }
              const std::vector<float> got_f = WidenFrom(dtype, got.data(), count);
              size_t bad = 0;
              for (size_t i = 0; i < count; ++i) {
                if (!WithinTolerance(got_f[i], want_f[i], dtype) && bad++ < 3) {
                  ADD_FAILURE() << what << ": element " << i << " got " << got_f[i] << " want " << want_f[i];
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GE(tested.size(), internal::AllValues<Layout>().size()) << "kernels tested: " << tested.size();
}

TEST(Rotated, EveryTargetGivesTheReferenceBackwardBits) {
  const std::vector<std::string> targets = KnownTargetNames();
  std::mt19937 rng(9);
  size_t compared = 0;
  for (const Convention& conv : kConventions) {
    for (PoolMode mode : internal::AllValues<PoolMode>()) {
      for (DType dtype : internal::AllValues<DType>()) {
        for (Layout layout : internal::AllValues<Layout>()) {
          RotatedCase r = RandomCase(&rng, 2, 19, 10, 12, 12, 0.5, conv.unit);
          for (size_t i = 0; i < r.input.size(); i += 29) r.input[i] = 0.25f;  // ties for the MAX modes
          const roialign_params p =
              RotatedParams(layout, dtype, mode, conv.coordinates, conv.unit, conv.rotation, conv.ratio, true);
          KernelHolder reference;
          ASSERT_EQ(roialign_select("generic", &p, &reference.k), ROIALIGN_OK) << roialign_last_error();
          const Tensors t = Store(r, p, layout == Layout::kNCHW, &rng);
          const std::vector<unsigned char> want = Backward(reference.k, t, nullptr);
          for (const std::string& target : targets) {
            KernelHolder kernel;
            if (target == "generic" || roialign_select(target.c_str(), &p, &kernel.k) != ROIALIGN_OK) continue;
            roialign_options o;
            roialign_options_init(&o);
            o.num_threads = 3;
            EXPECT_TRUE(Backward(kernel.k, t, &o) == want)
                << roialign_kernel_name(kernel.k) << " " << ToString(mode) << " " << ToString(dtype);
            ++compared;
          }
        }
      }
    }
  }
  EXPECT_GE(compared, 2 * 3 * internal::AllValues<DType>().size() * internal::AllValues<Layout>().size());
}

TEST(Rotated, SameBitsForAnyThreadsAndPool) {
  std::mt19937 rng(21);
  for (PoolMode mode : internal::AllValues<PoolMode>()) {
    for (Layout layout : {Layout::kNCHW, Layout::kNHWC, Layout::kNCHW8c}) {
      const RotatedCase r = RandomCase(&rng, 2, 70, 12, 15, 24, 0.5, ROIALIGN_ANGLE_DEGREES);
      const roialign_params p = RotatedParams(layout, DType::kF32, mode, ROIALIGN_COORD_HALF_PIXEL,
                                              ROIALIGN_ANGLE_DEGREES, ROIALIGN_ROTATION_COUNTER_CLOCKWISE, 0, true);
      KernelHolder kernel;
      ASSERT_EQ(roialign_select("host", &p, &kernel.k), ROIALIGN_OK) << roialign_last_error();
      const Tensors t = Store(r, p, false, &rng);
      const std::vector<unsigned char> forward = Forward(kernel.k, t, 1);
      roialign_options o;
      roialign_options_init(&o);
      o.num_threads = 1;
      const std::vector<unsigned char> backward = Backward(kernel.k, t, &o);
      for (int threads : {2, 3}) {
        EXPECT_EQ(Forward(kernel.k, t, threads), forward) << threads << " threads";
        o.num_threads = threads;
        EXPECT_EQ(Backward(kernel.k, t, &o), backward) << threads << " threads";
      }
      roialign_threadpool pool;
      roialign_threadpool_init(&pool);
      pool.parallel_for = ReversePool;
      pool.num_threads = 4;
      roialign_options_init(&o);
      o.threadpool = &pool;
      EXPECT_EQ(Backward(kernel.k, t, &o), backward) << "pool";
      std::vector<unsigned char> out(t.out_bytes, kUntouched);
      ASSERT_EQ(roialign_run(kernel.k, &t.inputs, out.data(), &o), ROIALIGN_OK);
      EXPECT_EQ(out, forward) << "pool";
    }
  }
}

// DESIGN's definition transcribed on its own, in double: the box's samples turned onto the map and interpolated.
double Bilinear(const RotatedCase& r, int64_t b, int64_t ch, double y, double x) {
  if (y < -1.0 || y > static_cast<double>(r.h) || x < -1.0 || x > static_cast<double>(r.w)) return 0.0;
  y = std::max(y, 0.0), x = std::max(x, 0.0);
  int64_t y0 = static_cast<int64_t>(std::floor(y)), x0 = static_cast<int64_t>(std::floor(x)), y1, x1;
  if (y0 >= r.h - 1) y0 = y1 = r.h - 1, y = static_cast<double>(y0); else y1 = y0 + 1;
  if (x0 >= r.w - 1) x0 = x1 = r.w - 1, x = static_cast<double>(x0); else x1 = x0 + 1;
  auto v = [&](int64_t yy, int64_t xx) { return static_cast<double>(r.input[((b * r.c + ch) * r.h + yy) * r.w + xx]); };
  const double ly = y - static_cast<double>(y0), lx = x - static_cast<double>(x0);
  return (1 - ly) * (1 - lx) * v(y0, x0) + (1 - ly) * lx * v(y0, x1) + ly * (1 - lx) * v(y1, x0) + ly * lx * v(y1, x1);
}

double TranscribedAvg(const RotatedCase& r, int64_t k, int64_t ch, int64_t i, int64_t j, const Convention& conv,
                      double s, int64_t PH, int64_t PW) {
  const double* row = &r.rows6_f64[static_cast<size_t>(6 * k)];
  double theta = conv.unit == ROIALIGN_ANGLE_DEGREES ? row[5] * M_PI / 180.0 : row[5];
  if (conv.rotation == ROIALIGN_ROTATION_CLOCKWISE) theta = -theta;
  const bool aligned = conv.coordinates == ROIALIGN_COORD_HALF_PIXEL;
  const double off = aligned ? 0.5 : 0.0;
  const double cx = row[1] * s - off, cy = row[2] * s - off;
  double w = row[3] * s, h = row[4] * s;
  if (!aligned) w = std::max(w, 1.0), h = std::max(h, 1.0);
  const double bh = h / static_cast<double>(PH), bw = w / static_cast<double>(PW);
  const int64_t gh = conv.ratio > 0 ? conv.ratio : static_cast<int64_t>(std::ceil(h / static_cast<double>(PH)));
  const int64_t gw = conv.ratio > 0 ? conv.ratio : static_cast<int64_t>(std::ceil(w / static_cast<double>(PW)));
  double sum = 0;
  for (int64_t iy = 0; iy < gh; ++iy) {
    for (int64_t ix = 0; ix < gw; ++ix) {
      const double yy = -h / 2 + static_cast<double>(i) * bh + (static_cast<double>(iy) + 0.5) * bh / static_cast<double>(gh);
      const double xx = -w / 2 + static_cast<double>(j) * bw + (static_cast<double>(ix) + 0.5) * bw / static_cast<double>(gw);
      sum += Bilinear(r, static_cast<int64_t>(row[0]), ch, yy * std::cos(theta) - xx * std::sin(theta) + cy,
                      yy * std::sin(theta) + xx * std::cos(theta) + cx);
    }
  }
  return sum / static_cast<double>(std::max<int64_t>(gh * gw, 1));
}

TEST(Rotated, MatchesAnIndependentTranscriptionOfTheDefinition) {
  std::mt19937 rng(33);
  for (const Convention& conv : kConventions) {
    for (roialign_rotation rotation : {ROIALIGN_ROTATION_COUNTER_CLOCKWISE, ROIALIGN_ROTATION_CLOCKWISE}) {
      Convention c = conv;
      c.rotation = rotation;
      const RotatedCase r = RandomCase(&rng, 2, 5, 17, 19, 20, 0.5, c.unit);
      for (DType dtype : {DType::kF64, DType::kF32}) {
        const roialign_params p =
            RotatedParams(Layout::kNHWC, dtype, PoolMode::kAvg, c.coordinates, c.unit, c.rotation, c.ratio, false);
        KernelHolder kernel;
        ASSERT_EQ(roialign_select("host", &p, &kernel.k), ROIALIGN_OK) << roialign_last_error();
        const Tensors t = Store(r, p, false, &rng);
        const std::vector<unsigned char> out = Forward(kernel.k, t);
        const internal::MapStrides o = internal::StridesOf(Layout::kNHWC, r.c, 3, 4);
        // float64 to 1e-12; float32 to the error its sample positions make (docs/semantics.md#rotated-rois).
        const double tolerance = dtype == DType::kF64 ? 1e-12 : 2e-4;
        for (int64_t k = 0; k < r.k(); ++k) {
          for (int64_t ch = 0; ch < r.c; ++ch) {
            for (int64_t i = 0; i < 3; ++i) {
              for (int64_t j = 0; j < 4; ++j) {
                const size_t at = static_cast<size_t>(o.Offset(k, ch, i, j));
                double got;
                if (dtype == DType::kF64) {
                  std::memcpy(&got, out.data() + 8 * at, 8);
                } else {
                  float f;
                  std::memcpy(&f, out.data() + 4 * at, 4);
                  got = f;
                }
                const double want = TranscribedAvg(r, k, ch, i, j, c, 0.5, 3, 4);
                ASSERT_NEAR(got, want, tolerance) << ToString(dtype) << " roi " << k << " bin " << i << "," << j;
              }
            }
          }
        }
      }
    }
  }
}

// An angle of 0 with aligned is axis-aligned HALF_PIXEL on (cx - w/2, cy - h/2, cx + w/2, cy + h/2); degrees are
// radians times pi/180; clockwise is the angle negated, to the bit.
TEST(Rotated, ConventionsRelateAsDefined) {
  std::mt19937 rng(41);
  RotatedCase r = RandomCase(&rng, 1, 9, 14, 16, 0, 0.5, ROIALIGN_ANGLE_DEGREES);
  std::vector<float> boxes;  // axis-aligned, [K,5]
  for (int i = 0; i < 12; ++i) {
    const double cx = 2.0 * (i % 5) + 4.5, cy = 3.0 * (i % 4) + 5.25, w = 4.0 + 2.0 * i, h = 6.0 + i;
    r.Add(0, cx, cy, w, h, 0.0);
    boxes.insert(boxes.end(), {0.0f, static_cast<float>(cx - w / 2), static_cast<float>(cy - h / 2),
                               static_cast<float>(cx + w / 2), static_cast<float>(cy + h / 2)});
  }
  for (PoolMode mode : internal::AllValues<PoolMode>()) {
    for (const char* target : {"generic", "host"}) {
      roialign_params p = RotatedParams(Layout::kNHWC, DType::kF32, mode, ROIALIGN_COORD_HALF_PIXEL,
                                        ROIALIGN_ANGLE_DEGREES, ROIALIGN_ROTATION_COUNTER_CLOCKWISE, 2, false);
      KernelHolder rotated, upright;
      ASSERT_EQ(roialign_select(target, &p, &rotated.k), ROIALIGN_OK);
      p.roi_kind = ROIALIGN_ROI_AXIS_ALIGNED;
      p.angle_unit = ROIALIGN_ANGLE_RADIANS;
      ASSERT_EQ(roialign_select(target, &p, &upright.k), ROIALIGN_OK) << roialign_last_error();
      Tensors t = Store(r, p, false, &rng);
      const std::vector<float> a = WidenFrom(DType::kF32, Forward(rotated.k, t).data(), t.out_bytes / 4);
      t.inputs.rois = boxes.data();
      const std::vector<float> b = WidenFrom(DType::kF32, Forward(upright.k, t).data(), t.out_bytes / 4);
      for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-5) << target << " " << ToString(mode) << " " << i;
    }
  }
  // The same boxes turned: degrees against radians, clockwise against the negated angle.
  RotatedCase deg = RandomCase(&rng, 1, 9, 14, 16, 16, 0.5, ROIALIGN_ANGLE_DEGREES);
  RotatedCase rad = deg, negated = deg;
  for (int64_t k = 0; k < deg.k(); ++k) {
    const size_t at = static_cast<size_t>(6 * k + 5);
    rad.rows6[at] = static_cast<float>(deg.rows6[at] * M_PI / 180.0);
    negated.rows6[at] = -deg.rows6[at];
  }
  auto run = [&](const RotatedCase& c, roialign_angle_unit unit, roialign_rotation rotation) {
    const roialign_params p = RotatedParams(Layout::kNHWC, DType::kF32, PoolMode::kAvg, ROIALIGN_COORD_HALF_PIXEL,
                                            unit, rotation, 0, false);
    KernelHolder kernel;
    EXPECT_EQ(roialign_select("host", &p, &kernel.k), ROIALIGN_OK);
    const Tensors t = Store(c, p, false, &rng);
    return WidenFrom(DType::kF32, Forward(kernel.k, t).data(), t.out_bytes / 4);
  };
  const std::vector<float> ccw = run(deg, ROIALIGN_ANGLE_DEGREES, ROIALIGN_ROTATION_COUNTER_CLOCKWISE);
  const std::vector<float> radians = run(rad, ROIALIGN_ANGLE_RADIANS, ROIALIGN_ROTATION_COUNTER_CLOCKWISE);
  for (size_t i = 0; i < ccw.size(); ++i) EXPECT_NEAR(ccw[i], radians[i], 1e-4) << i;
  EXPECT_EQ(run(negated, ROIALIGN_ANGLE_DEGREES, ROIALIGN_ROTATION_CLOCKWISE), ccw);
}

TEST(Rotated, MultiLevelPoolsEachRoiFromItsLevel) {
  std::mt19937 rng(57);
  RotatedCase fine = RandomCase(&rng, 1, 12, 24, 28, 10, 0.25, ROIALIGN_ANGLE_RADIANS);
  RotatedCase coarse = RandomCase(&rng, 1, 12, 12, 14, 0, 0.125, ROIALIGN_ANGLE_RADIANS);
  roialign_multi_level_params levels;
  roialign_multi_level_params_init(&levels);
  levels.num_levels = 2;
  levels.scales[0] = 0.25f;
  levels.scales[1] = 0.125f;
  levels.level_rule = ROIALIGN_LEVEL_RULE_GIVEN;
  for (PoolMode mode : internal::AllValues<PoolMode>()) {
    roialign_params p = RotatedParams(Layout::kNHWC, DType::kF32, mode, ROIALIGN_COORD_HALF_PIXEL,
                                      ROIALIGN_ANGLE_RADIANS, ROIALIGN_ROTATION_COUNTER_CLOCKWISE, 2, false);
    roialign_multi_level_kernel* pyramid = nullptr;
    ASSERT_EQ(roialign_multi_level_select("host", &p, &levels, &pyramid), ROIALIGN_OK) << roialign_last_error();
    const Tensors t0 = Store(fine, p, false, &rng), t1 = Store(coarse, p, false, &rng);
    std::vector<int32_t> level(static_cast<size_t>(fine.k()));
    for (size_t i = 0; i < level.size(); ++i) level[i] = static_cast<int32_t>(i % 2);
    roialign_inputs in = t0.inputs;
    in.num_maps = 2;
    in.maps[1] = t1.inputs.maps[0];
    in.levels = level.data();
    std::vector<unsigned char> out(t0.out_bytes, kUntouched);
    ASSERT_EQ(roialign_multi_level_run(pyramid, &in, out.data(), nullptr), ROIALIGN_OK) << roialign_last_error();
    roialign_multi_level_kernel_free(pyramid);
    for (int l = 0; l < 2; ++l) {  // each level's RoIs against a single-level call on that level's map
      p.spatial_scale = levels.scales[l];
      KernelHolder single;
      ASSERT_EQ(roialign_select("host", &p, &single.k), ROIALIGN_OK);
      roialign_inputs one = t0.inputs;
      one.maps[0] = in.maps[l];
      const std::vector<unsigned char> want = Forward(single.k, {t0.map, t0.dy, t0.out_bytes, 0, one});
      const size_t roi_bytes = t0.out_bytes / static_cast<size_t>(fine.k());
      for (size_t k = static_cast<size_t>(l); k < level.size(); k += 2) {
        EXPECT_TRUE(std::equal(out.begin() + static_cast<ptrdiff_t>(k * roi_bytes),
                               out.begin() + static_cast<ptrdiff_t>((k + 1) * roi_bytes),
                               want.begin() + static_cast<ptrdiff_t>(k * roi_bytes)))
            << ToString(mode) << " roi " << k;
      }
    }
  }
}

// Each bad rotated RoI: INVALID_ARGUMENT naming it, the output and dX untouched; bad attributes refused at selection.
TEST(Rotated, BadInputIsRefusedWithTheOutputUntouched) {
  std::mt19937 rng(3);
  const RotatedCase good = RandomCase(&rng, 2, 5, 8, 9, 4, 0.5, ROIALIGN_ANGLE_RADIANS);
  struct Bad {
    int column;  // in a [K,6] row
    float value;
    const char* message;
  };
  const Bad kBad[] = {{3, -1.0f, "is negative"},      {4, -0.5f, "is negative"},
                      {5, NAN, "angle is not finite"}, {1, INFINITY, "cx is not finite"},
                      {0, 2.0f, "batch index 2"},      {0, 0.5f, "is not an integer"}};
  for (const Bad& bad : kBad) {
    RotatedCase r = good;
    r.rows6[6 * 2 + static_cast<size_t>(bad.column)] = bad.value;
    const roialign_params p = RotatedParams(Layout::kNHWC, DType::kF32, PoolMode::kAvg, ROIALIGN_COORD_HALF_PIXEL,
                                            ROIALIGN_ANGLE_RADIANS, ROIALIGN_ROTATION_COUNTER_CLOCKWISE, 0, true);
    KernelHolder kernel;
    ASSERT_EQ(roialign_select("host", &p, &kernel.k), ROIALIGN_OK);
    const Tensors t = Store(r, p, false, &rng);
    std::vector<unsigned char> out(t.out_bytes, kUntouched), dx(t.dx_bytes, kUntouched);
    EXPECT_EQ(roialign_run(kernel.k, &t.inputs, out.data(), nullptr), ROIALIGN_INVALID_ARGUMENT) << bad.message;
    const std::string message = roialign_last_error();
    EXPECT_NE(message.find("roi 2"), std::string::npos) << message;
    EXPECT_NE(message.find(bad.message), std::string::npos) << message;
    EXPECT_EQ(roialign_run_backward(kernel.k, &t.inputs, t.dy.data(), dx.data(), nullptr), ROIALIGN_INVALID_ARGUMENT);
    EXPECT_EQ(out, std::vector<unsigned char>(t.out_bytes, kUntouched));
    EXPECT_EQ(dx, std::vector<unsigned char>(t.dx_bytes, kUntouched));
  }
  {  // A negative size is what mmcv's aligned=False raises to 1: LEGACY takes it.
    RotatedCase r = good;
    r.rows6[6 * 2 + 3] = -1.0f;
    const roialign_params p = RotatedParams(Layout::kNHWC, DType::kF32, PoolMode::kAvg, ROIALIGN_COORD_LEGACY,
                                            ROIALIGN_ANGLE_RADIANS, ROIALIGN_ROTATION_COUNTER_CLOCKWISE, 0, false);
    KernelHolder kernel;
    ASSERT_EQ(roialign_select("host", &p, &kernel.k), ROIALIGN_OK);
    const Tensors t = Store(r, p, false, &rng);
    std::vector<unsigned char> out(t.out_bytes, kUntouched);
    EXPECT_EQ(roialign_run(kernel.k, &t.inputs, out.data(), nullptr), ROIALIGN_OK) << roialign_last_error();
  }
  roialign_params p = RotatedParams(Layout::kNHWC, DType::kF32, PoolMode::kAvg, ROIALIGN_COORD_HALF_PIXEL_CENTERED,
                                    ROIALIGN_ANGLE_RADIANS, ROIALIGN_ROTATION_COUNTER_CLOCKWISE, 0, false);
  KernelHolder refused;
  EXPECT_EQ(roialign_select("host", &p, &refused.k), ROIALIGN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(roialign_last_error()).find("HALF_PIXEL (aligned) or LEGACY"), std::string::npos);
  p.coordinate_mode = ROIALIGN_COORD_HALF_PIXEL;
  p.roi_kind = ROIALIGN_ROI_AXIS_ALIGNED;
  p.angle_unit = ROIALIGN_ANGLE_DEGREES;
  EXPECT_EQ(roialign_select("host", &p, &refused.k), ROIALIGN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(roialign_last_error()).find("read for rotated RoIs only"), std::string::npos);
  const int32_t unknown = 2;  // C callers may store any int in an enum field
  std::memcpy(&p.roi_kind, &unknown, sizeof(unknown));
  EXPECT_EQ(roialign_select("host", &p, &refused.k), ROIALIGN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(roialign_last_error()).find("unknown roi kind"), std::string::npos);
  EXPECT_EQ(refused.k, nullptr);
}

roialign_status Nothing(const roialign_problem*, void*) { return ROIALIGN_OK; }

// A registered implementation serves axis-aligned RoIs only: its target refuses rotated ones, naming the kinds.
TEST(Rotated, RegisteredTargetsRefuseRotatedRois) {
  roialign_implementation impl;
  roialign_implementation_init(&impl);
  impl.target = "rotated-test-npu";
  impl.name = "roi_align_nhwc.rotated-test-npu";
  impl.layouts = 1u << ROIALIGN_LAYOUT_NHWC;
  impl.dtypes = 1u << ROIALIGN_DTYPE_F32;
  impl.pool_modes = 0x7u;
  impl.coordinate_modes = 0xFu;
  impl.fn = Nothing;
  ASSERT_EQ(roialign_register(&impl), ROIALIGN_OK) << roialign_last_error();
  const roialign_params p = RotatedParams(Layout::kNHWC, DType::kF32, PoolMode::kAvg, ROIALIGN_COORD_HALF_PIXEL,
                                          ROIALIGN_ANGLE_RADIANS, ROIALIGN_ROTATION_COUNTER_CLOCKWISE, 0, false);
  KernelHolder kernel;
  EXPECT_EQ(roialign_select(impl.target, &p, &kernel.k), ROIALIGN_UNSUPPORTED);
  EXPECT_NE(std::string(roialign_last_error()).find("roi kind ROTATED (supported: AXIS_ALIGNED)"), std::string::npos)
      << roialign_last_error();
  roialign_target_info info;
  roialign_target_info_init(&info);
  ASSERT_EQ(roialign_query_target(impl.target, &info), ROIALIGN_OK);
  EXPECT_EQ(info.roi_kinds, 1u << ROIALIGN_ROI_AXIS_ALIGNED);
  ASSERT_EQ(roialign_query_target("generic", &info), ROIALIGN_OK);
  EXPECT_EQ(info.roi_kinds, (1u << ROIALIGN_ROI_AXIS_ALIGNED) | (1u << ROIALIGN_ROI_ROTATED));
}

}  // namespace
}  // namespace testing
}  // namespace roialign
