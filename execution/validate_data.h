// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Data validation at Run (docs/errors-and-limits.md): every data-dependent precondition in one pass, before any
// write, so that the kernels never re-check and the output is untouched on error.
#ifndef ROIALIGN_EXECUTION_VALIDATE_DATA_H_
#define ROIALIGN_EXECUTION_VALIDATE_DATA_H_

#include <memory_resource>
#include <vector>

#include "kernels/problem.h"
#include "core/library.h"

namespace roialign {
namespace internal {

// Checks every data-dependent precondition of a call with attributes `params` (already validated at selection)
// and, on success, fills `problem` (including the largest sampling grid and the RoIs' footprint) and `axes`, each
// RoI's geometry, which `problem` points to. Writes nothing else. Messages name the offending RoI. Throws
// std::bad_alloc.
// The RoIs' geometry is in precision R: double for dtype F64, float for the others.
template <typename R>
Status ValidateData(const Params& params, const Inputs& inputs, void* output, std::pmr::vector<RoiAxesOf<R>>* axes,
                    Problem* problem);

// The pieces of ValidateData, which the run path (execution/run.cc) calls map by map and RoI by RoI on its level.
// Shapes, sizes and pointers of one map's call.
Status CheckShape(const Params& params, const Inputs& inputs, const void* output);
// What checked RoIs add up to: the largest sampling grid and the pixels their taps read.
struct RoiTotals {
  int64_t max_grid_h = 0, max_grid_w = 0;
  double footprint = 0;
};
// Checks every RoI of a call on one map in index order (batch index, finite coordinates, sampling limits under
// params.spatial_scale on inputs' map), adds it to `totals` and writes its geometry to axes[k]; `work` is the
// call's running work, capped by ROIALIGN_MAX_WORK_PER_CALL. Returns the first refusal.
// R: as ValidateData's.
template <typename R>
Status CheckRois(const Params& params, const Inputs& inputs, RoiTotals* totals, int64_t* work, RoiAxesOf<R>* axes);
// A multi-level call's maps as its RoIs are checked on them: map l's attributes, data and totals, and how many RoIs
// each pools (counts[num_maps]: those no map pools).
struct RoiLevels {
  const Params* const* params;
  const Inputs* const* inputs;
  RoiTotals* const* totals;
  size_t num_maps;
  int64_t* counts;
};
// CheckRois with RoI k on map levels[k]; a RoI of level kNotPooled is checked on map 0 and only counted.
template <typename R>
Status CheckRoisOnLevels(const RoiLevels& maps, const int32_t* levels, int64_t num_rois, int64_t* work,
                         RoiAxesOf<R>* axes);
// The problem of a checked call, its RoIs' geometry at `axes` or, for F64, `axes_f64` (indexed by RoI).
void FillProblem(const Params& params, const Inputs& inputs, void* output, const RoiTotals& totals, const RoiAxes* axes,
                 const RoiAxesOf<double>* axes_f64, Problem* problem);

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_VALIDATE_DATA_H_
