// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// libFuzzer target over the multi-level C API: random level counts, scales (powers of two or not, zero, negative,
// NaN), level rules, canonical sizes and levels, per-level shapes (some empty), given levels (some out of range),
// RoIs and targets, on exactly-sized heap buffers, one per level (ASan guards them). An accepted call must match
// the multi-level reference (target "generic"), and with given levels each RoI must also match a single-level
// reference run on its level's map. A refused call must leave the output untouched and say why.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "roialign/roialign.h"
#include "tests/fuzz/fuzz_support.h"

using namespace roialign_fuzz;  // NOLINT: a test's own helpers

namespace {

struct Level {
  std::vector<unsigned char> map;
  int64_t height, width;
};

// Compares `out` with `want` element by element (K * per_roi elements), or fails with `what`.
void ExpectAgrees(roialign_dtype dtype, const unsigned char* out, const unsigned char* want, size_t elements,
                  const char* what) {
  for (size_t i = 0; i < elements; ++i) {
    if (!Agrees(dtype, Load(dtype, out, i), Load(dtype, want, i))) Fail(what);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader r{data, size};
  roialign_multi_level_params mp;
  roialign_multi_level_params_init(&mp);
  roialign_params params;
  roialign_params_init(&params);
  params.pooled_height = r.U8() % 4;  // 0 is invalid on purpose
  params.pooled_width = r.U8() % 4;
  params.spatial_scale = 1.0f;  // unused: each level has its own
  params.sampling_ratio = static_cast<int8_t>(r.U8()) % 4;
  SetEnum(&params.coordinate_mode, r.U8() % 5);  // 4 is invalid on purpose
  SetEnum(&params.pool_mode, r.U8() % 4);
  SetEnum(&params.layout, r.U8() % 6);  // 5 is invalid on purpose
  SetEnum(&params.dtype, DType(r));
  // Rotated RoIs a third of the time (their level is an upright box's of their size).
  const uint8_t kind = r.U8();
  const bool rotated = kind % 3 == 0;
  SetEnum(&params.roi_kind, rotated ? 1 : 0);
  SetEnum(&params.angle_unit, rotated ? kind % 2 : 0);
  SetEnum(&params.rotation, rotated ? (kind >> 1) % 2 : 0);
  mp.num_levels = r.U8() % 10;  // 0 and 9 are invalid on purpose
  const int first_level = r.U8() % 4;
  const bool powers_of_two = r.U8() % 4 != 0;
  static const float kOddScales[] = {0.25f, 0.2f, 0.0f, -0.5f, NAN, INFINITY, 1e-30f, 2.0f};
  for (int i = 0; i < ROIALIGN_MAX_LEVELS; ++i) {
    mp.scales[i] = powers_of_two ? std::ldexp(1.0f, -(first_level + i)) : kOddScales[r.U8() % 8];
  }
  SetEnum(&mp.level_rule, r.U8() % 4);  // 3 is invalid on purpose
  static const float kCanonicalSizes[] = {224.0f, 16.0f, 0.0f, -1.0f, NAN};
  mp.canonical_size = kCanonicalSizes[r.U8() % 5];
  mp.canonical_level = r.U8() % 8 - 1;
  static const char* const kTargets[] = {"host", "portable", "x86-sse4", "arm-neon", "generic", "bogus"};
  const char* target = kTargets[r.U8() % 6];

  const int64_t N = r.U8() % 3, C = r.U8() % 19, K = r.U8() % 9;
  const int32_t num_maps = mp.num_levels - (r.U8() % 32 == 0 ? 1 : 0);  // sometimes one map short
  const bool k4 = r.U8() & 1;
  const int32_t threads = r.U8() % 4;
  const size_t bytes = ElementBytes(params.dtype);
  std::vector<Level> levels(static_cast<size_t>(num_maps > 0 ? num_maps : 0));
  std::vector<roialign_map> maps(levels.size());
  for (size_t l = 0; l < levels.size(); ++l) {
    levels[l].height = r.U8() % 9;  // 0: an empty map, refused at run
    levels[l].width = r.U8() % 9;
    levels[l].map.resize(static_cast<size_t>(N * StoredChannels(params.layout, C) * levels[l].height * levels[l].width) *
                         bytes);
    FillMap(params.dtype, levels[l].map.data(), levels[l].map.size() / bytes);
    maps[l] = {levels[l].map.empty() ? nullptr : levels[l].map.data(), levels[l].height, levels[l].width,
               {0, 0, 0, 0}};
  }
  const int64_t values = rotated ? 5 : 4, roi_cols = values + (k4 ? 0 : 1);
  std::vector<float> rois(static_cast<size_t>(K * roi_cols));
  std::vector<int64_t> batch_indices(static_cast<size_t>(K));
  std::vector<int32_t> given(static_cast<size_t>(K));
  for (int64_t k = 0; k < K; ++k) {
    const uint8_t b = r.U8();
    if (k4) {
      batch_indices[k] = b < 220 ? b % 3 : -1;
    } else {
      rois[roi_cols * k] = b < 200 ? static_cast<float>(b % 3) : (b < 230 ? 0.5f : NAN);
    }
    for (int i = 0; i < values; ++i) rois[roi_cols * k + (k4 ? 0 : 1) + i] = r.Coordinate();
    const uint8_t g = r.U8();
    given[k] = g < 240 ? g % (mp.num_levels > 0 ? mp.num_levels : 1) : (g < 248 ? -1 : mp.num_levels);
  }
  // F64 reads its RoIs in double (the float ones widened, one perhaps nudged below a float's spacing).
  const bool f64 = params.dtype == ROIALIGN_DTYPE_F64;
  const std::vector<double> rois64 = RoisF64(r, rois);
  const bool pass_given = mp.level_rule == ROIALIGN_LEVEL_RULE_GIVEN ? r.U8() % 16 != 0 : false;
  const int32_t* given_levels = pass_given ? given.data() : nullptr;

  roialign_multi_level_kernel* kernel = nullptr;
  if (roialign_multi_level_select(target, &params, &mp, &kernel) != ROIALIGN_OK) {
    if (kernel != nullptr) Fail("failed select returned a kernel");
    if (std::strlen(roialign_last_error()) == 0) Fail("refused select without a message");
    return 0;
  }
  const size_t per_roi =
      static_cast<size_t>(StoredChannels(params.layout, C) * params.pooled_height * params.pooled_width);
  const size_t out_elems = static_cast<size_t>(K) * per_roi;
  std::vector<unsigned char> out(out_elems * bytes, kCanary);  // exact size: ASan flags any overrun
  roialign_inputs in;
  roialign_inputs_init(&in);
  in.num_maps = num_maps;  // up to 9: the struct holds 8, and the library refuses more
  for (size_t l = 0; l < maps.size() && l < ROIALIGN_MAX_LEVELS; ++l) in.maps[l] = maps[l];
  in.batch = N;
  in.channels = C;
  in.rois = rois.empty() || f64 ? nullptr : rois.data();
  in.rois_f64 = rois64.empty() || !f64 ? nullptr : rois64.data();
  in.batch_indices = k4 ? batch_indices.data() : nullptr;
  in.levels = given_levels;
  in.num_rois = K;
  auto run = [&](const roialign_multi_level_kernel* kn, unsigned char* dst, int32_t t) {
    roialign_options options;
    roialign_options_init(&options);
    options.num_threads = t;
    return roialign_multi_level_run(kn, &in, dst, &options);
  };
  if (run(kernel, out.empty() ? nullptr : out.data(), threads) != ROIALIGN_OK) {
    for (unsigned char v : out) {
      if (v != kCanary) Fail("refused call wrote to the output");
    }
    if (std::strlen(roialign_last_error()) == 0) Fail("refused call without a message");
    roialign_multi_level_kernel_free(kernel);
    return 0;
  }
  if (std::strcmp(target, "generic") != 0) {
    roialign_multi_level_kernel* ref = nullptr;
    if (roialign_multi_level_select("generic", &params, &mp, &ref) != ROIALIGN_OK) Fail("reference refused what a kernel accepted");
    std::vector<unsigned char> want(out.size(), 0);
    if (run(ref, want.empty() ? nullptr : want.data(), 1) != ROIALIGN_OK) Fail("reference refused accepted data");
    ExpectAgrees(params.dtype, out.data(), want.data(), out_elems, "kernel disagrees with the multi-level reference");
    roialign_multi_level_kernel_free(ref);
  }
  if (pass_given) {
    // The scatter, checked independently: RoI k alone through the single-level reference on its level's map.
    std::vector<unsigned char> single(per_roi * bytes, 0);
    for (int64_t k = 0; k < K; ++k) {
      const int32_t l = given[k];
      roialign_params p = params;
      p.spatial_scale = mp.scales[l];
      roialign_kernel* one = nullptr;
      if (roialign_select("generic", &p, &one) != ROIALIGN_OK) Fail("single-level reference refused a level");
      if (RunOne(one, maps[l].data, N, C, maps[l].height, maps[l].width, f64 ? nullptr : rois.data() + roi_cols * k,
                 k4 ? batch_indices.data() + k : nullptr, 1, single.empty() ? nullptr : single.data(), 1,
                 f64 ? rois64.data() + roi_cols * k : nullptr) != ROIALIGN_OK) {
        Fail("single-level reference refused a RoI the multi-level call pooled");
      }
      ExpectAgrees(params.dtype, out.data() + static_cast<size_t>(k) * per_roi * bytes, single.data(), per_roi,
                   "a RoI disagrees with the single-level reference on its level");
      roialign_kernel_free(one);
    }
  }
  roialign_multi_level_kernel_free(kernel);
  return 0;
}
