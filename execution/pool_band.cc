// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The band driver: a planar map's rows made channels-last once per pass for every RoI of the image (the band
// transform); each RoI pools the sample rows that fall in the band, its bins' partial state carried between bands.
#include <cassert>
#include <cstring>

#include "execution/bin_rows.h"
#include "execution/pool_roi.h"
#include "execution/row_bands.h"

namespace roialign {
namespace internal {
namespace {

// Pools bins [b0, b1) of the RoI (bin = ph * PW + pw) from the pass's channels-last band into channels-last f32
// `bins` (n floats per bin, bin b0 first); a bin resumes from the state already there unless the band holds its
// first sample row. Reads PoolFromBand's per-row sample ranges.
void PoolBandBins(const PlanarTask& w, int64_t b0, int64_t b1, float* bins) {
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

}  // namespace

// The RoI's bins from the channels-last band of map rows that the plan prepared for all RoIs of the image: only
// the sample rows in the band, whose taps all lie in its rows. The bins with samples in the band are consecutive
// rows of bins; they are pooled channels-last and transposed into the planar output in register tiles. A bin row
// that began in an earlier band resumes from its partial state (first/last protocol).
void PoolFromBand(const PlanarTask& w) {
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
    // are one contiguous block of the output, never touched yet; written to the (here unused) tile and streamed out,
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

}  // namespace internal
}  // namespace roialign
