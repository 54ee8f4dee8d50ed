/* Copyright 2026 The roialign Authors
 * SPDX-License-Identifier: Apache-2.0 */
/* The C API from C99: selection, running, refusals with messages, queries and layout transforms. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "roialign/roialign.h"

static int failures = 0;
#define CHECK(cond)                                                      \
  do {                                                                   \
    if (!(cond)) {                                                       \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                        \
    }                                                                    \
  } while (0)

static roialign_params DefaultParams(roialign_layout layout) {
  roialign_params p;
  roialign_params_init(&p);
  p.pooled_height = 2;
  p.pooled_width = 3;
  p.spatial_scale = 0.5f;
  p.sampling_ratio = 0;
  p.coordinate_mode = ROIALIGN_COORD_HALF_PIXEL;
  p.pool_mode = ROIALIGN_POOL_AVG;
  p.layout = layout;
  p.dtype = ROIALIGN_DTYPE_F32;
  return p;
}

/* One map's call on `num_threads` threads. */
static roialign_status Run(const roialign_kernel* kernel, const void* map, int64_t batch, int64_t channels,
                           int64_t height, int64_t width, const float* rois, const int64_t* batch_indices,
                           int64_t num_rois, void* output, int32_t num_threads) {
  roialign_inputs in;
  roialign_options options;
  roialign_inputs_init(&in);
  in.batch = batch;
  in.channels = channels;
  in.maps[0].data = map;
  in.maps[0].height = height;
  in.maps[0].width = width;
  in.rois = rois;
  in.batch_indices = batch_indices;
  in.num_rois = num_rois;
  roialign_options_init(&options);
  options.num_threads = num_threads;
  return roialign_run(kernel, &in, output, &options);
}

static roialign_options Threads(int32_t num_threads) {
  roialign_options options;
  roialign_options_init(&options);
  options.num_threads = num_threads;
  return options;
}

int main(void) {
  enum { N = 1, C = 4, H = 6, W = 5, K = 2 };
  float nchw[N * C * H * W], nhwc[N * C * H * W], back[N * C * H * W];
  float rois[K * 5] = {0, 1, 1, 8, 9, 0, -3, 2, 4, 20};
  float out_nchw[K * C * 6], out_nhwc[K * C * 6], out_ref[K * C * 6], canary[K * C * 6];
  roialign_kernel* kernel = NULL;
  roialign_kernel* ref = NULL;
  roialign_params params = DefaultParams(ROIALIGN_LAYOUT_NCHW);
  roialign_target_info info;
  int i, k, c, b;
  const roialign_options two_threads = Threads(2);

  for (i = 0; i < N * C * H * W; ++i) nchw[i] = (float)((i * 37) % 17) / 8.0f - 1.0f;
  CHECK(roialign_version() == ROIALIGN_VERSION);
  CHECK(roialign_nchw_to_nhwc(ROIALIGN_DTYPE_F32, nchw, N, C, H, W, nhwc, NULL) == ROIALIGN_OK);
  CHECK(roialign_nhwc_to_nchw(ROIALIGN_DTYPE_F32, nhwc, N, C, H, W, back, &two_threads) == ROIALIGN_OK);
  CHECK(memcmp(nchw, back, sizeof(nchw)) == 0);
  CHECK(nhwc[1] == nchw[H * W]); /* pixel 0, channel 1 */

  CHECK(roialign_select("generic", &params, &ref) == ROIALIGN_OK);
  CHECK(strcmp(roialign_kernel_name(ref), "roi_align_nchw.reference") == 0);
  CHECK(Run(ref, nchw, N, C, H, W, rois, NULL, K, out_ref, 1) == ROIALIGN_OK);

  CHECK(roialign_select("host", &params, &kernel) == ROIALIGN_OK);
  CHECK(strncmp(roialign_kernel_name(kernel), "roi_align_nchw.", 15) == 0);
  CHECK(Run(kernel, nchw, N, C, H, W, rois, NULL, K, out_nchw, 0) == ROIALIGN_OK);
  for (i = 0; i < K * C * 6; ++i) CHECK(fabsf(out_nchw[i] - out_ref[i]) <= 1e-5f + 1e-4f * fabsf(out_ref[i]));
  roialign_kernel_free(kernel);

  params.layout = ROIALIGN_LAYOUT_NHWC;
  CHECK(roialign_select("host", &params, &kernel) == ROIALIGN_OK);
  CHECK(Run(kernel, nhwc, N, C, H, W, rois, NULL, K, out_nhwc, 2) == ROIALIGN_OK);
  for (k = 0; k < K; ++k)
    for (c = 0; c < C; ++c)
      for (b = 0; b < 6; ++b) {
        const float want = out_ref[(k * C + c) * 6 + b], got = out_nhwc[(k * 6 + b) * C + c];
        CHECK(fabsf(got - want) <= 1e-5f + 1e-4f * fabsf(want));
      }

  /* A bad batch index: refused, message names the RoI, output untouched. */
  rois[5] = 3.0f;
  for (i = 0; i < K * C * 6; ++i) canary[i] = -99.0f;
  CHECK(Run(kernel, nhwc, N, C, H, W, rois, NULL, K, canary, 0) == ROIALIGN_INVALID_ARGUMENT);
  CHECK(strstr(roialign_last_error(), "roi 1: batch index 3 is outside [0, 1)") != NULL);
  for (i = 0; i < K * C * 6; ++i) CHECK(canary[i] == -99.0f);
  roialign_kernel_free(kernel);
  roialign_kernel_free(ref);
  roialign_kernel_free(NULL);

  /* Refusals at selection: the portable fallback serves F32 and F64 only. */
  params.dtype = ROIALIGN_DTYPE_F16;
  kernel = (roialign_kernel*)&params; /* must be reset to NULL on failure */
  CHECK(roialign_select("portable", &params, &kernel) == ROIALIGN_UNSUPPORTED);
  CHECK(kernel == NULL);
  CHECK(strstr(roialign_last_error(), "dtype F16 (supported: F32, F64)") != NULL);
  params.dtype = ROIALIGN_DTYPE_F32;
  params.pooled_height = 0;
  CHECK(roialign_select("host", &params, &kernel) == ROIALIGN_INVALID_ARGUMENT);
  CHECK(roialign_select(NULL, &params, &kernel) == ROIALIGN_INVALID_ARGUMENT);
  /* Regression (fuzzer): an enum field holding a value outside its enumerators is refused, not UB. */
  params.pooled_height = 2;
  params.layout = (roialign_layout)5;
  CHECK(roialign_select("host", &params, &kernel) == ROIALIGN_INVALID_ARGUMENT);
  CHECK(strstr(roialign_last_error(), "unknown layout value 5") != NULL);
  params.layout = ROIALIGN_LAYOUT_NCHW;
  params.pool_mode = (roialign_pool_mode)-7;
  CHECK(roialign_select("host", &params, &kernel) == ROIALIGN_INVALID_ARGUMENT);
  params.pool_mode = ROIALIGN_POOL_AVG;
  CHECK(roialign_select("host", NULL, &kernel) == ROIALIGN_INVALID_ARGUMENT);
  CHECK(Run(NULL, nchw, N, C, H, W, rois, NULL, K, canary, 0) == ROIALIGN_INVALID_ARGUMENT);
  CHECK(strcmp(roialign_kernel_name(NULL), "") == 0);

  roialign_target_info_init(&info);
  CHECK(roialign_query_target("host", &info) == ROIALIGN_OK);
  CHECK(info.layouts == 31u && info.dtypes == 15u && info.pool_modes == 7u && info.coordinate_modes == 15u);
  CHECK(info.preferred_layout == ROIALIGN_LAYOUT_NHWC);
  CHECK(roialign_query_target("no-such-target", &info) == ROIALIGN_INVALID_ARGUMENT);
  CHECK(strstr(roialign_last_error(), "unknown target 'no-such-target'") != NULL);

  /* 16-bit layout transforms move elements bit for bit; an unknown dtype is refused. N=1, C=2, H=1, W=3. */
  {
    const uint16_t planar[6] = {1, 2, 3, 0x7E01, 5, 0xFFFF};
    uint16_t interleaved[6] = {0}, round_trip[6] = {0};
    const roialign_options one = Threads(1);
    CHECK(roialign_nchw_to_nhwc(ROIALIGN_DTYPE_BF16, planar, 1, 2, 1, 3, interleaved, &one) == ROIALIGN_OK);
    CHECK(interleaved[0] == 1 && interleaved[1] == 0x7E01 && interleaved[4] == 3 && interleaved[5] == 0xFFFF);
    CHECK(roialign_nhwc_to_nchw(ROIALIGN_DTYPE_F16, interleaved, 1, 2, 1, 3, round_trip, &one) == ROIALIGN_OK);
    CHECK(memcmp(planar, round_trip, sizeof(round_trip)) == 0);
    CHECK(roialign_nchw_to_nhwc((roialign_dtype)9, planar, 1, 2, 1, 3, round_trip, &one) == ROIALIGN_INVALID_ARGUMENT);
    CHECK(strstr(roialign_last_error(), "unknown dtype value 9") != NULL);
  }

  /* Multi-level: two 1-channel maps (4x4 at scale 1/2, 2x2 at 1/4), two RoIs, levels given, then each RoI against
   * a single-level run on its level's map. */
  {
    float p2[16], p3[4], out[2 * 6], single[6];
    const float rois2[10] = {0, 0.5f, 0.5f, 6.0f, 5.0f, 0, 1.0f, 0.0f, 7.0f, 7.0f};
    const int32_t levels[2] = {1, 0}, bad_levels[2] = {0, 2};
    roialign_params params1 = DefaultParams(ROIALIGN_LAYOUT_NCHW);
    roialign_multi_level_params mp;
    roialign_multi_level_kernel* ml = NULL;
    roialign_kernel* one = NULL;
    roialign_inputs in;
    const roialign_options one_thread = Threads(1);

    for (i = 0; i < 16; ++i) p2[i] = (float)(i * i % 7);
    for (i = 0; i < 4; ++i) p3[i] = (float)(10 + i);
    roialign_inputs_init(&in);
    in.num_maps = 2;
    in.batch = 1, in.channels = 1;
    in.maps[0].data = p2, in.maps[0].height = 4, in.maps[0].width = 4;
    in.maps[1].data = p3, in.maps[1].height = 2, in.maps[1].width = 2;
    in.rois = rois2, in.levels = levels, in.num_rois = 2;
    roialign_multi_level_params_init(&mp);
    mp.num_levels = 2;
    mp.scales[0] = 0.5f;
    mp.scales[1] = 0.25f;
    mp.level_rule = ROIALIGN_LEVEL_RULE_GIVEN;
    mp.canonical_size = 224.0f;
    mp.canonical_level = 4;
    CHECK(roialign_multi_level_select("host", &params1, &mp, &ml) == ROIALIGN_OK);
    CHECK(strlen(roialign_multi_level_kernel_name(ml)) > 0);
    CHECK(roialign_multi_level_run(ml, &in, out, &one_thread) == ROIALIGN_OK);
    for (k = 0; k < 2; ++k) {
      roialign_params p = params1;
      p.spatial_scale = mp.scales[levels[k]];
      CHECK(roialign_select("generic", &p, &one) == ROIALIGN_OK);
      CHECK(Run(one, levels[k] ? p3 : p2, 1, 1, levels[k] ? 2 : 4, levels[k] ? 2 : 4, rois2 + 5 * k, NULL, 1,
                         single, 1) == ROIALIGN_OK);
      for (i = 0; i < 6; ++i) CHECK(fabsf(out[6 * k + i] - single[i]) <= 1e-5f + 1e-4f * fabsf(single[i]));
      roialign_kernel_free(one);
    }
    in.levels = bad_levels;
    CHECK(roialign_multi_level_run(ml, &in, out, &one_thread) == ROIALIGN_INVALID_ARGUMENT);
    CHECK(strstr(roialign_last_error(), "roi 1: level 2 is outside [0, 2)") != NULL);
    in.levels = levels;
    in.num_maps = 1;
    CHECK(roialign_multi_level_run(ml, &in, out, &one_thread) == ROIALIGN_INVALID_ARGUMENT);
    roialign_multi_level_kernel_free(ml);
    mp.num_levels = 9;
    CHECK(roialign_multi_level_select("host", &params1, &mp, &ml) == ROIALIGN_INVALID_ARGUMENT && ml == NULL);
    CHECK(strstr(roialign_last_error(), "num_levels must be 1 to 8 (got 9)") != NULL);
    mp.num_levels = 2;
    mp.level_rule = ROIALIGN_LEVEL_RULE_SCALE;
    mp.scales[1] = 0.2f;
    CHECK(roialign_multi_level_select("host", &params1, &mp, &ml) == ROIALIGN_INVALID_ARGUMENT);
    CHECK(strstr(roialign_last_error(), "power-of-two") != NULL);
    roialign_multi_level_kernel_free(NULL);
  }

  /* Enum names and their parse, from the library's one list. */
  {
    CHECK(strcmp(roialign_enum_name(ROIALIGN_ENUM_LAYOUT, ROIALIGN_LAYOUT_NHWC), "NHWC") == 0);
    CHECK(strcmp(roialign_enum_name(ROIALIGN_ENUM_DTYPE, ROIALIGN_DTYPE_BF16), "BF16") == 0);
    CHECK(strcmp(roialign_enum_name(ROIALIGN_ENUM_POOL_MODE, ROIALIGN_POOL_MAX_ONNX), "MAX_ONNX") == 0);
    CHECK(strcmp(roialign_enum_name(ROIALIGN_ENUM_COORDINATE_MODE, ROIALIGN_COORD_LEGACY_UNCLAMPED),
                 "LEGACY_UNCLAMPED") == 0);
    CHECK(strcmp(roialign_enum_name(ROIALIGN_ENUM_LEVEL_RULE, ROIALIGN_LEVEL_RULE_OPENVINO), "OPENVINO") == 0);
    CHECK(strcmp(roialign_enum_name(ROIALIGN_ENUM_STATUS, ROIALIGN_OUT_OF_MEMORY), "OUT_OF_MEMORY") == 0);
    CHECK(roialign_enum_name(ROIALIGN_ENUM_COORDINATE_MODE, 4) == NULL);
    CHECK(roialign_enum_name(ROIALIGN_ENUM_LAYOUT, -1) == NULL);
    CHECK(strcmp(roialign_enum_name(ROIALIGN_ENUM_ROI_KIND, ROIALIGN_ROI_ROTATED), "ROTATED") == 0);
    CHECK(strcmp(roialign_enum_name(ROIALIGN_ENUM_ANGLE_UNIT, ROIALIGN_ANGLE_DEGREES), "DEGREES") == 0);
    CHECK(roialign_enum_parse(ROIALIGN_ENUM_ROTATION, "CLOCKWISE") == ROIALIGN_ROTATION_CLOCKWISE);
    CHECK(roialign_enum_name(ROIALIGN_ENUM_ROTATION, 2) == NULL);
    CHECK(roialign_enum_name((roialign_enum_kind)9, 0) == NULL);
    CHECK(roialign_enum_parse(ROIALIGN_ENUM_COORDINATE_MODE, "HALF_PIXEL_CENTERED") ==
          ROIALIGN_COORD_HALF_PIXEL_CENTERED);
    CHECK(roialign_enum_parse(ROIALIGN_ENUM_STATUS, "UNSUPPORTED") == ROIALIGN_UNSUPPORTED);
    /* Layout facts from the library: the channel block of each layout, -1 past the last. */
    CHECK(roialign_layout_channel_block(ROIALIGN_LAYOUT_NCHW) == 0);
    CHECK(roialign_layout_channel_block(ROIALIGN_LAYOUT_NHWC) == 0);
    CHECK(roialign_layout_channel_block(ROIALIGN_LAYOUT_NCHW4C) == 4);
    CHECK(roialign_layout_channel_block(ROIALIGN_LAYOUT_NCHW8C) == 8);
    CHECK(roialign_layout_channel_block(ROIALIGN_LAYOUT_NCHW16C) == 16);
    CHECK(roialign_layout_channel_block((roialign_layout)5) == -1);
    CHECK(roialign_layout_channel_block((roialign_layout)-1) == -1);
    CHECK(roialign_enum_parse(ROIALIGN_ENUM_POOL_MODE, "avg") == -1); /* exact spelling only */
    CHECK(roialign_enum_parse(ROIALIGN_ENUM_POOL_MODE, NULL) == -1);
    CHECK(roialign_enum_parse((roialign_enum_kind)-1, "NCHW") == -1);
    /* Counting up until NULL lists every value, and each name parses back to its value. */
    int kind, value, count = 0;
    for (kind = ROIALIGN_ENUM_LAYOUT; kind <= ROIALIGN_ENUM_STATUS; ++kind) {
      for (value = 0; roialign_enum_name((roialign_enum_kind)kind, value) != NULL; ++value, ++count) {
        CHECK(roialign_enum_parse((roialign_enum_kind)kind, roialign_enum_name((roialign_enum_kind)kind, value)) ==
              value);
      }
    }
    CHECK(count == 5 + 4 + 3 + 4 + 3 + 5);
  }

  if (failures == 0) printf("c_api_test: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
