/* Copyright 2026 The roialign Authors
 * SPDX-License-Identifier: Apache-2.0 */
/* The growable structs from a C99 caller built against the 1.0 header (docs/api.md, "ABI"). Built twice: against
 * libroialign, and against a test-only library whose C API knows one more field at the end of roialign_params,
 * roialign_inputs and roialign_options (ROIALIGN_TEST_FUTURE_FIELDS), as a later 1.x would append it. In both,
 * a 1.0 caller's structs are followed in memory by 0xFF bytes: the call only works if the library reads no more
 * than struct_size and gives the field it knows beyond that its default. A newer caller's larger structs work
 * when the extra bytes are zero; a set extra byte is read by the library that knows it and refused by the one
 * that does not. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "roialign/roialign.h"

static int failures = 0;
#define CHECK(cond)                                                                \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      fprintf(stderr, "%s:%d: CHECK failed: %s (%s)\n", __FILE__, __LINE__, #cond, \
              roialign_last_error());                                              \
      ++failures;                                                                  \
    }                                                                              \
  } while (0)

/* A struct of `size` bytes as a caller lays it out, followed by `tail` bytes of `fill`. */
typedef union {
  unsigned char bytes[1024];
  int64_t align_int; /* as aligned as any of the structs */
  void* align_pointer;
} buffer;

static void* Place(buffer* b, const void* s, size_t size, size_t tail, unsigned char fill, uint32_t struct_size) {
  memset(b->bytes, fill, sizeof(b->bytes));
  memcpy(b->bytes, s, size);
  memset(b->bytes + size, fill, tail);
  memcpy(b->bytes, &struct_size, sizeof(struct_size)); /* struct_size is the first field of every struct */
  return b->bytes;
}

enum { N = 1, C = 3, H = 5, W = 6, K = 2, PH = 2, PW = 2 };

int main(void) {
  float map[N * C * H * W], expected[K * C * PH * PW], out[K * C * PH * PW];
  const float rois[K * 5] = {0, 0.5f, 1.0f, 4.0f, 4.5f, 0, 2.0f, 0.0f, 6.0f, 5.0f};
  roialign_params params;
  roialign_inputs in;
  roialign_options options;
  roialign_kernel* kernel = NULL;
  buffer pb, ib, ob, tb;
  const uint32_t extra = 8; /* the future field: one int64 */
  int i;
  int64_t five = 5;

  for (i = 0; i < N * C * H * W; ++i) map[i] = (float)((i * 7) % 11) * 0.5f;
  roialign_params_init(&params);
  params.pooled_height = PH;
  params.pooled_width = PW;
  params.sampling_ratio = 2;
  roialign_inputs_init(&in);
  in.batch = N;
  in.channels = C;
  in.maps[0].data = map;
  in.maps[0].height = H;
  in.maps[0].width = W;
  in.rois = rois;
  in.num_rois = K;
  roialign_options_init(&options);
  options.num_threads = 1;

  /* The sizes this program was built with (1.3: params and inputs grew a double scale and double RoIs). */
  CHECK(sizeof(roialign_params) == 72 && sizeof(roialign_inputs) == 520 && sizeof(roialign_options) == 40);
  CHECK(roialign_select("host", &params, &kernel) == ROIALIGN_OK);
  CHECK(roialign_run(kernel, &in, expected, &options) == ROIALIGN_OK);
  roialign_kernel_free(kernel);
  kernel = NULL;

  /* A 1.0 caller: poison after each struct. */
  CHECK(roialign_select("host", Place(&pb, &params, sizeof(params), extra, 0xFF, sizeof(params)), &kernel) ==
        ROIALIGN_OK);
  memset(out, 0, sizeof(out));
  CHECK(roialign_run(kernel, Place(&ib, &in, sizeof(in), extra, 0xFF, sizeof(in)), out,
                     Place(&ob, &options, sizeof(options), extra, 0xFF, sizeof(options))) == ROIALIGN_OK);
  CHECK(memcmp(out, expected, sizeof(out)) == 0);

  /* A newer caller asking for nothing new: larger structs, zero extra bytes. */
  memset(out, 0, sizeof(out));
  CHECK(roialign_run(kernel, Place(&ib, &in, sizeof(in), extra, 0, sizeof(in) + extra), out,
                     Place(&ob, &options, sizeof(options), extra, 0, sizeof(options) + extra)) == ROIALIGN_OK);
  CHECK(memcmp(out, expected, sizeof(out)) == 0);

  /* A newer caller setting the new field: read by the library that knows it, refused by one that does not. The
   * output stays untouched either way. */
  memset(out, 0, sizeof(out));
  Place(&ib, &in, sizeof(in), extra, 0, sizeof(in) + extra);
  memcpy(ib.bytes + sizeof(in), &five, sizeof(five));
#ifdef ROIALIGN_ABI_TEST_FUTURE
  CHECK(roialign_run(kernel, (const roialign_inputs*)(void*)ib.bytes, out, NULL) == ROIALIGN_INVALID_ARGUMENT);
  CHECK(strstr(roialign_last_error(), "inputs->test_future_field is 5") != NULL);
#else
  CHECK(roialign_run(kernel, (const roialign_inputs*)(void*)ib.bytes, out, NULL) == ROIALIGN_UNSUPPORTED);
  CHECK(strstr(roialign_last_error(), "it needs a newer roialign") != NULL);
#endif
  for (i = 0; i < K * C * PH * PW; ++i) CHECK(out[i] == 0.0f);
  Place(&pb, &params, sizeof(params), extra, 0, sizeof(params) + extra);
  memcpy(pb.bytes + sizeof(params), &five, sizeof(five));
  roialign_kernel_free(kernel);
  kernel = (roialign_kernel*)(void*)&pb;
#ifdef ROIALIGN_ABI_TEST_FUTURE
  CHECK(roialign_select("host", (const roialign_params*)(void*)pb.bytes, &kernel) == ROIALIGN_INVALID_ARGUMENT);
#else
  CHECK(roialign_select("host", (const roialign_params*)(void*)pb.bytes, &kernel) == ROIALIGN_UNSUPPORTED);
#endif
  CHECK(kernel == NULL);

  /* A 1.2 caller's params end where 1.3's spatial_scale_f64 begins (48 bytes): the poison after them is not read
   * (as a double it would be a NaN scale, refused). */
  CHECK(roialign_select("host", Place(&pb, &params, 48, 8, 0xFF, 48), &kernel) == ROIALIGN_OK);
  roialign_kernel_free(kernel);
  kernel = NULL;
  /* A 1.3 caller's params end where 1.4's roi_kind begins (56 bytes): the poison after them is not read (as enums
   * it would be unknown values, refused). */
  CHECK(roialign_select("host", Place(&pb, &params, 56, 16, 0xFF, 56), &kernel) == ROIALIGN_OK);
  roialign_kernel_free(kernel);
  kernel = NULL;
  /* 1.4's fields are read: rotated RoIs with an angle unit, and a nonzero reserved field refused. */
  params.roi_kind = ROIALIGN_ROI_ROTATED;
  params.angle_unit = ROIALIGN_ANGLE_DEGREES;
  params.coordinate_mode = ROIALIGN_COORD_HALF_PIXEL_CENTERED;
  CHECK(roialign_select("host", &params, &kernel) == ROIALIGN_INVALID_ARGUMENT);
  params.coordinate_mode = ROIALIGN_COORD_LEGACY;
  params.reserved = 1;
  CHECK(roialign_select("host", &params, &kernel) == ROIALIGN_INVALID_ARGUMENT);
  CHECK(strstr(roialign_last_error(), "params->reserved is 1") != NULL);
  params.reserved = 0;
  CHECK(roialign_select("host", &params, &kernel) == ROIALIGN_OK);
  roialign_kernel_free(kernel);
  kernel = NULL;
  params.roi_kind = ROIALIGN_ROI_AXIS_ALIGNED;
  params.angle_unit = ROIALIGN_ANGLE_RADIANS;

  /* Sizes below 1.0's, unknown flags, a nonzero reserved field: refused, nothing written. */
  CHECK(roialign_select("host", Place(&pb, &params, sizeof(params), 0, 0, 44), &kernel) == ROIALIGN_INVALID_ARGUMENT);
  CHECK(strstr(roialign_last_error(), "params->struct_size is 44; it must be 48") != NULL);
  CHECK(roialign_select("host", Place(&pb, &params, sizeof(params), 0, 0, 0), &kernel) == ROIALIGN_INVALID_ARGUMENT);
  params.flags = 2u; /* 1.2 defines bit 0 (ROIALIGN_PARAMS_BACKWARD) only */
  CHECK(roialign_select("host", &params, &kernel) == ROIALIGN_UNSUPPORTED);
  CHECK(strstr(roialign_last_error(), "params->flags is 2") != NULL);
  params.flags = 0u;
  CHECK(roialign_select("host", &params, &kernel) == ROIALIGN_OK);
  options.reserved = 3;
  CHECK(roialign_run(kernel, &in, out, &options) == ROIALIGN_INVALID_ARGUMENT);
  options.reserved = 0;
  options.workspace_size = 64; /* a size without a workspace is malformed (1.1: workspaces are served) */
  CHECK(roialign_run(kernel, &in, out, &options) == ROIALIGN_INVALID_ARGUMENT);
  options.workspace_size = 0;
  for (i = 0; i < K * C * PH * PW; ++i) CHECK(out[i] == 0.0f);
  CHECK(roialign_run(kernel, &in, out, NULL) == ROIALIGN_OK); /* NULL options: the defaults */
  CHECK(memcmp(out, expected, sizeof(out)) == 0);
  roialign_kernel_free(kernel);

  /* The backward (since 1.2) from a 1.0-sized caller: the flag in the 1.0 params, the 1.0 inputs and options. Every
   * element of dX is written: the RoIs' bins cover the map's pixels they reach, and the gradient is all ones. */
  {
    float dy[K * C * PH * PW], dx[N * C * H * W];
    double total = 0.0;
    for (i = 0; i < K * C * PH * PW; ++i) dy[i] = 1.0f;
    for (i = 0; i < N * C * H * W; ++i) dx[i] = -1.0f;
    params.flags = ROIALIGN_PARAMS_BACKWARD;
    CHECK(roialign_select("generic", &params, &kernel) == ROIALIGN_OK);
    params.flags = 0u;
    CHECK(roialign_run_backward(kernel, Place(&ib, &in, sizeof(in), 0, 0, sizeof(in)), dy, dx,
                                Place(&ob, &options, sizeof(options), 0, 0, sizeof(options))) == ROIALIGN_OK);
    /* AVG: each bin hands its dY of 1 out in weights that sum to 1 (no sample of these RoIs is outside the map). */
    for (i = 0; i < N * C * H * W; ++i) {
      CHECK(dx[i] >= 0.0f);
      total += dx[i];
    }
    CHECK(total > K * C * PH * PW - 1e-3 && total < K * C * PH * PW + 1e-3);
    roialign_kernel_free(kernel);
  }

  /* An out struct: the library writes no byte past the caller's struct_size. */
  {
    roialign_target_info info;
    roialign_target_info_init(&info);
    Place(&tb, &info, sizeof(info), extra, 0xEE, sizeof(info));
    CHECK(roialign_query_target("host", (roialign_target_info*)(void*)tb.bytes) == ROIALIGN_OK);
    memcpy(&info, tb.bytes, sizeof(info));
    CHECK(info.struct_size == sizeof(info) && (info.layouts & 3u) == 3u && info.preferred_layout == ROIALIGN_LAYOUT_NHWC);
    for (i = 0; i < (int)extra; ++i) CHECK(tb.bytes[sizeof(info) + (size_t)i] == 0xEE);
  }

  /* The names lists: NUL-separated, an empty name last; a short buffer is left alone and told the size. */
  {
    char names[1024];
    size_t needed = 0, total = 0;
    const char* p;
    int host = 0;
    CHECK(roialign_known_targets(NULL, 0, &needed) == ROIALIGN_OK && needed > 1 && needed <= sizeof(names));
    memset(names, 'x', sizeof(names));
    CHECK(roialign_known_targets(names, needed - 1, &total) == ROIALIGN_OK && total == needed && names[0] == 'x');
    CHECK(roialign_known_targets(names, sizeof(names), &total) == ROIALIGN_OK && total == needed);
    for (p = names; *p != '\0'; p += strlen(p) + 1) host += strcmp(p, "host") == 0;
    CHECK(host == 1 && (size_t)(p - names) + 1 == needed);
    CHECK(roialign_implementation_names("generic", names, sizeof(names), &needed) == ROIALIGN_OK);
    CHECK(strcmp(names, "roi_align_nhwc.reference") == 0 || strcmp(names, "roi_align_nchw.reference") == 0);
    CHECK(roialign_implementation_names("no-such-target", names, sizeof(names), &needed) == ROIALIGN_OK &&
          needed == 1 && names[0] == '\0');
  }

  CHECK(roialign_version() == ROIALIGN_VERSION);
  if (failures == 0) printf("abi_test: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
