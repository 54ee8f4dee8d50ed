// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// What a built-in kernel receives: the call's validated data (immutable for the whole call) and a per-pass view
// that the execution layer's plan fills. Kernels assert preconditions and never re-check the data.
#ifndef ROIALIGN_KERNELS_PROBLEM_H_
#define ROIALIGN_KERNELS_PROBLEM_H_

#include <cstdint>
#include <vector>

#include "kernels/merged_taps.h"
#include "kernels/roi_geometry.h"
#include "core/library.h"

namespace roialign {
namespace internal {

// One call, validated (execution/validate_data.h). Input and output are in params.dtype and params.layout.
struct Problem {
  Params params;
  const void* input = nullptr;
  int64_t batch = 0, channels = 0, height = 0, width = 0;
  const float* rois = nullptr;
  const int64_t* batch_indices = nullptr;  // null: rois are [K,5]
  int64_t num_rois = 0;
  void* output = nullptr;
  int64_t max_grid_h = 0, max_grid_w = 0;  // largest sampling grid of any RoI (sizes scratch)
  double footprint_pixels = 0;             // sum over RoIs of an upper bound on the pixels their taps read
  // The RoIs the call computes: null for all of [0, num_rois), else `subset_size` indices into rois and output
  // (a multi-level call runs each level's RoIs on that level's map, writing their outputs in place). The planner
  // reads it; kernels compute whichever RoI indices the plan hands them. max_grid_* and footprint_pixels then
  // cover the subset only.
  const int64_t* roi_subset = nullptr;
  int64_t subset_size = 0;
};

// How many RoIs the call computes, and the i-th of them.
inline int64_t RunCount(const Problem& p) { return p.roi_subset ? p.subset_size : p.num_rois; }
inline int64_t RunRoi(const Problem& p, int64_t i) { return p.roi_subset ? p.roi_subset[i] : i; }

// A run of merged taps in CallGeometry::merged.
struct TapRun {
  int64_t begin = 0, count = 0;
};

// One RoI's sampling, computed once per call by the planner.
struct RoiSampling {
  int64_t batch = 0;
  AxisGeometry gy, gx;
  int64_t y = 0, x = 0;  // its PH * gy.grid y taps start at CallGeometry::y[y], its PW * gx.grid x taps at x[x]
  int64_t runs = 0;      // AVG: the merged taps of its PH bin rows, then of its PW bin columns, at runs[runs]
  // With bands: whether its sample rows split by band (kernels/row_bands.h), and the bands they meet; else it
  // runs whole in band 0.
  bool split = false;
  int64_t first_band = 0, last_band = 0;
};

// Every computed RoI's taps, and for channels-last maps AVG's merged taps with the map's strides applied,
// indexed by RoI index.
struct CallGeometry {
  std::vector<RoiSampling> rois;
  std::vector<AxisTap> y, x;
  std::vector<TapRun> runs;
  std::vector<MergedTap> merged;
};

// What one pass over the RoIs processes. The default pass is the whole call: every sample row of every bin.
struct Pass {
  const CallGeometry* geometry = nullptr;
  // Row bands (kernels/row_bands.h): when band_rows > 0, only the sample rows in band `band` of num_bands bands
  // of band_rows map rows; bins carry partial state from band to band in `partial`.
  int64_t band_rows = 0, band = 0, num_bands = 1;
  // F32 storage for bins' partial state, laid out like the output. Kernels also use it between the sample-row
  // chunks of one bin. When the output is f32 it is the output itself: same bits, no extra memory traffic.
  float* partial = nullptr;
  // Finished bins may be written with non-temporal stores (the output is too large to stay in cache, and
  // ordinary stores would first read every output line from memory).
  bool stream_output = false;
  // When set: map rows [rows_begin, rows_end) of image `image`, all channels, channels-last
  // ((rows_end - rows_begin) x W x C elements of params.dtype), prepared once for all of that image's RoIs. Only
  // RoIs of that image that RoiBands can split run in such a pass, and their band's taps all lie in those rows.
  const void* channels_last_rows = nullptr;
  int64_t image = 0, rows_begin = 0, rows_end = 0;
};

struct Scratch;

// Computes output channels [c_begin, c_end) of RoIs [roi_begin, roi_end) for one pass. Called concurrently on
// disjoint ranges, each caller with its own scratch.
using RoiAlignFn = void (*)(const Problem& problem, const Pass& pass, int64_t roi_begin, int64_t roi_end,
                            int64_t c_begin, int64_t c_end, Scratch& scratch);

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_KERNELS_PROBLEM_H_
