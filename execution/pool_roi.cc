// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "execution/pool_roi.h"

#include <hwy/cache_control.h>

#include <algorithm>
#include <cassert>
#include <cstring>

#include "execution/row_bands.h"

namespace roialign {
namespace internal {
namespace {

// Bytes of tap pixels one pass over a bin's samples may touch before the pass is split into sample-row chunks.
// The microkernel makes one pass per 8 (AVG) or 4 (MAX) vectors of channels; when a large adaptive bin's
// footprint exceeds L2, every pass would refetch it from L3. Chunks keep it in L2 across passes.
constexpr int64_t kBinFootprintBytes = 256 * 1024;

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

// A RoI's bins for the channel run `run` (its pixels at run.in, its partial state at roi_offset) on a map read in
// place, written to `roi_out`, laid out like the output from roi_offset on (the output there, or staging).
void PoolBins(const PassContext& ctx, const RoiSampling& roi, ChannelRun run, int64_t roi_offset,
              unsigned char* roi_out, const MapStrides& map, const MapStrides& out, int64_t rows_per_chunk,
              Scratch& s) {
  const Problem& p = *ctx.problem;
  const CallGeometry& g = ctx.plan->geometry;
  const PlannedPass& pass = *ctx.pass;
  const int64_t band_rows = ctx.plan->band_rows;
  const bool banded = band_rows > 0 && roi.split;
  const int64_t PH = p.params.pooled_height, PW = p.params.pooled_width, gh = roi.gy.grid, gw = roi.gx.grid;
  const int64_t bytes = BytesOf(p.params.dtype);
  // AVG only: the call has no runs in the other pool modes (and an offset from their null data is undefined).
  const TapRun* runs = p.params.pool_mode == PoolMode::kAvg ? g.runs.data() + roi.runs : nullptr;
  for (int64_t ph = 0; ph < PH; ++ph) {
    const AxisTap* ty = g.y.data() + roi.y + ph * gh;
    int64_t ib = 0, ie = gh;  // the sample rows of this row of bins in the pass's band
    if (banded && !SampleRowsInBand(roi.gy, ty, ph, band_rows, pass.band, ctx.plan->num_bands, &ib, &ie)) continue;
    for (int64_t pw = 0; pw < PW; ++pw) {
      const int64_t offset = ph * out.row + pw * out.pixel;
      run.partial = ctx.partial + roi_offset + offset;
      run.out = roi_out + offset * bytes;
      if (runs != nullptr && ib == 0 && ie == gh && rows_per_chunk >= gh) {  // AVG's whole bin, merged by the plan
        const TapRun &rows = runs[ph], &cols = runs[PH + pw];
        ctx.fns->pool_bin(PoolMode::kAvg, {g.merged.data() + rows.begin, rows.count, g.merged.data() + cols.begin,
                                           cols.count, gh * gw, true, true}, run);
        continue;
      }
      BinLayout b = {ty, g.x.data() + roi.x + pw * gw, gh, gw, map.row, map.pixel, nullptr, 0, 0};
      if (runs != nullptr) {
        b.cols = g.merged.data() + runs[PH + pw].begin;
        b.nx = runs[PH + pw].count;
      }
      for (int64_t iy0 = ib; iy0 == ib || iy0 < ie; iy0 += rows_per_chunk) {
        PoolRows(ctx.fns->pool_bin, p.params.pool_mode, b, iy0, std::min(ie, iy0 + rows_per_chunk), run, s);
      }
    }
  }
}

// Writes 0 to lanes [used, block) of each of the `bins` pixels of a last channel block.
void ZeroPadding(unsigned char* block_plane, int64_t bins, int64_t used, int64_t block, int64_t bytes) {
  for (int64_t bin = 0; bin < bins; ++bin) {
    std::memset(block_plane + (bin * block + used) * bytes, 0, static_cast<size_t>((block - used) * bytes));
  }
}

// The map read in place: every bin straight from the input, its taps' offsets the map's own.
void PoolInPlace(const PassContext& ctx, int64_t k, int64_t c_begin, int64_t c_end, Scratch& s) {
  const Problem& p = *ctx.problem;
  const RoiSampling& roi = ctx.plan->geometry.rois[static_cast<size_t>(k)];
  if (ctx.pass->band < roi.first_band || ctx.pass->band > roi.last_band) return;  // unbanded: whole in band 0
  const int64_t PH = p.params.pooled_height, PW = p.params.pooled_width, gw = roi.gx.grid;
  const int64_t bytes = BytesOf(p.params.dtype);
  const MapStrides map = StridesOf(p.params.layout, p.channels, p.height, p.width);
  const MapStrides out = StridesOf(p.params.layout, p.channels, PH, PW);
  const unsigned char* const input = static_cast<const unsigned char*>(p.input);
  ChannelRun run = {input + map.Offset(roi.batch, c_begin, 0, 0) * bytes, input + p.batch * map.image * bytes,
                    c_end - c_begin, nullptr, nullptr, ctx.plan->stream_output};
  if (IsBlocked(p.params.layout)) {
    run.block = map.block;
    run.in_block_stride = map.planes;
    run.out_block_stride = out.planes;
  }
  // Sample rows per chunk: each sample reads 4 pixels. Sized from all the pixel's channels, not from this task's
  // (nor from a block's), so that chunking (which changes AVG's rounding) never depends on how threads split the
  // channels, and a blocked map gives NHWC's bits.
  const int64_t sample_row_bytes = std::max<int64_t>(1, gw * 4 * p.channels * bytes);
  const int64_t rows_per_chunk = std::max<int64_t>(1, kBinFootprintBytes / sample_row_bytes);
  // Staged output (Plan::staged_channels): only RoIs this pass finishes, whose planes then hold their final values.
  const bool staged = ctx.plan->staged_channels > 0 && run.block > 0 &&
                      (ctx.plan->band_rows == 0 || !roi.split || roi.first_band == roi.last_band);
  if (staged) run.stream = false;  // the staging stays in cache
  // Blocked maps: kBlockedGroupChannels (staged: staged_channels) of all bins before the next group.
  const int64_t group = staged ? ctx.plan->staged_channels : run.block > 0 ? kBlockedGroupChannels : c_end - c_begin;
  const unsigned char* const first_in = static_cast<const unsigned char*>(run.in);
  for (int64_t c0 = 0; c0 == 0 || c0 < c_end - c_begin; c0 += group) {
    run.channels = std::min(group, c_end - c_begin - c0);
    run.in = first_in + c0 / map.block * map.planes * bytes;
    const int64_t roi_offset = out.Offset(k, c_begin + c0, 0, 0);
    unsigned char* const roi_out = static_cast<unsigned char*>(p.output) + roi_offset * bytes;
    if (!staged) {
      PoolBins(ctx, roi, run, roi_offset, roi_out, map, out, rows_per_chunk, s);
      continue;
    }
    unsigned char* const staging = s.staged_output.data();
    PoolBins(ctx, roi, run, roi_offset, staging, map, out, rows_per_chunk, s);
    const int64_t blocks = (run.channels + map.block - 1) / map.block, used = run.channels % map.block;
    if (used != 0) ZeroPadding(staging + (blocks - 1) * out.planes * bytes, PH * PW, used, out.block, bytes);
    ctx.fns->stream_copy(staging, blocks * out.planes * bytes, roi_out);
  }
}

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

// One RoI's run of channels [c_begin, c_end) on a staged map, and the sizes every step below reads.
struct Staged {
  const PassContext& ctx;
  const Problem& p;
  Scratch& s;
  const RoiSampling& roi;
  const AxisTap *ty, *tx;  // the call's taps of the RoI
  int64_t k, c_begin, c_end, n, lanes, PH, PW, gh, gw, bytes;
  MapStrides map, out;
};

// Pools bins [ph0, ph1) x [pw0, pw1) of the RoI for all its channels from tiles of its distinct tap pixels,
// channel_block channels at a time, sample rows rows_per_chunk at a time (== grid_h unless a single bin's
// footprint exceeds the tile), and transposes the f32 bins into the planar output.
void PoolRect(const Staged& w, int64_t ph0, int64_t ph1, int64_t pw0, int64_t pw1, int64_t rows_per_chunk,
              int64_t channel_block) {
  Scratch& s = w.s;
  const int64_t PW = w.PW, gh = w.gh, gw = w.gw, bytes = w.bytes;
  float* const bins = s.bins.data();
  MergedTap* const cols = s.merged.data() + 2 * w.p.max_grid_h;  // rows merge in front of them
  const int64_t nx = DistinctTaps(w.tx + pw0 * gw, 1, 0, 0, (pw1 - pw0) * gw, s.cols.data());
  RemapTaps(w.tx + pw0 * gw, 1, 0, 0, (pw1 - pw0) * gw, s.cols.data(), nx, s.x_tile_taps.data() + pw0 * gw);
  for (int64_t c = w.c_begin; c < w.c_end; c += channel_block) {
    const int64_t n = std::min(channel_block, w.c_end - c);
    const int64_t stride = (n + w.lanes - 1) / w.lanes * w.lanes;
    for (int64_t iy0 = 0; iy0 == 0 || iy0 < gh; iy0 += rows_per_chunk) {
      const int64_t iy1 = std::min(gh, iy0 + rows_per_chunk);
      const int64_t ny = DistinctTaps(w.ty + ph0 * gh, ph1 - ph0, gh, iy0, iy1, s.rows.data());
      RemapTaps(w.ty + ph0 * gh, ph1 - ph0, gh, iy0, iy1, s.rows.data(), ny, s.y_tile_taps.data() + ph0 * gh);
      const void* plane = static_cast<const unsigned char*>(w.p.input) + w.map.Offset(w.roi.batch, c, 0, 0) * bytes;
      (bytes == 4 ? CopyTile<float> : CopyTile<uint16_t>)(plane, w.map.planes, w.map.row, s.rows.data(), ny,
                                                           s.cols.data(), nx, n, stride, s.tile.data());
      ChannelRun run = {s.tile.data(), s.tile.data() + ny * nx * stride * bytes, stride, nullptr, nullptr, false};
      for (int64_t ph = ph0; ph < ph1; ++ph) {
        for (int64_t pw = pw0; pw < pw1; ++pw) {
          BinLayout b = {s.y_tile_taps.data() + ph * gh, s.x_tile_taps.data() + pw * gw, gh, gw, nx * stride, stride,
                         cols, 0, 0};
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

// Channels per tile so that max(pixels, bins) vectors of them fit the tile budget; 0 if not even one fits.
int64_t ChannelBlock(int64_t pixels, int64_t bins, int64_t lanes, int64_t channels) {
  const int64_t budget = static_cast<int64_t>(kTilePixels) * lanes;
  const int64_t blocks = budget / std::max<int64_t>({pixels, bins, 1}) / lanes * lanes;
  return std::min(blocks, (channels + lanes - 1) / lanes * lanes);
}

// Per-RoI tiles: the largest rectangle of bins whose footprint fits the tile: the whole RoI, else a row of bins,
// else one bin, else one bin a few sample rows at a time (huge sparse grids only).
void PoolTiles(const Staged& w) {
  const int64_t PH = w.PH, PW = w.PW, gh = w.gh, gw = w.gw, C = w.n, lanes = w.lanes;
  int64_t* rows = w.s.rows.data();
  int64_t* cols = w.s.cols.data();
  const int64_t nx_all = DistinctTaps(w.tx, 1, 0, 0, PW * gw, cols);
  const int64_t ny_all = DistinctTaps(w.ty, 1, 0, 0, PH * gh, rows);
  const int64_t whole = ChannelBlock(ny_all * nx_all, PH * PW, lanes, C);
  if (whole > 0) return PoolRect(w, 0, PH, 0, PW, std::max<int64_t>(gh, 1), whole);
  for (int64_t ph = 0; ph < PH; ++ph) {
    const int64_t ny_row = DistinctTaps(w.ty + ph * gh, 1, 0, 0, gh, rows);  // a bin's rows are its row's rows
    const int64_t row = ChannelBlock(ny_row * nx_all, PW, lanes, C);
    if (row > 0) {
      PoolRect(w, ph, ph + 1, 0, PW, std::max<int64_t>(gh, 1), row);
      continue;
    }
    for (int64_t pw = 0; pw < PW; ++pw) {
      const int64_t nx_bin = DistinctTaps(w.tx + pw * gw, 1, 0, 0, gw, cols);
      const int64_t bin = ChannelBlock(ny_row * nx_bin, 1, lanes, C);
      if (bin > 0) {
        PoolRect(w, ph, ph + 1, pw, pw + 1, std::max<int64_t>(gh, 1), bin);
      } else {
        // Each sample row touches at most 2 pixel rows; nx_bin <= 2 * grid_w <= kTilePixels / 2.
        const int64_t rows_per_chunk = std::max<int64_t>(1, static_cast<int64_t>(kTilePixels) / (2 * nx_bin));
        PoolRect(w, ph, ph + 1, pw, pw + 1, rows_per_chunk, lanes);
      }
    }
  }
}

// Pools bins [b0, b1) of the RoI (bin = ph * PW + pw) from the pass's channels-last band into channels-last f32
// `bins` (n floats per bin, bin b0 first); a bin resumes from the state already there unless the band holds its
// first sample row. Reads PoolFromBand's per-row sample ranges.
void PoolBandBins(const Staged& w, int64_t b0, int64_t b1, float* bins) {
  const CallGeometry& g = w.ctx.plan->geometry;
  const PlannedPass& pass = *w.ctx.pass;
  const int64_t C = w.p.channels, row = w.p.width * C;
  const unsigned char* const band = static_cast<const unsigned char*>(w.ctx.band);
  ChannelRun run = {band + w.c_begin * w.bytes, band + (pass.rows_end - pass.rows_begin) * row * w.bytes, w.n,
                    nullptr, nullptr, false};
  const TapRun* runs = w.p.params.pool_mode == PoolMode::kAvg ? g.runs.data() + w.roi.runs : nullptr;
  for (int64_t bin = b0; bin < b1; ++bin) {
    const int64_t ph = bin / w.PW, pw = bin % w.PW;
    BinLayout b = {w.ty + ph * w.gh, w.tx + pw * w.gw, w.gh, w.gw, row, C, nullptr, 0, pass.rows_begin};
    if (runs != nullptr) {
      b.cols = g.merged.data() + runs[w.PH + pw].begin;
      b.nx = runs[w.PH + pw].count;
    }
    run.partial = bins + (bin - b0) * w.n;
    run.out = run.partial;
    PoolRows(w.ctx.fns->pool_bin_f32, w.p.params.pool_mode, b, w.s.band_samples[2 * ph], w.s.band_samples[2 * ph + 1],
             run, w.s);
  }
}

// The RoI's bins from the channels-last band of map rows that the plan prepared for all RoIs of the image: only
// the sample rows in the band, whose taps all lie in its rows. The bins with samples in the band are consecutive
// rows of bins; they are pooled channels-last and transposed into the planar output in register tiles. A bin row
// that began in an earlier band resumes from its partial state (first/last protocol).
void PoolFromBand(const Staged& w) {
  const PlannedPass& pass = *w.ctx.pass;
  Scratch& s = w.s;
  const int64_t PH = w.PH, PW = w.PW, gh = w.gh, n = w.n, bytes = w.bytes;
  assert(w.roi.batch == pass.image);
  // Sample rows [ib, ie) of each bin row in the band, and the bin rows [ph0, ph1) that have any.
  int64_t ph0 = PH, ph1 = 0, resume_ph = -1;
  for (int64_t ph = 0; ph < PH; ++ph) {
    int64_t ib = 0, ie = 0;
    if (!SampleRowsInBand(w.roi.gy, w.ty + ph * gh, ph, w.ctx.plan->band_rows, pass.band, w.ctx.plan->num_bands, &ib,
                          &ie)) {
      continue;
    }
    s.band_samples[2 * ph] = ib;
    s.band_samples[2 * ph + 1] = ie;
    ph0 = std::min(ph0, ph);
    ph1 = ph + 1;
    if (ib > 0) resume_ph = ph;
  }
  if (ph0 >= ph1) return;  // no sample row of the RoI in this band (sparse grids)
  const int64_t roi_offset = w.out.Offset(w.k, w.c_begin, 0, 0);
  unsigned char* const planes = static_cast<unsigned char*>(w.p.output) + roi_offset * bytes;
  float* const partial = w.ctx.partial + roi_offset;
  float* const bins = s.bins.data();
  if (n * PH * PW <= static_cast<int64_t>(kTileFloats)) {
    // All the RoI's bins fit the bins buffer. Until its last band they stay channels-last in its own f32 partial
    // block (for f32 outputs its output block): a band pools its bin rows there in place, resuming a row from the
    // state it left. The last band copies the earlier rows into the bins buffer and turns the whole RoI planar at
    // once. Planar partial state instead cost a cache line per plane for every few bins a band wrote or resumed,
    // each read from memory first.
    const bool goes_on = ph1 < PH || s.band_samples[2 * (PH - 1) + 1] < gh;  // a later band goes on
    if (goes_on) return PoolBandBins(w, ph0 * PW, ph1 * PW, partial + ph0 * PW * n);
    std::memcpy(bins, partial, static_cast<size_t>((resume_ph >= 0 ? ph0 + 1 : ph0) * PW * n) * sizeof(float));
    PoolBandBins(w, ph0 * PW, PH * PW, bins + ph0 * PW * n);
    // ph0 > 0: earlier bands held state in the output, now in cache. Else the RoI lies within one band: its planes
    // are one contiguous block of the output, never touched yet; staged in the (here unused) tile and streamed out,
    // its lines are not first read from memory.
    if (!w.ctx.plan->stream_output || ph0 > 0) return w.ctx.fns->bins_to_planes(bins, PH * PW, n, n, planes, PH * PW);
    w.ctx.fns->bins_to_planes(bins, PH * PW, n, n, s.tile.data(), PH * PW);
    return w.ctx.fns->stream_copy(s.tile.data(), n * PH * PW * bytes, planes);
  }
  // Else the state is planar, and the bins of the rows in the band go as many at a time as the buffer holds.
  const int64_t bins_per_chunk = std::max<int64_t>(1, static_cast<int64_t>(kTileFloats) / n);
  for (int64_t b0 = ph0 * PW; b0 < ph1 * PW; b0 += bins_per_chunk) {
    const int64_t b1 = std::min(ph1 * PW, b0 + bins_per_chunk);
    if (resume_ph >= 0) {  // the chunk's bins of the resumed row: planar partial state -> channels-last bins
      const int64_t r_begin = std::max(b0, resume_ph * PW), r_end = std::min(b1, (resume_ph + 1) * PW);
      if (r_begin < r_end) {
        w.ctx.f32->transpose(partial + r_begin, PH * PW, n, 0, n, 0, r_end - r_begin, bins + (r_begin - b0) * n);
      }
    }
    PoolBandBins(w, b0, b1, bins);
    // Finished rows go to the output, rows that go on in a later band to the partial state: runs of bins whose
    // rows agree.
    auto finished = [&](int64_t bin) { return s.band_samples[2 * (bin / PW) + 1] == gh; };
    for (int64_t r0_bin = b0; r0_bin < b1;) {
      int64_t r1_bin = std::min(b1, (r0_bin / PW + 1) * PW);
      while (r1_bin < b1 && finished(r1_bin) == finished(r0_bin)) r1_bin = std::min(b1, r1_bin + PW);
      const float* src = bins + (r0_bin - b0) * n;
      if (finished(r0_bin)) {
        w.ctx.fns->bins_to_planes(src, r1_bin - r0_bin, n, n, planes + r0_bin * bytes, PH * PW);
      } else {
        w.ctx.f32->bins_to_planes(src, r1_bin - r0_bin, n, n, partial + r0_bin, PH * PW);
      }
      r0_bin = r1_bin;
    }
  }
}

}  // namespace

void ZeroPaddedLanes(const Problem& p, int64_t k) {
  const int64_t C = p.channels, PH = p.params.pooled_height, PW = p.params.pooled_width;
  const MapStrides out = StridesOf(p.params.layout, C, PH, PW);
  const int64_t used = C % out.block, bytes = BytesOf(p.params.dtype);
  if (!IsBlocked(p.params.layout) || used == 0) return;
  ZeroPadding(static_cast<unsigned char*>(p.output) + out.Offset(k, C - used, 0, 0) * bytes, PH * PW, used,
              out.block, bytes);
}

void PoolRoi(const PassContext& ctx, int64_t k, int64_t c_begin, int64_t c_end, Scratch& scratch) {
  if (ctx.plan->access == PixelAccess::kInPlace) {
    PoolInPlace(ctx, k, c_begin, c_end, scratch);
  } else {
    const Problem& p = *ctx.problem;
    const CallGeometry& g = ctx.plan->geometry;
    const RoiSampling& roi = g.rois[static_cast<size_t>(k)];
    const int64_t PH = p.params.pooled_height, PW = p.params.pooled_width;
    const Staged w = {ctx, p, scratch, roi, g.y.data() + roi.y, g.x.data() + roi.x, k, c_begin, c_end,
                      c_end - c_begin, ctx.fns->lanes(), PH, PW, roi.gy.grid, roi.gx.grid, BytesOf(p.params.dtype),
                      StridesOf(p.params.layout, p.channels, p.height, p.width),
                      StridesOf(p.params.layout, p.channels, PH, PW)};
    if (ctx.band != nullptr) {
      PoolFromBand(w);
    } else {
      PoolTiles(w);
    }
  }
  // Orders the non-temporal stores before the caller's barrier.
  if (ctx.plan->stream_output || ctx.plan->staged_channels > 0) hwy::FlushStream();
}

}  // namespace internal
}  // namespace roialign
