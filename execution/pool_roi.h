// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// One task of a planned pass: a RoI's run of channels through one of four drivers, each in a file of its own:
// the map in place (pool_in_place.cc), per-RoI channels-last tiles of a planar map (pool_tiles.cc), the pass's
// channels-last band of a planar map (pool_band.cc), or a rotated RoI's per-sample taps (pool_rotated.cc). Drivers execute the plan; plain C++, every SIMD step a call
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

// A driver: output channels [c_begin, c_end) of RoI k for the pass; called concurrently on disjoint ranges, each
// caller with its own scratch. Execute picks one per pass from the plan's pixel access.
using PoolRoiFn = void (*)(const PassContext& ctx, int64_t k, int64_t c_begin, int64_t c_end, Scratch& scratch);
// The map in place:
void PoolInPlace(const PassContext& ctx, int64_t k, int64_t c_begin, int64_t c_end, Scratch& scratch);
// Rotated RoIs (pool_rotated.cc): the map in place, or the pass's image made channels-last (NCHW):
void PoolRotated(const PassContext& ctx, int64_t k, int64_t c_begin, int64_t c_end, Scratch& scratch);
// A planar map, through the pass's band (PoolFromBand) or per-RoI tiles (PoolTiles):
void PoolPlanar(const PassContext& ctx, int64_t k, int64_t c_begin, int64_t c_end, Scratch& scratch);
// One RoI's run of channels [c_begin, c_end) on a planar map, and the sizes every step below reads.
struct PlanarTask {
  const PassContext& ctx;
  const Problem& p;
  Scratch& s;
  const RoiSampling& roi;
  const AxisTap *ty, *tx;  // the call's taps of the RoI
  int64_t k, c_begin, c_end, n, lanes, PH, PW, gh, gw, bytes;
  MapStrides map, out;
};
// Planar maps: per-RoI tiles (a pass without a band), or the pass's band.
void PoolTiles(const PlanarTask& task);
void PoolFromBand(const PlanarTask& task);

// Writes 0 to lanes [used, block) of each of the `bins` pixels of a last channel block.
void ZeroPadding(unsigned char* block_plane, int64_t bins, int64_t used, int64_t block, int64_t bytes);

// Blocked layouts: writes 0 to the padded lanes of RoI k's last channel block (C not a multiple of the block), as
// oneDNN does, so that a consumer may read whole blocks.
void ZeroPaddedLanes(const Problem& p, int64_t k);

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_POOL_ROI_H_
