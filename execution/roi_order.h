// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The order in which a plan visits RoIs. It never changes results (every output is computed the same way in any
// order); it decides how often the same map pixels are fetched from beyond L2.
#ifndef ROIALIGN_EXECUTION_ROI_ORDER_H_
#define ROIALIGN_EXECUTION_ROI_ORDER_H_

#include <cstdint>
#include <memory_resource>

#include "kernels/problem.h"

namespace roialign {
namespace internal {

// Position of cell (x, y) along the Hilbert curve that fills a 2^bits x 2^bits grid (bits in [1, 16]). Cells
// consecutive on the curve are neighbours on the grid, and any run of the curve stays within a compact region.
uint64_t HilbertIndex(int bits, uint32_t x, uint32_t y);

// The RoIs the problem runs (its subset, or all), grouped by image and, within an image, along the Hilbert curve
// through their box centres. A detector's RoIs arrive in score order, scattered over the map; along the curve,
// consecutive RoIs cover nearby pixels in both directions, so the pixels they share are still in L2. (Sorting by
// rows alone keeps a strip of the map as wide as the image, several MB for 256 channels, so pixels shared by RoIs
// far apart in x were gone from L2 by the time the next one read them.) Ties keep the input order. The order and
// its temporaries come from `memory`; the sort itself allocates nothing.
std::pmr::vector<int64_t> LocalityOrder(const Problem& p,
                                        std::pmr::memory_resource* memory = std::pmr::get_default_resource());

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_ROI_ORDER_H_
