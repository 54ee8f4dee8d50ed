// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The tile driver: a planar map's RoI copied channels-last into per-thread tiles of its distinct tap pixels, one
// rectangle of bins the plan fitted to the tile at a time, pooled there and transposed back into the planar output.
#include <hwy/cache_control.h>

#include <algorithm>

#include "execution/bin_rows.h"
#include "execution/pool_roi.h"

namespace roialign {
namespace internal {
namespace {

// Channels-last tile of n planes' pixels (rows x cols): tile[(row * nx + col) * stride + channel], padding lanes
// zeroed (no denormal junk). Channel-innermost: contiguous tile writes, and the n planes' current lines stay in L1
// across columns. E moves the elements' bits (float, or uint16_t for the 16-bit types).
template <typename E>
void CopyTile(const void* first_plane, int64_t plane_stride, int64_t row_stride, const int64_t* rows, int64_t ny,
              const int64_t* cols, int64_t nx, int64_t n, int64_t stride, void* tile) {
  for (int64_t yi = 0; yi < ny; ++yi) {
    const E* row0 = static_cast<const E*>(first_plane) + rows[yi] * row_stride;
    // The next tap row's lines, a plane apart each, follow no pattern a hardware prefetcher detects: without
    // this, every line is a full cache-miss latency.
    const int64_t ahead = yi + 1 < ny ? (rows[yi + 1] - rows[yi]) * row_stride : 0;
    for (int64_t xi = 0; xi < nx; ++xi) {
      const E* src = row0 + cols[xi];
      E* dst = static_cast<E*>(tile) + (yi * nx + xi) * stride;
      for (int64_t ci = 0; ci < n; ++ci) {
        dst[ci] = src[ci * plane_stride];
        hwy::Prefetch(src + ci * plane_stride + ahead);
      }
      for (int64_t ci = n; ci < stride; ++ci) dst[ci] = E();
    }
  }
}


// Pools the rectangle's bins for all the task's channels from tiles of its distinct tap pixels, a block of
// channels at a time, its chunks of sample rows one after another, and transposes the f32 bins into the planar
// output.
void PoolRect(const PlanarTask& w, const TileRect& r) {
  Scratch& s = w.s;
  const CallGeometry& g = w.ctx.plan->geometry;
  const int64_t PW = w.PW, gh = w.gh, gw = w.gw, bytes = w.bytes, lanes = w.lanes;
  const int64_t ph0 = r.ph0, ph1 = r.ph1, pw0 = r.pw0, pw1 = r.pw1, nx = r.nx;
  const int64_t* const tile_cols = g.tile_pixels.data() + r.cols;
  const AxisTap* const x_taps = g.tile_taps.data() + r.x_taps;
  const AxisTap* const y_taps = g.tile_taps.data() + r.y_taps;
  // Channels per tile: as many whole vectors as the tile holds for the rectangle's footprint, at most the task's.
  const int64_t channel_block =
      r.footprint > 0 ? std::min(static_cast<int64_t>(kTilePixels) * lanes / r.footprint / lanes * lanes,
                                 (w.n + lanes - 1) / lanes * lanes)
                      : lanes;
  float* const bins = s.bins.data();
  MergedTap* const cols = s.merged.data() + 2 * w.p.max_grid_h;  // rows merge in front of them
  for (int64_t c = w.c_begin; c < w.c_end; c += channel_block) {
    const int64_t n = std::min(channel_block, w.c_end - c);
    const int64_t stride = (n + lanes - 1) / lanes * lanes;
    const TileChunk* chunk = g.tile_chunks.data() + r.chunks;
    for (int64_t iy0 = 0; iy0 == 0 || iy0 < gh; iy0 += r.chunk_rows, ++chunk) {
      const int64_t iy1 = std::min(gh, iy0 + r.chunk_rows), ny = chunk->ny;
      const void* plane = static_cast<const unsigned char*>(w.p.input) + w.map.Offset(w.roi.batch, c, 0, 0) * bytes;
      (bytes == 4 ? CopyTile<float> : CopyTile<uint16_t>)(plane, w.map.planes, w.map.row,
                                                           g.tile_pixels.data() + chunk->rows, ny, tile_cols, nx, n,
                                                           stride, s.tile.data());
      ChannelRun run = {s.tile.data(), s.tile.data() + ny * nx * stride * bytes, stride, nullptr, nullptr, false};
      for (int64_t ph = ph0; ph < ph1; ++ph) {
        for (int64_t pw = pw0; pw < pw1; ++pw) {
          BinLayout b = {y_taps + (ph - ph0) * gh, x_taps + (pw - pw0) * gw, gh, gw, nx * stride, stride, cols, 0, 0};
          if (w.p.params.pool_mode == PoolMode::kAvg) b.nx = MergeTaps(b.tx, gw, stride, cols);
          run.partial = bins + ((ph - ph0) * (pw1 - pw0) + (pw - pw0)) * stride;
          run.out = run.partial;
          PoolRows(w.ctx.fns->pool_bin_f32, w.p.params.pool_mode, b, iy0, iy1, run, s);
        }
      }
    }
    // All at once when the rectangle spans whole rows of bins (they are then consecutive in the planes too), else
    // one row of bins at a time.
    unsigned char* const planes = static_cast<unsigned char*>(w.p.output) + w.out.Offset(w.k, c, 0, 0) * bytes;
    for (int64_t ph = ph0; ph < ph1; ++ph) {
      const bool whole_rows = pw0 == 0 && pw1 == PW;
      w.ctx.fns->bins_to_planes(bins + (ph - ph0) * (pw1 - pw0) * stride, whole_rows ? (ph1 - ph0) * PW : pw1 - pw0,
                                stride, n, planes + (ph * PW + pw0) * bytes, w.out.planes);
      if (whole_rows) break;
    }
  }
}

}  // namespace

// Per-RoI tiles: the rectangles of bins the plan fitted to the tile (tile_plan.cc), one after another.
void PoolTiles(const PlanarTask& w) {
  const CallGeometry& g = w.ctx.plan->geometry;
  const TapRun& rects = g.roi_rects[static_cast<size_t>(w.k)];
  for (int64_t i = rects.begin; i < rects.begin + rects.count; ++i) PoolRect(w, g.tile_rects[static_cast<size_t>(i)]);
}

}  // namespace internal
}  // namespace roialign
