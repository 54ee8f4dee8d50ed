// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// A bin pooled in pieces of sample rows: what every driver hands the microkernel when a bin does not go in one
// call (a chunk of rows, the rows in a band, a tile's coordinates).
#ifndef ROIALIGN_EXECUTION_BIN_ROWS_H_
#define ROIALIGN_EXECUTION_BIN_ROWS_H_

#include <cstdint>

#include "execution/working_memory.h"
#include "kernels/kernel_descriptor.h"
#include "kernels/merged_taps.h"

namespace roialign {
namespace internal {

// A bin as a driver lays it out: sample rows ty[0, gh) and columns tx[0, gw) in the indices of the channels-last
// pixels it reads (element strides row and pixel; their first row is first_row), and AVG's merged columns.
struct BinLayout {
  const AxisTap *ty, *tx;
  int64_t gh, gw, row, pixel;
  const MergedTap* cols;
  int64_t nx, first_row;
};

// Pools sample rows [iy0, iy1) of a bin into `run`: AVG from merged taps; MAX kBinTaps taps (whole sample rows)
// at a time, the pieces carrying the bin's partial state, so the result is that of one call.
void PoolRows(PoolBinFn pool, PoolMode mode, const BinLayout& b, int64_t iy0, int64_t iy1, const ChannelRun& run,
              Scratch& s);

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_BIN_ROWS_H_
