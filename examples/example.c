/* Copyright 2026 The roialign Authors
 * SPDX-License-Identifier: Apache-2.0 */
/* The same from C: select, run, report errors through roialign_last_error(). */
#include <stdio.h>

#include "roialign/roialign.h"

int main(void) {
  float map[4 * 8 * 8];
  float rois[5] = {0, 1.0f, 1.0f, 6.0f, 5.0f};
  float out[4 * 2 * 2];
  roialign_params params;
  roialign_inputs in;
  roialign_kernel* kernel = NULL;
  int i;
  for (i = 0; i < 4 * 8 * 8; ++i) map[i] = (float)(i % 8);
  roialign_params_init(&params); /* the defaults, then what differs */
  params.pooled_height = 2;
  params.pooled_width = 2;
  params.coordinate_mode = ROIALIGN_COORD_HALF_PIXEL;
  roialign_inputs_init(&in);
  in.batch = 1;
  in.channels = 4;
  in.maps[0].data = map;
  in.maps[0].height = 8;
  in.maps[0].width = 8;
  in.rois = rois; /* [K,5]: batch, x1, y1, x2, y2 */
  in.num_rois = 1;
  if (roialign_select("host", &params, &kernel) != ROIALIGN_OK) {
    fprintf(stderr, "select: %s\n", roialign_last_error());
    return 1;
  }
  if (roialign_run(kernel, &in, out, NULL /* default options: OpenMP's threads */) != ROIALIGN_OK) {
    fprintf(stderr, "run: %s\n", roialign_last_error());
    roialign_kernel_free(kernel);
    return 1;
  }
  printf("C API: kernel %s, out[0] = %.4f\n", roialign_kernel_name(kernel), out[0]);
  roialign_kernel_free(kernel);
  return 0;
}
