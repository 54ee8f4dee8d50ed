/* Copyright 2026 The roialign Authors
 * SPDX-License-Identifier: Apache-2.0 */
/* An engine that owns its threads: it runs roialign on its own worker pool, so roialign opens no thread of its
 * own (no OpenMP region) inside the engine's process. */
#include <stdio.h>

#include "roialign/roialign.h"
#include "worker_pool.h"

int main(void) {
  enum { C = 32, H = 40, W = 48, K = 64 };
  static float map[C * H * W];
  static float out[K * C * 7 * 7];
  float rois[K * 5];
  roialign_params params;
  roialign_inputs in;
  roialign_options options;
  roialign_kernel* kernel = NULL;
  worker_pool* pool = worker_pool_create(3);
  roialign_threadpool threads;
  int i, status = 0;
  roialign_params_init(&params);
  params.spatial_scale = 0.25f;
  params.sampling_ratio = 2;
  params.coordinate_mode = ROIALIGN_COORD_HALF_PIXEL;
  for (i = 0; i < C * H * W; ++i) map[i] = (float)(i % 13) * 0.25f;
  for (i = 0; i < K; ++i) {
    rois[5 * i] = 0.0f;
    rois[5 * i + 1] = (float)(i % 8) * 20.0f;
    rois[5 * i + 2] = (float)(i / 8) * 18.0f;
    rois[5 * i + 3] = rois[5 * i + 1] + 40.0f;
    rois[5 * i + 4] = rois[5 * i + 2] + 30.0f;
  }
  if (pool == NULL) {
    fprintf(stderr, "could not start the worker pool\n");
    return 1;
  }
  threads = worker_pool_interface(pool);
  roialign_inputs_init(&in);
  in.batch = 1;
  in.channels = C;
  in.maps[0].data = map;
  in.maps[0].height = H;
  in.maps[0].width = W;
  in.rois = rois;
  in.num_rois = K;
  roialign_options_init(&options);
  options.threadpool = &threads; /* every parallel step on the engine's workers */
  if (roialign_select("host", &params, &kernel) != ROIALIGN_OK ||
      roialign_run(kernel, &in, out, &options) != ROIALIGN_OK) {
    fprintf(stderr, "roialign: %s\n", roialign_last_error());
    status = 1;
  } else {
    printf("engine pool: kernel %s on %d workers, out[0] = %.4f\n", roialign_kernel_name(kernel),
           threads.num_threads, out[0]);
  }
  roialign_kernel_free(kernel);
  worker_pool_destroy(pool);
  return status;
}
