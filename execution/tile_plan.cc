// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "execution/tile_plan.h"

#include <algorithm>

#include "execution/working_memory.h"

namespace roialign {
namespace internal {
namespace {

// Sorted distinct pixel indices that the valid taps taps[i * stride + j], i < n_outer, j in [j0, j1), touch.
int64_t DistinctTaps(const AxisTap* taps, int64_t n_outer, int64_t stride, int64_t j0, int64_t j1, int64_t* out) {
  int64_t m = 0;
  for (int64_t i = 0; i < n_outer; ++i) {
    for (int64_t j = j0; j < j1; ++j) {
      const AxisTap& t = taps[i * stride + j];
      if (!t.valid) continue;
      out[m++] = t.lo;
      out[m++] = t.hi;
    }
  }
  std::sort(out, out + m);
  return std::unique(out, out + m) - out;
}

// Copies the same taps with lo/hi replaced by their positions in `index` (sorted, distinct).
void RemapTaps(const AxisTap* taps, int64_t n_outer, int64_t stride, int64_t j0, int64_t j1, const int64_t* index,
               int64_t count, AxisTap* out) {
  for (int64_t i = 0; i < n_outer; ++i) {
    for (int64_t j = j0; j < j1; ++j) {
      AxisTap t = taps[i * stride + j];
      if (t.valid) {
        t.lo = std::lower_bound(index, index + count, t.lo) - index;
        t.hi = std::lower_bound(index, index + count, t.hi) - index;
      }
      out[i * stride + j] = t;
    }
  }
}

// Whether a tile holds at least one vector of channels of `pixels` tap pixels and `bins` channels-last bins.
bool Fits(int64_t pixels, int64_t bins) {
  return std::max<int64_t>({pixels, bins, 1}) <= static_cast<int64_t>(kTilePixels);
}

// The tile-fit cascade of one RoI: the largest rectangle of bins whose footprint fits a tile, the whole RoI, else
// a row of bins, else one bin, else one bin a few sample rows at a time (huge sparse grids only). Calls
// add(rect) for each, in the order the driver pools them. `rows` and `cols` are scratch for 2 * PH * gh and
// 2 * PW * gw indices.
template <class Add>
void Cascade(const RoiSampling& roi, const AxisTap* ty, const AxisTap* tx, int64_t PH, int64_t PW, int64_t* rows,
             int64_t* cols, Add add) {
  const int64_t gh = roi.gy.grid, gw = roi.gx.grid, whole_rows = std::max<int64_t>(gh, 1);
  const int64_t nx_all = DistinctTaps(tx, 1, 0, 0, PW * gw, cols);
  const int64_t ny_all = DistinctTaps(ty, 1, 0, 0, PH * gh, rows);
  if (Fits(ny_all * nx_all, PH * PW)) {
    return add(TileRect{0, PH, 0, PW, whole_rows, std::max<int64_t>({ny_all * nx_all, PH * PW, 1})});
  }
  for (int64_t ph = 0; ph < PH; ++ph) {
    const int64_t ny_row = DistinctTaps(ty + ph * gh, 1, 0, 0, gh, rows);  // a bin's rows are its row's rows
    if (Fits(ny_row * nx_all, PW)) {
      add(TileRect{ph, ph + 1, 0, PW, whole_rows, std::max<int64_t>({ny_row * nx_all, PW, 1})});
      continue;
    }
    for (int64_t pw = 0; pw < PW; ++pw) {
      const int64_t nx_bin = DistinctTaps(tx + pw * gw, 1, 0, 0, gw, cols);
      if (Fits(ny_row * nx_bin, 1)) {
        add(TileRect{ph, ph + 1, pw, pw + 1, whole_rows, std::max<int64_t>(ny_row * nx_bin, 1)});
      } else {
        // Each sample row touches at most 2 pixel rows; nx_bin <= 2 * grid_w <= kTilePixels / 2.
        const int64_t chunk_rows = std::max<int64_t>(1, static_cast<int64_t>(kTilePixels) / (2 * nx_bin));
        add(TileRect{ph, ph + 1, pw, pw + 1, chunk_rows, 0});
      }
    }
  }
}

// The chunks of sample rows [iy0, iy1) of a rectangle: at least one, as the driver makes (a bin without samples
// still finishes).
template <class Visit>
void ForEachChunk(const TileRect& r, int64_t gh, Visit visit) {
  for (int64_t iy0 = 0; iy0 == 0 || iy0 < gh; iy0 += r.chunk_rows) visit(iy0, std::min(gh, iy0 + r.chunk_rows));
}

}  // namespace

void PlanTiles(const Problem& p, const std::pmr::vector<int64_t>& rois, Plan* plan) {
  CallGeometry& g = plan->geometry;
  const int64_t PH = p.params.pooled_height, PW = p.params.pooled_width;
  std::pmr::memory_resource* const memory = g.rois.get_allocator().resource();
  std::pmr::vector<int64_t> rows(static_cast<size_t>(2 * PH * p.max_grid_h), memory);
  std::pmr::vector<int64_t> cols(static_cast<size_t>(2 * PW * p.max_grid_w), memory);
  // Exact sizes first (a workspace holds no slack for growth): the rectangles, their chunks, indices and taps.
  int64_t num_rects = 0, num_chunks = 0, num_pixels = 0, num_taps = 0;
  for (int64_t k : rois) {
    const RoiSampling& roi = g.rois[static_cast<size_t>(k)];
    const AxisTap *ty = g.y.data() + roi.y, *tx = g.x.data() + roi.x;
    const int64_t gh = roi.gy.grid, gw = roi.gx.grid;
    Cascade(roi, ty, tx, PH, PW, rows.data(), cols.data(), [&](const TileRect& r) {
      ++num_rects;
      num_pixels += DistinctTaps(tx + r.pw0 * gw, 1, 0, 0, (r.pw1 - r.pw0) * gw, cols.data());
      num_taps += (r.pw1 - r.pw0) * gw + (r.ph1 - r.ph0) * gh;
      ForEachChunk(r, gh, [&](int64_t iy0, int64_t iy1) {
        ++num_chunks;
        num_pixels += DistinctTaps(ty + r.ph0 * gh, r.ph1 - r.ph0, gh, iy0, iy1, rows.data());
      });
    });
  }
  g.roi_rects.resize(static_cast<size_t>(p.num_rois));
  g.tile_rects.resize(static_cast<size_t>(num_rects));
  g.tile_chunks.resize(static_cast<size_t>(num_chunks));
  g.tile_pixels.resize(static_cast<size_t>(num_pixels));
  g.tile_taps.resize(static_cast<size_t>(num_taps));
  int64_t rect = 0, chunk = 0, pixel = 0, tap = 0;
  for (int64_t k : rois) {
    const RoiSampling& roi = g.rois[static_cast<size_t>(k)];
    const AxisTap *ty = g.y.data() + roi.y, *tx = g.x.data() + roi.x;
    const int64_t gh = roi.gy.grid, gw = roi.gx.grid;
    g.roi_rects[static_cast<size_t>(k)].begin = rect;
    Cascade(roi, ty, tx, PH, PW, rows.data(), cols.data(), [&](TileRect r) {
      // Columns: the rectangle's distinct tap columns, and its bins' x taps as positions among them.
      int64_t* const col_index = g.tile_pixels.data() + pixel;
      r.cols = pixel;
      r.nx = DistinctTaps(tx + r.pw0 * gw, 1, 0, 0, (r.pw1 - r.pw0) * gw, cols.data());
      std::copy_n(cols.data(), r.nx, col_index);
      pixel += r.nx;
      r.x_taps = tap;
      RemapTaps(tx + r.pw0 * gw, 1, 0, 0, (r.pw1 - r.pw0) * gw, col_index, r.nx, g.tile_taps.data() + tap);
      tap += (r.pw1 - r.pw0) * gw;
      // Rows per chunk: each chunk's distinct tap rows, and its sample rows' y taps as positions among them, each
      // chunk in its own rows of the rectangle's y taps.
      r.y_taps = tap;
      r.chunks = chunk;
      ForEachChunk(r, gh, [&](int64_t iy0, int64_t iy1) {
        TileChunk& c = g.tile_chunks[static_cast<size_t>(chunk++)];
        c.rows = pixel;
        c.ny = DistinctTaps(ty + r.ph0 * gh, r.ph1 - r.ph0, gh, iy0, iy1, rows.data());
        std::copy_n(rows.data(), c.ny, g.tile_pixels.data() + pixel);
        RemapTaps(ty + r.ph0 * gh, r.ph1 - r.ph0, gh, iy0, iy1, rows.data(), c.ny, g.tile_taps.data() + tap);
        pixel += c.ny;
      });
      tap += (r.ph1 - r.ph0) * gh;
      g.tile_rects[static_cast<size_t>(rect++)] = r;
    });
    g.roi_rects[static_cast<size_t>(k)].count = rect - g.roi_rects[static_cast<size_t>(k)].begin;
  }
}

}  // namespace internal
}  // namespace roialign
