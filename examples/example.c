/* Copyright 2026 The roialign Authors
 * SPDX-License-Identifier: Apache-2.0 */
/* The same from C: select, run, report errors through roialign_last_error(). */
#include <stdio.h>

#include "roialign/roialign.h"

int main(void) {
  float map[4 * 8 * 8];
  float rois[5] = {0, 1.0f, 1.0f, 6.0f, 5.0f};
  float out[4 * 2 * 2];
  roialign_params params = {2, 2, 1.0f, 0, ROIALIGN_COORD_HALF_PIXEL, ROIALIGN_POOL_AVG, ROIALIGN_LAYOUT_NCHW,
                            ROIALIGN_DTYPE_F32};
  roialign_kernel* kernel = NULL;
  int i;
  for (i = 0; i < 4 * 8 * 8; ++i) map[i] = (float)(i % 8);
  if (roialign_select("host", &params, &kernel) != ROIALIGN_OK) {
    fprintf(stderr, "select: %s\n", roialign_last_error());
    return 1;
  }
  if (roialign_run(kernel, map, 1, 4, 8, 8, rois, NULL, 1, out, 0) != ROIALIGN_OK) {
    fprintf(stderr, "run: %s\n", roialign_last_error());
    roialign_kernel_free(kernel);
    return 1;
  }
  printf("C API: kernel %s, out[0] = %.4f\n", roialign_kernel_name(kernel), out[0]);
  roialign_kernel_free(kernel);
  return 0;
}
