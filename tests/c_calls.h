// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The C API's structs filled in one expression, for the C++ tests that call roialign_* directly.
#ifndef ROIALIGN_TESTS_C_CALLS_H_
#define ROIALIGN_TESTS_C_CALLS_H_

#include <cstdint>

#include "roialign/roialign.h"

namespace roialign_c {

inline roialign_params Params(int64_t pooled_height, int64_t pooled_width, float spatial_scale,
                              int32_t sampling_ratio, roialign_coordinate_mode coordinate_mode,
                              roialign_pool_mode pool_mode, roialign_layout layout, roialign_dtype dtype) {
  roialign_params p;
  roialign_params_init(&p);
  p.pooled_height = pooled_height;
  p.pooled_width = pooled_width;
  p.spatial_scale = spatial_scale;
  p.sampling_ratio = sampling_ratio;
  p.coordinate_mode = coordinate_mode;
  p.pool_mode = pool_mode;
  p.layout = layout;
  p.dtype = dtype;
  return p;
}

// One map's call, as roialign_run takes it.
inline roialign_inputs Inputs(const void* map, int64_t batch, int64_t channels, int64_t height, int64_t width,
                              const float* rois, const int64_t* batch_indices, int64_t num_rois) {
  roialign_inputs in;
  roialign_inputs_init(&in);
  in.batch = batch;
  in.channels = channels;
  in.maps[0].data = map;
  in.maps[0].height = height;
  in.maps[0].width = width;
  in.rois = rois;
  in.batch_indices = batch_indices;
  in.num_rois = num_rois;
  return in;
}

inline roialign_options Threads(int32_t num_threads) {
  roialign_options o;
  roialign_options_init(&o);
  o.num_threads = num_threads;
  return o;
}

inline roialign_options OnPool(const roialign_threadpool* pool) {
  roialign_options o;
  roialign_options_init(&o);
  o.threadpool = pool;
  return o;
}

// roialign_run of one map on `num_threads` threads.
inline roialign_status Run(const roialign_kernel* kernel, const void* map, int64_t batch, int64_t channels,
                           int64_t height, int64_t width, const float* rois, const int64_t* batch_indices,
                           int64_t num_rois, void* output, int32_t num_threads) {
  const roialign_inputs in = Inputs(map, batch, channels, height, width, rois, batch_indices, num_rois);
  const roialign_options options = Threads(num_threads);
  return roialign_run(kernel, &in, output, &options);
}

// The same on a pool.
inline roialign_status RunOnPool(const roialign_kernel* kernel, const void* map, int64_t batch, int64_t channels,
                                 int64_t height, int64_t width, const float* rois, const int64_t* batch_indices,
                                 int64_t num_rois, void* output, const roialign_threadpool* pool) {
  const roialign_inputs in = Inputs(map, batch, channels, height, width, rois, batch_indices, num_rois);
  const roialign_options options = OnPool(pool);
  return roialign_run(kernel, &in, output, &options);
}

}  // namespace roialign_c

#endif  // ROIALIGN_TESTS_C_CALLS_H_
