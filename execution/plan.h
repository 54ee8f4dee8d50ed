// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The execution plan of one call: a plain function of the validated problem, what the kernel lets the planner
// do, and the threads it may use. Run executes exactly this plan; tests build plans directly (with forced bands) and
// execute them to cover every path whatever the heuristics decide.
#ifndef ROIALIGN_EXECUTION_PLAN_H_
#define ROIALIGN_EXECUTION_PLAN_H_

#include <cstdint>
#include <vector>

#include "execution/parallel.h"
#include "kernels/kernel_descriptor.h"
#include "kernels/problem.h"

namespace roialign {
namespace internal {

// One pass over a subset of the RoIs: all their bins, or the sample rows of one band of map rows.
struct PlannedPass {
  int64_t band = 0;  // with Plan::band_rows > 0: the band this pass processes
  // Planar kernels: first make rows [rows_begin, rows_end) of image `image` channels-last for this pass.
  bool transform = false;
  int64_t image = 0, rows_begin = 0, rows_end = 0;
  std::vector<int64_t> rois;  // in locality order
  int64_t band_rows = 0;      // 0: whole bins (Pass::band_rows)
};

struct Plan {
  CallGeometry geometry;  // every RoI's taps, computed once for the call
  int threads = 1;
  // Tasks are (channel block, RoI) pairs, block-major: consecutive tasks share a block and follow `rois`.
  int64_t channels_per_task = 0, channel_blocks = 1;
  int64_t band_rows = 0, num_bands = 1;  // band_rows 0: no bands
  std::vector<PlannedPass> passes;       // run one after another (bins carry partial state between bands)
  bool stream_output = false;            // non-temporal stores for finished bins
  // Bins keep partial state in the output itself (it is f32); otherwise in f32 working memory.
  bool partial_in_output = true;
  int64_t transform_elements = 0;  // size of the channels-last band buffer
};

// The plan Run executes: RoIs in locality order; row bands when the RoIs share pixels of a map larger than a
// band; the band transform for planar kernels when the RoIs' footprint reaches a quarter of the map; channel
// blocks; streaming stores for outputs larger than the last-level cache. Throws std::bad_alloc.
Plan MakePlan(const Problem& problem, const PlannerNeeds& needs, const Threading& threading);

// The plan with bands of `band_rows` map rows, whatever the heuristics say: channels-last kernels read the bands
// in place, planar kernels through the band transform (RoIs that cannot be split by band run on tiles after the
// bands). For tests and for MakePlan. Throws std::bad_alloc.
Plan MakeBandPlan(const Problem& problem, const PlannerNeeds& needs, const Threading& threading,
                  int64_t band_rows);

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_PLAN_H_
