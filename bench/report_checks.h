// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The layout report's checks before timing: a path runs, and its output matches the reference, or the report
// exits with a message. No figure is reported for a path that gives a wrong answer.
#ifndef ROIALIGN_BENCH_REPORT_CHECKS_H_
#define ROIALIGN_BENCH_REPORT_CHECKS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/conversions.h"
#include "core/enums.h"
#include "core/library.h"

namespace roialign {
namespace bench {

// Runs `run` once, exiting with its message if it fails.
void RunOrExit(const std::function<Status()>& run);

// Runs `path` once, then exits unless its output `out` (num_rois x C x pooled x pooled f32, in `layout`) is within
// `tolerance` of the reference output `ref` (in `ref_layout`).
void CheckOrExit(const std::string& what, const std::function<Status()>& path, const float* out, Layout layout,
                 const float* ref, int64_t num_rois, int64_t channels, int64_t pooled,
                 Layout ref_layout = Layout::kNCHW, double tolerance = 1e-4);

// Runs the transform `path` once, then exits unless the scratch's maps in `to` hold the NCHW maps `nchw` exactly.
void CheckTransformOrExit(const std::string& workload, const std::function<Status()>& path,
                          const ConversionScratch& scratch, Layout to, const MapShape& shape,
                          const std::vector<const void*>& nchw);

// Runs the backward `path` once, then exits unless its dX (`dx[l]` per level, C x heights[l] x widths[l] f32 in
// `layout`) holds the reference's (`ref[l]`, NCHW) bits: every backward kernel gives the reference's
// (docs/semantics.md#backward).
void CheckBackwardOrExit(const std::string& what, const std::function<Status()>& path, Layout layout,
                         const std::vector<const float*>& dx, const std::vector<const float*>& ref, int64_t channels,
                         const std::vector<int64_t>& heights, const std::vector<int64_t>& widths);

}  // namespace bench
}  // namespace roialign

#endif  // ROIALIGN_BENCH_REPORT_CHECKS_H_
