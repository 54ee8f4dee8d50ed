// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// A call's table of its rotated RoIs' sample taps (docs/semantics.md#rotated-rois), computed once per call before
// its tasks run, so that no task finds a sample's taps: by RoI index, each RoI's offset into the samples and the map
// rows its samples reach (of the RoI, of each bin row, of each bin: RowExtent), then every sample of the RoIs the
// problem runs, bin-major (RotatedSampleOf, in the precision of the call's geometry). Kernels and drivers read it
// through Problem::rotated_first, rotated_taps and rotated_extents.
#ifndef ROIALIGN_EXECUTION_ROTATED_TABLE_H_
#define ROIALIGN_EXECUTION_ROTATED_TABLE_H_

#include <cstdint>

#include "execution/parallel.h"
#include "kernels/problem.h"

namespace roialign {
namespace internal {

// The table's bytes for `problem`'s rotated RoIs, or 0 where it would pass 64 MiB (large adaptive grids: the
// tasks then find the taps themselves) or the map's rows or columns do not fit its 32-bit indices.
int64_t RotatedTableBytes(const Problem& problem);

// Fills the table in `memory` (RotatedTableBytes of it, aligned for doubles), a chunk of RoIs per task on
// `threads` threads, and points `problem` at it.
void FillRotatedTable(int threads, const Threading& threading, unsigned char* memory, Problem* problem) noexcept;

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_ROTATED_TABLE_H_
