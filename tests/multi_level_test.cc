// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Multi-level RoIAlign (docs/multi-level.md): every compiled implementation and dtype against the scalar
// reference run level by level; the level rules on boxes whose level is known by hand; the edge cases (empty
// levels, every RoI on one level, zero-area boxes under each rule, clamped levels); and the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/enums.h"
#include "strategy/registry.h"
#include "strategy/targets.h"
#include "tests/test_util.h"

namespace roialign {
namespace testing {
namespace {

// A pyramid of NCHW maps (values in [-1, 1]) over one image size, RoIs in image coordinates.
struct Pyramid {
  int64_t n = 2, c = 1;
  std::vector<float> scales;
  std::vector<int64_t> heights, widths;
  std::vector<std::vector<float>> maps;  // NCHW f32
  Problem rois;                          // its map fields unused
};

Pyramid MakePyramid(std::mt19937* rng, int64_t c, int64_t image_h, int64_t image_w, int levels) {
  Pyramid p;
  p.c = c;
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (int l = 0; l < levels; ++l) {
    const float scale = std::ldexp(1.0f, -(2 + l));  // 1/4, 1/8, ...
    p.scales.push_back(scale);
    p.heights.push_back(std::max<int64_t>(1, static_cast<int64_t>(std::ceil(static_cast<float>(image_h) * scale))));
    p.widths.push_back(std::max<int64_t>(1, static_cast<int64_t>(std::ceil(static_cast<float>(image_w) * scale))));
    std::vector<float> map(static_cast<size_t>(p.n * c * p.heights.back() * p.widths.back()));
    for (float& v : map) v = value(*rng);
    p.maps.push_back(std::move(map));
  }
  p.rois.n = p.n;
  p.rois.c = c;
  return p;
}

// K boxes with log-uniform sides in [min_side, max_side] px, anywhere in (and a little beyond) the image.
void AddRandomBoxes(std::mt19937* rng, Pyramid* p, int64_t k, float image_h, float image_w, float min_side,
                    float max_side) {
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int64_t i = 0; i < k; ++i) {
    const float side_w = min_side * std::pow(max_side / min_side, u(*rng));
    const float side_h = side_w * (0.5f + u(*rng));
    const float x1 = (u(*rng) * 1.2f - 0.1f) * image_w, y1 = (u(*rng) * 1.2f - 0.1f) * image_h;
    AddRoi(&p->rois, static_cast<int64_t>(i % p->n), x1, y1, x1 + side_w, y1 + side_h);
  }
}

// The test's own statement of the rules (double precision, away from level boundaries equal to float32).
int32_t ExpectedLevel(const MultiLevelParams& mp, float x1, float y1, float x2, float y2) {
  const double area = (static_cast<double>(x2) - x1) * (static_cast<double>(y2) - y1);
  const int top = static_cast<int>(mp.scales.size()) - 1;
  if (mp.level_rule == LevelRule::kOpenVino) {
    if (!(area > 0)) return -1;
    const int l = static_cast<int>(std::floor(std::log2(std::sqrt(area) / mp.canonical_size + 1e-6) +
                                              (mp.canonical_level - 2)));
    return std::clamp(l, 0, top);
  }
  // torchvision's LevelMapper: k_min and k_max of the first and last scales; a level beyond the maps pools nothing.
  const int k_min = static_cast<int>(std::lround(-std::log2(mp.scales.front())));
  const int k_max = static_cast<int>(std::lround(-std::log2(mp.scales.back())));
  if (!(area > 0)) return k_min <= k_max ? 0 : -1;
  const int l = static_cast<int>(std::floor(mp.canonical_level + std::log2(std::sqrt(area) / mp.canonical_size) + 1e-6));
  const int index = std::min(std::max(l, k_min), k_max) - k_min;
  return index >= 0 && index <= top ? index : -1;
}

// Runs `target` multi-level on the pyramid stored in params.dtype and params.layout; output widened to f32
// (slots not written stay at -777).
struct MultiLevelRun {
  Status status;
  std::string name;
  std::vector<float> out;
};
// Runs on `threads` OpenMP threads, or on `pool` when it is given.
MultiLevelRun RunMultiLevel(const std::string& target, const MultiLevelParams& mp, const Pyramid& p,
                            const int32_t* levels, bool batch_indices, int threads,
                            const roialign_threadpool* pool = nullptr) {
  MultiLevelRun r;
  PyramidSelection sel = SelectPyramidKernel(target, mp);
  if (!sel.ok()) {
    r.status = sel.status;
    return r;
  }
  r.name = sel.kernel.name();
  std::vector<std::vector<unsigned char>> stored;
  std::vector<LevelMap> maps;
  for (size_t l = 0; l < p.maps.size(); ++l) {
    stored.push_back(
        StoreAs(mp.params.dtype, ToLayout(p.maps[l], mp.params.layout, p.n, p.c, p.heights[l], p.widths[l])));
  }
  for (size_t l = 0; l < p.maps.size(); ++l) maps.push_back({stored[l].data(), p.heights[l], p.widths[l]});
  MultiLevelInputs in;
  in.maps = maps.data();
  in.num_maps = static_cast<int32_t>(maps.size());
  in.batch = p.n;
  in.channels = p.c;
  in.rois = batch_indices ? p.rois.rois4.data() : p.rois.rois5.data();
  in.batch_indices = batch_indices ? p.rois.batch_idx.data() : nullptr;
  in.levels = levels;
  in.num_rois = p.rois.k();
  if (mp.params.dtype == DType::kF64) {  // read in double
    in.rois = nullptr;
    in.rois_f64 = batch_indices ? p.rois.rois4_f64.data() : p.rois.rois5_f64.data();
  }
  const size_t n = OutputSize(mp.params.layout, p.rois.k(), p.c, mp.params.pooled_height, mp.params.pooled_width);
  std::vector<unsigned char> out = StoreAs(mp.params.dtype, std::vector<float>(n, -777.0f));
  r.status = pool != nullptr ? sel.kernel.Run(in, out.data(), *pool) : sel.kernel.Run(in, out.data(), threads);
  r.out = WidenFrom(mp.params.dtype, out.data(), n);
  return r;
}

// The oracle: the single-level scalar reference on each level's map for all RoIs, then RoI k's slot from the map
// of level[k] (zeros for -1).
std::vector<float> LevelByLevelReference(const MultiLevelParams& mp, const Pyramid& p,
                                         const std::vector<int32_t>& level) {
  const int64_t per_roi =
      static_cast<int64_t>(OutputSize(mp.params.layout, 1, p.c, mp.params.pooled_height, mp.params.pooled_width));
  std::vector<float> out(static_cast<size_t>(p.rois.k() * per_roi), 0.0f);
  for (size_t l = 0; l < p.maps.size(); ++l) {
    Problem single = p.rois;
    single.h = p.heights[l];
    single.w = p.widths[l];
    single.input = p.maps[l];
    Params params = mp.params;
    params.spatial_scale = p.scales[l];
    const std::vector<float> ref = RunOrFail("generic", params, single, false, 1);
    for (int64_t k = 0; k < p.rois.k(); ++k) {
      if (level[static_cast<size_t>(k)] != static_cast<int32_t>(l)) continue;
      std::copy(ref.begin() + k * per_roi, ref.begin() + (k + 1) * per_roi, out.begin() + k * per_roi);
    }
  }
  return out;
}

std::vector<int32_t> ExpectedLevels(const MultiLevelParams& mp, const Pyramid& p) {
  std::vector<int32_t> level;
  for (int64_t k = 0; k < p.rois.k(); ++k) {
    const float* r = &p.rois.rois4[static_cast<size_t>(4 * k)];
    level.push_back(ExpectedLevel(mp, r[0], r[1], r[2], r[3]));
  }
  return level;
}

size_t CountMismatches(const std::vector<float>& got, const std::vector<float>& want, DType dtype,
                       const std::string& what) {
  EXPECT_EQ(got.size(), want.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    if (!WithinTolerance(got[i], want[i], dtype) && bad++ < 3) {
      ADD_FAILURE() << what << ": element " << i << " got " << got[i] << " want " << want[i];
    }
  }
  return bad;
}

// Every runnable implementation (the SIMD ones and the scalar reference) with each dtype it serves.
struct Case {
  std::string name;
  DType dtype;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name << " " << ToString(c.dtype); }

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (const auto& impl : internal::AllImplementations()) {
    if (!impl->is_builtin() || !internal::CpuSupports(impl->hwy_target)) continue;
    for (DType dtype : internal::ValuesIn<DType>(impl->dtypes)) cases.push_back({impl->name, dtype});
  }
  std::sort(cases.begin(), cases.end(), [](const Case& a, const Case& b) {
    return a.name != b.name ? a.name < b.name : a.dtype < b.dtype;
  });
  return cases;
}

class MultiLevelTest : public ::testing::TestWithParam<Case> {
 protected:
  // The target and layout that select this implementation.
  MultiLevelParams BaseParams() const {
    MultiLevelParams mp;
    for (const auto& impl : internal::AllImplementations()) {
      if (impl->name != GetParam().name) continue;
      target_ = impl->target;
      mp.params.layout = internal::ValuesIn<Layout>(impl->layouts).front();
    }
    mp.params.dtype = GetParam().dtype;
    mp.params.pooled_height = 3;
    mp.params.pooled_width = 4;
    mp.params.sampling_ratio = 2;
    // A 96 x 128 image: boxes of 16 px go to P2, 32 px to P3, 64 px and more to P4.
    mp.scales = {0.25f, 0.125f, 0.0625f};
    mp.canonical_size = 32.0f;
    mp.canonical_level = 3;
    return mp;
  }

  void CheckAgainstReference(const MultiLevelParams& mp, const Pyramid& p, const std::vector<int32_t>& level,
                             const int32_t* given, bool batch_indices, int threads, const std::string& what) {
    const MultiLevelRun got = RunMultiLevel(target_, mp, p, given, batch_indices, threads);
    ASSERT_TRUE(got.status.ok()) << what << ": " << got.status.message();
    ASSERT_EQ(got.name, GetParam().name) << "selection picked another implementation for " << target_;
    EXPECT_EQ(CountMismatches(got.out, LevelByLevelReference(mp, p, level), mp.params.dtype, what), 0u);
  }

  mutable std::string target_;
};

TEST_P(MultiLevelTest, EveryRuleAndModeMatchesTheReferenceLevelByLevel) {
  std::mt19937 rng(17);
  for (int64_t c : {5, 70}) {
    Pyramid p = MakePyramid(&rng, c, 96, 128, 3);
    AddRandomBoxes(&rng, &p, 60, 96.0f, 128.0f, 6.0f, 150.0f);
    AddRoi(&p.rois, 1, 40.0f, 30.0f, 40.0f, 50.0f);  // zero area
    for (LevelRule rule : {LevelRule::kScale, LevelRule::kOpenVino, LevelRule::kGiven}) {
      for (PoolMode pool : {PoolMode::kAvg, PoolMode::kMax}) {
        for (CoordinateMode coords : {CoordinateMode::kLegacy, CoordinateMode::kHalfPixel}) {
          MultiLevelParams mp = BaseParams();
          mp.level_rule = rule;
          mp.params.pool_mode = pool;
          mp.params.coordinate_mode = coords;
          mp.params.sampling_ratio = pool == PoolMode::kAvg ? 0 : 2;  // adaptive and fixed grids
          std::vector<int32_t> level;
          std::vector<int32_t> given;
          if (rule == LevelRule::kGiven) {
            for (int64_t k = 0; k < p.rois.k(); ++k) given.push_back(static_cast<int32_t>((k * 7) % 3));
            level = given;
          } else {
            level = ExpectedLevels(mp, p);
          }
          const std::string what = std::string(ToString(rule)) + " " + ToString(pool) + " " + ToString(coords) +
                                   " C=" + std::to_string(c);
          CheckAgainstReference(mp, p, level, given.empty() ? nullptr : given.data(), c == 70, 2, what);
        }
      }
    }
  }
}

TEST_P(MultiLevelTest, EmptyLevelsAndEveryRoiOnOneLevel) {
  std::mt19937 rng(5);
  for (int only : {0, 1, 2}) {
    Pyramid p = MakePyramid(&rng, 9, 96, 128, 3);
    // Sides 16, 32 and 64 px (times 1.1 to stay off the boundary) go to P2, P3, P4.
    const float side = 16.0f * 1.1f * static_cast<float>(1 << only);
    for (int k = 0; k < 13; ++k) {
      const float x = static_cast<float>(k * 5), y = static_cast<float>(k * 3);
      AddRoi(&p.rois, k % 2, x, y, x + side, y + side);
    }
    MultiLevelParams mp = BaseParams();
    const std::vector<int32_t> level = ExpectedLevels(mp, p);
    ASSERT_TRUE(std::all_of(level.begin(), level.end(), [&](int32_t l) { return l == only; }));
    CheckAgainstReference(mp, p, level, nullptr, false, 2, "all on level " + std::to_string(only));
  }
}

TEST_P(MultiLevelTest, ZeroAreaBoxesUnderEachRule) {
  std::mt19937 rng(9);
  Pyramid p = MakePyramid(&rng, 6, 96, 128, 3);
  AddRoi(&p.rois, 0, 50.0f, 40.0f, 50.0f, 40.0f);  // a point
  AddRoi(&p.rois, 1, 10.0f, 20.0f, 90.0f, 20.0f);  // a line
  AddRoi(&p.rois, 0, 10.0f, 10.0f, 80.0f, 70.0f);  // an ordinary box, on P4
  for (LevelRule rule : {LevelRule::kScale, LevelRule::kOpenVino, LevelRule::kGiven}) {
    MultiLevelParams mp = BaseParams();
    mp.level_rule = rule;
    const std::vector<int32_t> given = {2, 1, 0};
    std::vector<int32_t> level;
    switch (rule) {
      case LevelRule::kScale:
        level = {0, 0, 2};  // torchvision: log2(0) = -inf, clamped to the finest level
        break;
      case LevelRule::kOpenVino:
        level = {-1, -1, 2};  // not pooled: zeros
        break;
      case LevelRule::kGiven:
        level = given;
        break;
    }
    ASSERT_EQ(ExpectedLevels(mp, p)[2], 2);
    CheckAgainstReference(mp, p, level, rule == LevelRule::kGiven ? given.data() : nullptr, false, 1,
                          ToString(rule));
    if (rule == LevelRule::kOpenVino) {
      const MultiLevelRun r = RunMultiLevel(target_, mp, p, nullptr, false, 1);
      const size_t per_roi = static_cast<size_t>(p.c * 12);
      EXPECT_TRUE(std::all_of(r.out.begin(), r.out.begin() + 2 * static_cast<std::ptrdiff_t>(per_roi),
                              [](float v) { return v == 0.0f && !std::signbit(v); }));
    }
  }
}

TEST_P(MultiLevelTest, BitIdenticalAcrossThreadCounts) {
  std::mt19937 rng(3);
  Pyramid p = MakePyramid(&rng, 67, 96, 128, 3);
  AddRandomBoxes(&rng, &p, 120, 96.0f, 128.0f, 4.0f, 200.0f);
  const MultiLevelParams mp = BaseParams();
  const MultiLevelRun one = RunMultiLevel(target_, mp, p, nullptr, true, 1);
  ASSERT_TRUE(one.status.ok()) << one.status.message();
  for (int threads : {2, 3, 8}) {
    const MultiLevelRun many = RunMultiLevel(target_, mp, p, nullptr, true, threads);
    ASSERT_TRUE(many.status.ok()) << many.status.message();
    EXPECT_EQ(0, std::memcmp(one.out.data(), many.out.data(), one.out.size() * sizeof(float))) << threads;
  }
}

TEST_P(MultiLevelTest, CallersThreadPoolGivesTheSameBits) {
  std::mt19937 rng(8);
  Pyramid p = MakePyramid(&rng, 19, 96, 128, 3);
  AddRandomBoxes(&rng, &p, 40, 96.0f, 128.0f, 4.0f, 200.0f);
  const MultiLevelParams mp = BaseParams();
  const MultiLevelRun omp = RunMultiLevel(target_, mp, p, nullptr, false, 2);
  ASSERT_TRUE(omp.status.ok()) << omp.status.message();
  const roialign_threadpool pool = {sizeof(roialign_threadpool), 0, &ReversePool, nullptr, 3, 0};
  const MultiLevelRun pooled = RunMultiLevel(target_, mp, p, nullptr, false, 0, &pool);
  ASSERT_TRUE(pooled.status.ok()) << pooled.status.message();
  const std::vector<float>& got = pooled.out;
  EXPECT_EQ(0, std::memcmp(got.data(), omp.out.data(), got.size() * sizeof(float)));
}

INSTANTIATE_TEST_SUITE_P(EveryCompiledTarget, MultiLevelTest, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<Case>& param) {
                           std::string s = param.param.name + "_" + ToString(param.param.dtype);
                           std::replace_if(s.begin(), s.end(), [](char ch) { return !std::isalnum(ch); }, '_');
                           return s;
                         });

// The rules on boxes whose level is known by hand (P2..P5 at 1/4..1/32, canonical 224 at P4).
TEST(MultiLevelRules, HandPickedLevels) {
  struct Row {
    float side;
    int32_t scale_rule, openvino_rule;
  };
  // sqrt(area) = side. SCALE: floor(4 + log2(side / 224) + 1e-6) - 2, clamped to [0, 3]. OPENVINO: floor(log2(side
  // / 224 + 1e-6) + 2), clamped to [0, 3].
  const Row rows[] = {{1.0f, 0, 0},   {50.0f, 0, 0},  {111.9f, 0, 0}, {112.0f, 1, 1}, {223.0f, 1, 1},
                      {224.0f, 2, 2}, {447.0f, 2, 2}, {448.0f, 3, 3}, {5000.0f, 3, 3}};
  MultiLevelParams mp;
  mp.scales = {0.25f, 0.125f, 0.0625f, 0.03125f};
  std::mt19937 rng(1);
  Pyramid p = MakePyramid(&rng, 3, 64, 64, 4);
  p.scales = mp.scales;
  for (const Row& row : rows) AddRoi(&p.rois, 0, 10.0f, 10.0f, 10.0f + row.side, 10.0f + row.side);
  for (LevelRule rule : {LevelRule::kScale, LevelRule::kOpenVino}) {
    mp.level_rule = rule;
    std::vector<int32_t> level;
    for (const Row& row : rows) level.push_back(rule == LevelRule::kScale ? row.scale_rule : row.openvino_rule);
    const MultiLevelRun got = RunMultiLevel("host", mp, p, nullptr, false, 1);
    ASSERT_TRUE(got.status.ok()) << got.status.message();
    EXPECT_EQ(CountMismatches(got.out, LevelByLevelReference(mp, p, level), DType::kF32, ToString(rule)), 0u);
  }
}

// SCALE takes k_min and k_max from the first and last scales only, as torchvision's LevelMapper does, for every set
// of power-of-two scales: repeated (MobileNet v3's FPN has two maps at 1/32), skipping a level, or growing. A level
// that names no map leaves the box's output zero, as torchvision's pooler does (-1 below).
TEST(MultiLevelRules, ScaleRuleMapsLevelsAsTorchvisionForAnyPowersOfTwo) {
  struct ScaleSet {
    std::vector<float> scales;
    std::vector<int32_t> levels;  // of the boxes of sides 1, 112, 224, 448 (k = 2, 3, 4, 5 before clamping)
  };
  const ScaleSet cases[] = {
      {{0.03125f, 0.03125f}, {0, 0, 0, 0}},   // k_min = k_max = 5: every box on the first map
      {{0.25f, 0.0625f}, {0, 1, -1, -1}},     // k 2..4: k = 3 is index 1, k = 4 index 2 (no map)
      {{0.125f, 0.25f}, {-1, -1, -1, -1}},    // k_min 3 > k_max 2: clamped to 2, index -1
      {{0.25f, 0.125f, 0.125f}, {0, 1, 1, 1}},  // k 2..3
  };
  for (const ScaleSet& c : cases) {
    MultiLevelParams mp;
    mp.scales = c.scales;
    mp.level_rule = LevelRule::kScale;
    std::mt19937 rng(3);
    Pyramid p = MakePyramid(&rng, 3, 64, 64, static_cast<int>(c.scales.size()));
    p.scales = mp.scales;
    for (float side : {1.0f, 112.0f, 224.0f, 448.0f}) AddRoi(&p.rois, 0, 2.0f, 2.0f, 2.0f + side, 2.0f + side);
    const MultiLevelRun got = RunMultiLevel("host", mp, p, nullptr, false, 1);
    ASSERT_TRUE(got.status.ok()) << got.status.message();
    EXPECT_EQ(CountMismatches(got.out, LevelByLevelReference(mp, p, c.levels), DType::kF32, "SCALE"), 0u)
        << c.scales.size() << " maps, first scale " << c.scales[0];
  }
}

// The same on random boxes of every size, for sets of scales a torchvision pooler can infer beyond FPN's usual
// 1/4..1/32: maps coarser than 1/32, scales of 1 and 2 (k <= 0), the most levels the API takes, with repeats and
// gaps anywhere. ExpectedLevel states LevelMapper's formula on its own.
TEST(MultiLevelRules, ScaleRuleOnRandomBoxesIsLevelMappersFormula) {
  const std::vector<std::vector<float>> sets = {
      {0.0625f, 0.03125f, 0.03125f},
      {0.25f, 0.125f, 0.125f, 0.03125f},
      {2.0f, 1.0f, 0.5f},
      {1.0f, 0.0078125f},
      {0.03125f, 0.0625f, 0.25f},
      {0.015625f},
      {0.5f, 0.25f, 0.25f, 0.125f, 0.0625f, 0.03125f, 0.015625f, 0.00390625f},
  };
  std::mt19937 rng(11);
  for (const std::vector<float>& scales : sets) {
    MultiLevelParams mp;
    mp.scales = scales;
    mp.level_rule = LevelRule::kScale;
    mp.params.sampling_ratio = 2;  // boxes of 4000 px at scale 2 would take millions of samples per bin adaptively
    Pyramid p = MakePyramid(&rng, 2, 48, 64, static_cast<int>(scales.size()));
    p.scales = scales;
    AddRandomBoxes(&rng, &p, 200, 480.0f, 640.0f, 0.5f, 4000.0f);
    const std::vector<int32_t> level = ExpectedLevels(mp, p);
    // Every set sends boxes to more than one outcome (a map or none) unless all its scales name one level.
    const int32_t k_min = static_cast<int32_t>(std::lround(-std::log2(scales.front())));
    const int32_t k_max = static_cast<int32_t>(std::lround(-std::log2(scales.back())));
    if (k_min < k_max) {
      EXPECT_NE(std::count(level.begin(), level.end(), level[0]), static_cast<std::ptrdiff_t>(level.size()));
    }
    const MultiLevelRun got = RunMultiLevel("host", mp, p, nullptr, false, 1);
    ASSERT_TRUE(got.status.ok()) << got.status.message();
    EXPECT_EQ(CountMismatches(got.out, LevelByLevelReference(mp, p, level), DType::kF32, "SCALE"), 0u)
        << scales.size() << " maps, first scale " << scales[0];
  }
}

TEST(MultiLevelRules, SelectionRefusals) {
  struct Bad {
    std::vector<float> scales;
    LevelRule rule;
    const char* message;
  };
  const Bad bad[] = {
      {{}, LevelRule::kScale, "number of levels must be 1 to 8 (got 0)"},
      {std::vector<float>(9, 0.25f), LevelRule::kGiven, "number of levels must be 1 to 8 (got 9)"},
      {{0.25f, NAN}, LevelRule::kGiven, "scale of level 1 must be finite and > 0"},
      {{0.0f}, LevelRule::kGiven, "scale of level 0 must be finite and > 0"},
      {{-0.25f}, LevelRule::kOpenVino, "scale of level 0 must be finite and > 0"},
      {{0.3f}, LevelRule::kScale, "power-of-two scales; level 0 has 0.3"},
      {{0.25f}, static_cast<LevelRule>(7), "unknown level rule value 7"},
  };
  for (const Bad& b : bad) {
    MultiLevelParams mp;
    mp.scales = b.scales;
    mp.level_rule = b.rule;
    const PyramidSelection r = SelectPyramidKernel("host", mp);
    EXPECT_EQ(r.status.code(), StatusCode::kInvalidArgument) << b.message;
    EXPECT_NE(r.status.message().find(b.message), std::string::npos) << r.status.message();
  }
  MultiLevelParams ok;
  ok.scales = {0.3f, 0.1f};  // any positive scales with given levels or the OpenVINO rule
  ok.level_rule = LevelRule::kGiven;
  EXPECT_TRUE(SelectPyramidKernel("host", ok).ok());
  ok.level_rule = LevelRule::kOpenVino;
  EXPECT_TRUE(SelectPyramidKernel("host", ok).ok());
  ok.canonical_size = 0.0f;
  EXPECT_EQ(SelectPyramidKernel("host", ok).status.code(), StatusCode::kInvalidArgument);
  ok.canonical_size = 224.0f;
  ok.params.pooled_height = 0;  // single-level attributes are checked too
  EXPECT_EQ(SelectPyramidKernel("host", ok).status.code(), StatusCode::kInvalidArgument);
}

TEST(MultiLevelRules, RunRefusalsLeaveTheOutputUntouched) {
  std::mt19937 rng(2);
  Pyramid p = MakePyramid(&rng, 4, 32, 32, 2);
  AddRoi(&p.rois, 0, 1.0f, 1.0f, 20.0f, 20.0f);
  AddRoi(&p.rois, 1, 2.0f, 2.0f, 30.0f, 30.0f);
  MultiLevelParams mp;
  mp.scales = {0.25f, 0.125f};
  mp.level_rule = LevelRule::kGiven;
  const PyramidSelection sel = SelectPyramidKernel("host", mp);
  ASSERT_TRUE(sel.ok()) << sel.status.message();
  std::vector<LevelMap> maps = {{p.maps[0].data(), p.heights[0], p.widths[0]},
                                {p.maps[1].data(), p.heights[1], p.widths[1]}};
  const std::vector<int32_t> good = {0, 1}, out_of_range = {0, 2}, negative = {-1, 0};
  auto call = [&](const std::vector<LevelMap>& m, int32_t num_maps, const int32_t* levels, int64_t batch) {
    MultiLevelInputs in;
    in.maps = m.data();
    in.num_maps = num_maps;
    in.batch = batch;
    in.channels = p.c;
    in.rois = p.rois.rois5.data();
    in.levels = levels;
    in.num_rois = p.rois.k();
    std::vector<float> out(static_cast<size_t>(p.rois.k() * p.c * 49), 5.0f);
    const Status s = sel.kernel.Run(in, out.data(), 1);
    if (!s.ok()) {
      EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](float v) { return v == 5.0f; }));
    }
    return s;
  };
  EXPECT_TRUE(call(maps, 2, good.data(), 2).ok());
  EXPECT_NE(call(maps, 1, good.data(), 2).message().find("got 1 maps; the kernel has 2 levels"), std::string::npos);
  EXPECT_NE(call(maps, 2, out_of_range.data(), 2).message().find("roi 1: level 2 is outside [0, 2)"),
            std::string::npos);
  EXPECT_NE(call(maps, 2, negative.data(), 2).message().find("roi 0: level -1"), std::string::npos);
  EXPECT_NE(call(maps, 2, nullptr, 2).message().find("needs levels"), std::string::npos);
  EXPECT_NE(call(maps, 2, good.data(), 1).message().find("batch index 1 is outside [0, 1)"), std::string::npos);
  std::vector<LevelMap> bad_shape = maps;
  bad_shape[1].height = 0;
  EXPECT_NE(call(bad_shape, 2, good.data(), 2).message().find("level 1: height and width must be >= 1"),
            std::string::npos);
  bad_shape = maps;
  bad_shape[1].input = nullptr;
  EXPECT_NE(call(bad_shape, 2, good.data(), 2).message().find("level 1: input is null"), std::string::npos);

  MultiLevelParams by_scale = mp;
  by_scale.level_rule = LevelRule::kScale;
  const PyramidSelection sel2 = SelectPyramidKernel("host", by_scale);
  ASSERT_TRUE(sel2.ok());
  MultiLevelInputs in;
  in.maps = maps.data();
  in.num_maps = 2;
  in.batch = 2;
  in.channels = p.c;
  in.rois = p.rois.rois5.data();
  in.levels = good.data();
  in.num_rois = p.rois.k();
  std::vector<float> out(static_cast<size_t>(p.rois.k() * p.c * 49));
  EXPECT_NE(sel2.kernel.Run(in, out.data(), 1).message().find("levels are given, but the level rule is SCALE"),
            std::string::npos);

  // A rule that reads the boxes runs before the RoIs are checked: a NaN batch index (5-column RoIs) must be refused
  // there, not converted to an integer (undefined; UBSan flagged it under the multi-level fuzzer).
  std::vector<float> nan_batch = p.rois.rois5;
  nan_batch[5] = NAN;
  in.rois = nan_batch.data();
  in.levels = nullptr;
  std::fill(out.begin(), out.end(), 5.0f);
  const Status refused = sel2.kernel.Run(in, out.data(), 1);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("roi 1"), std::string::npos) << refused.message();
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](float v) { return v == 5.0f; }));
}

}  // namespace
}  // namespace testing
}  // namespace roialign
