// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The in-place driver: maps whose channels are contiguous (NHWC, and the blocked layouts a block at a time) are
// read where they lie, each bin's taps the plan's offsets into the map.
#include <algorithm>

#include "execution/bin_rows.h"
#include "execution/pool_roi.h"
#include "execution/row_bands.h"

namespace roialign {
namespace internal {
namespace {

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

}  // namespace

// The map read in place: every bin straight from the input, its taps' offsets the map's own, in the channel
// groups, sample-row chunks and output staging the plan chose for the RoI.
void PoolInPlace(const PassContext& ctx, int64_t k, int64_t c_begin, int64_t c_end, Scratch& s) {
  const Problem& p = *ctx.problem;
  const RoiSampling& roi = ctx.plan->geometry.rois[static_cast<size_t>(k)];
  if (ctx.pass->band < roi.first_band || ctx.pass->band > roi.last_band) return;  // unbanded: whole in band 0
  const int64_t PH = p.params.pooled_height, PW = p.params.pooled_width;
  const int64_t bytes = BytesOf(p.params.dtype);
  const MapStrides map = StridesOf(p.params.layout, p.channels, p.height, p.width);
  const MapStrides out = StridesOf(p.params.layout, p.channels, PH, PW);
  const unsigned char* const input = static_cast<const unsigned char*>(p.input);
  ChannelRun run = {input + map.Offset(roi.batch, c_begin, 0, 0) * bytes, input + p.batch * map.image * bytes,
                    c_end - c_begin, nullptr, nullptr, ctx.plan->stream_output && !roi.stage_output};
  if (IsBlocked(p.params.layout)) {
    run.block = map.block;
    run.in_block_stride = map.planes;
    run.out_block_stride = out.planes;
  }
  const int64_t planned = roi.stage_output ? ctx.plan->staged_channels : ctx.plan->group_channels;
  const int64_t group = planned > 0 ? planned : c_end - c_begin;
  const unsigned char* const first_in = static_cast<const unsigned char*>(run.in);
  for (int64_t c0 = 0; c0 == 0 || c0 < c_end - c_begin; c0 += group) {
    run.channels = std::min(group, c_end - c_begin - c0);
    run.in = first_in + c0 / map.block * map.planes * bytes;
    const int64_t roi_offset = out.Offset(k, c_begin + c0, 0, 0);
    unsigned char* const roi_out = static_cast<unsigned char*>(p.output) + roi_offset * bytes;
    if (!roi.stage_output) {
      PoolBins(ctx, roi, run, roi_offset, roi_out, map, out, roi.chunk_rows, s);
      continue;
    }
    unsigned char* const staging = s.staged_output.data();
    PoolBins(ctx, roi, run, roi_offset, staging, map, out, roi.chunk_rows, s);
    const int64_t blocks = (run.channels + map.block - 1) / map.block, used = run.channels % map.block;
    if (used != 0) ZeroPadding(staging + (blocks - 1) * out.planes * bytes, PH * PW, used, out.block, bytes);
    ctx.fns->stream_copy(staging, blocks * out.planes * bytes, roi_out);
  }
}

}  // namespace internal
}  // namespace roialign
