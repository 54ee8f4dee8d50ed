// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Strided maps (docs/api.md, "Strided maps"): a caller's view with its own strides, made dense for the kernels.
// The one place that densifies: the C API calls it for every map of a call, the bindings pass their strides on.
#ifndef ROIALIGN_EXECUTION_STRIDED_MAPS_H_
#define ROIALIGN_EXECUTION_STRIDED_MAPS_H_

#include <cstdint>
#include <memory_resource>
#include <vector>

#include "core/library.h"

namespace roialign {
namespace internal {

// A map's data as the kernels read it: `map.data` when its strides are dense (or all 0), else a dense copy in
// `dense_copy`, which allocates from its own memory resource (std::bad_alloc: nothing was written); `copy` false sizes it
// only (a workspace query). Shapes the copy cannot serve (an empty or negative extent, a null pointer) pass through
// unchanged, for the run's own validation to judge. `what` names the map in messages.
Status DenseMapData(const roialign_map& map, int64_t batch, int64_t channels, Layout layout, DType dtype,
                    const char* what, std::pmr::vector<unsigned char>* dense_copy, bool copy, const void** data);

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_STRIDED_MAPS_H_
