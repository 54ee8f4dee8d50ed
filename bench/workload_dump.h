// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The workloads as files for bench/peers.py (--dump-dir): each workload's maps, RoIs, our NCHW result and a JSON
// description of its parameters, so that every peer runs the very data the report timed and is checked against us.
#ifndef ROIALIGN_BENCH_WORKLOAD_DUMP_H_
#define ROIALIGN_BENCH_WORKLOAD_DUMP_H_

#include <string>
#include <vector>

#include "bench/workloads.h"

namespace roialign {
namespace bench {

// Writes DIR/NAME.json, .map.f32, .rois.f32, .ref.f32 (and, for rotated RoIs, the same boxes axis-aligned and our
// result on them: .rois_axis.f32, .ref_axis.f32), our result from `target`'s NCHW kernel.
void DumpWorkload(const std::string& dir, const WorkloadSpec& spec, const Workload& w, const char* target,
                  const std::vector<int>& threads);

// Writes DIR/fpn.json, one .mapL.f32 per level, .rois.f32 and .ref.f32, our result from `target`'s multi-level
// NCHW kernel.
void DumpPyramid(const std::string& dir, const PyramidWorkload& w, const char* target,
                 const std::vector<int>& threads);

}  // namespace bench
}  // namespace roialign

#endif  // ROIALIGN_BENCH_WORKLOAD_DUMP_H_
