// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The per-RoI tiles of planar maps, planned once per call: each RoI's rectangles of bins that fit a tile, their
// distinct tap pixels and their taps remapped into the tile (Plan's CallGeometry), so that a task only copies and
// pools.
#ifndef ROIALIGN_EXECUTION_TILE_PLAN_H_
#define ROIALIGN_EXECUTION_TILE_PLAN_H_

#include <cstdint>
#include <memory_resource>
#include <vector>

#include "execution/plan.h"
#include "kernels/problem.h"

namespace roialign {
namespace internal {

// Plans the tiles of RoIs `rois` (indices into the problem's RoIs), whose taps the plan's geometry already holds.
// Throws std::bad_alloc.
void PlanTiles(const Problem& problem, const std::pmr::vector<int64_t>& rois, Plan* plan);

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_TILE_PLAN_H_
