// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// One task of a planned pass: a RoI's run of channels, from the map in place, from per-RoI channels-last tiles,
// or from the pass's channels-last band, through the target's microkernel. Plain C++: every SIMD step is a call
// into the kernel's functions.
#ifndef ROIALIGN_EXECUTION_POOL_ROI_H_
#define ROIALIGN_EXECUTION_POOL_ROI_H_

#include <cstdint>

#include "execution/plan.h"
#include "execution/working_memory.h"
#include "kernels/kernel_descriptor.h"
#include "kernels/problem.h"

namespace roialign {
namespace internal {

// What every task of one pass shares.
struct PassContext {
  const Problem* problem;
  const Plan* plan;
  const PlannedPass* pass;
  const KernelFns* fns;  // for the call's dtype
  const KernelFns* f32;  // the same target's f32 functions (f32 partial state)
  float* partial;        // f32 partial state laid out like the output (the output itself when it is f32)
  const void* band;      // a transform pass: its map rows, channels-last
};

// Output channels [c_begin, c_end) of RoI k for the pass; called concurrently on disjoint ranges, each caller with
// its own scratch.
void PoolRoi(const PassContext& ctx, int64_t k, int64_t c_begin, int64_t c_end, Scratch& scratch);

// Blocked layouts: writes 0 to the padded lanes of RoI k's last channel block (C not a multiple of the block), as
// oneDNN does, so that a consumer may read whole blocks.
void ZeroPaddedLanes(const Problem& p, int64_t k);

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_POOL_ROI_H_
