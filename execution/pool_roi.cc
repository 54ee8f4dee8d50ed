// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "execution/pool_roi.h"

#include <algorithm>
#include <cstring>

#include "execution/bin_rows.h"

namespace roialign {
namespace internal {

// Pools sample rows [iy0, iy1) of a bin into `run`: AVG from merged taps; MAX kBinTaps taps (whole sample rows)
// at a time, the pieces carrying the bin's partial state, so the result is that of one call.
void PoolRows(PoolBinFn pool, PoolMode mode, const BinLayout& b, int64_t iy0, int64_t iy1, const ChannelRun& run,
              Scratch& s) {
  const bool first = iy0 == 0, last = iy1 == b.gh;
  const int64_t samples = b.gh * b.gw;
  if (mode == PoolMode::kAvg) {
    const int64_t ny = MergeTaps(b.ty + iy0, iy1 - iy0, b.row, s.merged.data(), b.first_row);
    return pool(mode, {s.merged.data(), ny, b.cols, b.nx, samples, first, last}, run);
  }
  const int64_t rows = iy1 - iy0;
  const int64_t step = b.gw > 0 ? kBinTaps / (4 * b.gw) : std::max<int64_t>(rows, 1);
  for (int64_t r0 = 0; r0 == 0 || r0 < rows; r0 += step) {
    const int64_t r1 = std::min(rows, r0 + step);
    const int64_t n =
        SampleTapsOf(b.ty, iy0 + r0, iy0 + r1, b.tx, b.gw, b.row, b.pixel, s.bin_taps.data(), b.first_row);
    pool(mode, {s.bin_taps.data(), n, nullptr, 0, samples, first && r0 == 0, last && r1 == rows}, run);
  }
}

void ZeroPadding(unsigned char* block_plane, int64_t bins, int64_t used, int64_t block, int64_t bytes) {
  for (int64_t bin = 0; bin < bins; ++bin) {
    std::memset(block_plane + (bin * block + used) * bytes, 0, static_cast<size_t>((block - used) * bytes));
  }
}

void ZeroPaddedLanes(const Problem& p, int64_t k) {
  const int64_t C = p.channels, PH = p.params.pooled_height, PW = p.params.pooled_width;
  const MapStrides out = StridesOf(p.params.layout, C, PH, PW);
  const int64_t used = C % out.block, bytes = BytesOf(p.params.dtype);
  if (!IsBlocked(p.params.layout) || used == 0) return;
  ZeroPadding(static_cast<unsigned char*>(p.output) + out.Offset(k, C - used, 0, 0) * bytes, PH * PW, used,
              out.block, bytes);
}

void PoolPlanar(const PassContext& ctx, int64_t k, int64_t c_begin, int64_t c_end, Scratch& scratch) {
  const Problem& p = *ctx.problem;
  const CallGeometry& g = ctx.plan->geometry;
  const RoiSampling& roi = g.rois[static_cast<size_t>(k)];
  const int64_t PH = p.params.pooled_height, PW = p.params.pooled_width;
  const PlanarTask w = {ctx, p, scratch, roi, g.y.data() + roi.y, g.x.data() + roi.x, k, c_begin, c_end,
                        c_end - c_begin, ctx.fns->lanes(), PH, PW, roi.gy.grid, roi.gx.grid,
                        BytesOf(p.params.dtype), StridesOf(p.params.layout, p.channels, p.height, p.width),
                        StridesOf(p.params.layout, p.channels, PH, PW)};
  if (ctx.band != nullptr) {
    PoolFromBand(w);
  } else {
    PoolTiles(w);
  }
}

}  // namespace internal
}  // namespace roialign
