// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// libFuzzer target over the C API: random attributes (every dtype, axis-aligned and rotated RoIs), shapes, RoIs
// (NaN, +-inf, huge, negative, inverted), batch indices, RoI formats, targets and thread counts, on exactly-sized heap buffers (ASan guards
// them). Every accepted call must match the reference; every refused call must leave the output untouched. The
// backward of each call must accept what the forward accepts, and leave dX untouched when it refuses.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "roialign/roialign.h"
#include "tests/fuzz/fuzz_support.h"

using namespace roialign_fuzz;  // NOLINT: a test's own helpers

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader r{data, size};
  roialign_params params;
  roialign_params_init(&params);
  params.pooled_height = r.U8() % 5;  // 0 is invalid on purpose
  params.pooled_width = r.U8() % 5 + (r.U8() % 16 == 0 ? 70000 : 0);
  static const float kScales[] = {1.0f, 0.5f, 0.25f, 0.0f, -1.0f, NAN, INFINITY, 1e-30f, 1e30f};
  params.spatial_scale = kScales[r.U8() % 9];
  params.sampling_ratio = static_cast<int8_t>(r.U8()) % 6;
  SetEnum(&params.coordinate_mode, r.U8() % 5);  // 4 is invalid on purpose
  SetEnum(&params.pool_mode, r.U8() % 4);
  SetEnum(&params.layout, r.U8() % 6);  // 5 is invalid on purpose
  SetEnum(&params.dtype, DType(r));
  // F64's scale in double: mostly 0 (spatial_scale then), sometimes one of the scales above (refused for the other
  // dtypes).
  if (r.U8() % 4 == 0) params.spatial_scale_f64 = kScales[r.U8() % 9];
  // Rotated RoIs (since 1.4) a third of the time, with their angle unit and direction (3: invalid on purpose);
  // they take HALF_PIXEL or LEGACY only, and the unit and direction are refused on axis-aligned kernels.
  const uint8_t kind = r.U8();
  SetEnum(&params.roi_kind, kind % 3 == 0 ? 1 : (kind == 255 ? 2 : 0));
  SetEnum(&params.angle_unit, r.U8() % 16 == 0 ? 3 : (params.roi_kind == ROIALIGN_ROI_ROTATED ? kind % 2 : 0));
  SetEnum(&params.rotation, params.roi_kind == ROIALIGN_ROI_ROTATED ? (kind >> 1) % 2 : (kind == 7 ? 1 : 0));
  const bool rotated = params.roi_kind == ROIALIGN_ROI_ROTATED;
  static const char* const kTargets[] = {"host", "portable", "x86-sse4", "arm-neon", "generic", "bogus"};
  const char* target = kTargets[r.U8() % 6];
  const int64_t N = r.U8() % 4 - (r.U8() % 32 == 0 ? 5 : 0), C = r.U8() % 21, H = r.U8() % 13, W = r.U8() % 13;
  const int64_t K = r.U8() % 9;
  const bool k4 = r.U8() & 1;
  const int32_t threads = r.U8() % 4;

  roialign_kernel* kernel = nullptr;
  if (roialign_select(target, &params, &kernel) != ROIALIGN_OK) {
    if (kernel != nullptr) Fail("failed select returned a kernel");
    return 0;
  }
  const int64_t CS = StoredChannels(params.layout, C);  // the blocked layouts' padded lanes included
  const int64_t map_elems = N > 0 ? N * CS * H * W : 0;
  std::vector<unsigned char> map(static_cast<size_t>(map_elems) * ElementBytes(params.dtype));
  FillMap(params.dtype, map.data(), map.size() / ElementBytes(params.dtype));
  // Rows of (batch,) x1, y1, x2, y2, or (batch,) cx, cy, w, h, angle.
  const int64_t values = rotated ? 5 : 4, columns = values + (k4 ? 0 : 1);
  std::vector<float> rois(static_cast<size_t>(K * columns));
  std::vector<int64_t> idx(static_cast<size_t>(K));
  for (int64_t k = 0; k < K; ++k) {
    if (k4) {
      const uint8_t b = r.U8();
      idx[k] = b < 200 ? b % 4 : (b < 230 ? -static_cast<int64_t>(b) : INT64_MAX - b);
    } else {
      const uint8_t b = r.U8();
      rois[columns * k] = b < 200 ? static_cast<float>(b % 4) : (b < 220 ? 0.5f : (b < 240 ? NAN : -1.0f));
    }
    for (int i = 0; i < values; ++i) rois[columns * k + (k4 ? 0 : 1) + i] = r.Coordinate();
  }
  // F64 reads its RoIs in double: mostly from rois_f64 alone; sometimes the float ones too, or only (refused).
  const std::vector<double> rois64 = RoisF64(r, rois);
  const uint8_t which = r.U8() % 8;
  const bool f64 = params.dtype == ROIALIGN_DTYPE_F64;
  const float* const rois32_arg = rois.empty() || (f64 && which > 1) ? nullptr : rois.data();
  const double* const rois64_arg = rois64.empty() || (!f64 && which > 0) || (f64 && which == 0) ? nullptr
                                                                                                 : rois64.data();
  const int64_t out_elems = K * CS * params.pooled_height * params.pooled_width;
  // Exact size: ASan flags any overrun.
  std::vector<unsigned char> out(static_cast<size_t>(out_elems) * ElementBytes(params.dtype), kCanary);
  const roialign_status s = RunOne(kernel, map.empty() ? nullptr : map.data(), N, C, H, W, rois32_arg,
                                   k4 ? idx.data() : nullptr, K, out.empty() ? nullptr : out.data(), threads,
                                   rois64_arg);
  if (s != ROIALIGN_OK) {
    for (unsigned char v : out) {
      if (v != kCanary) Fail("refused call wrote to the output");
    }
    if (std::strlen(roialign_last_error()) == 0) Fail("refused call without a message");
  } else if (std::strstr(roialign_kernel_name(kernel), ".reference") == nullptr) {
    roialign_kernel* ref = nullptr;
    if (roialign_select("generic", &params, &ref) != ROIALIGN_OK) Fail("reference refused what a kernel accepted");
    std::vector<unsigned char> want(out.size(), 0);
    if (RunOne(ref, map.empty() ? nullptr : map.data(), N, C, H, W, rois32_arg, k4 ? idx.data() : nullptr, K,
               want.empty() ? nullptr : want.data(), 1, rois64_arg) != ROIALIGN_OK) {
      Fail("reference refused data a kernel accepted");
    }
    for (size_t i = 0; i < static_cast<size_t>(out_elems); ++i) {
      const float got = Load(params.dtype, out.data(), i), ref = Load(params.dtype, want.data(), i);
      if (!Agrees(params.dtype, got, ref)) Fail("kernel disagrees with reference");
    }
    roialign_kernel_free(ref);
  }
  roialign_kernel_free(kernel);

  // The backward of the same call (the output as dY) refuses exactly what the forward refused, leaving dX alone.
  params.flags = ROIALIGN_PARAMS_BACKWARD;
  roialign_kernel* backward = nullptr;
  if (roialign_select("generic", &params, &backward) != ROIALIGN_OK) Fail("no backward for what a kernel accepted");
  roialign_inputs in;
  roialign_inputs_init(&in);
  in.batch = N;
  in.channels = C;
  in.maps[0] = {map.empty() ? nullptr : map.data(), H, W, {0, 0, 0, 0}};
  in.rois = rois32_arg;
  in.rois_f64 = rois64_arg;
  in.batch_indices = k4 ? idx.data() : nullptr;
  in.num_rois = K;
  roialign_options options;
  roialign_options_init(&options);
  options.num_threads = threads;
  std::vector<unsigned char> dx(map.size(), kCanary);
  const roialign_status b = roialign_run_backward(backward, &in, out.empty() ? nullptr : out.data(),
                                                  dx.empty() ? nullptr : dx.data(), &options);
  if ((b == ROIALIGN_OK) != (s == ROIALIGN_OK)) Fail("the backward and the forward disagree on the data");
  if (b != ROIALIGN_OK) {
    for (unsigned char v : dx) {
      if (v != kCanary) Fail("refused backward wrote to dX");
    }
  }
  roialign_kernel_free(backward);
  return 0;
}
