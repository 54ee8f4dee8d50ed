// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// roi_align_nchw: planar input, vectorized over channels without gathers. Per RoI and block of channels it
// copies the RoI's distinct tap pixels (not its whole bounding box) into a channels-last tile in the map's element
// type, then runs the NHWC inner loop on the tile (widening 16-bit elements as it loads them) and transposes the
// f32 bins back into planar output, narrowing them to the output's type. Compiled once per Highway target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/roi_align_nchw.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>

#include "kernels/kernel_descriptor.h"
#include "kernels/roi_align-inl.h"
#include "kernels/row_bands.h"
#include "kernels/scratch.h"
#include "kernels/transpose-inl.h"

HWY_BEFORE_NAMESPACE();
namespace roialign {
namespace internal {
namespace HWY_NAMESPACE {
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

// Channels [0, n) of `count` channels-last f32 bins (bin_stride floats apart) into n planes plane_stride apart, in
// TOut (the output's type, or f32 partial state), one register tile's planes at a time: the stores then run
// along the planes (a RoI's output is one contiguous block) instead of across n lines at once.
template <typename TOut>
void BinsToPlanes(const float* bins, int64_t count, int64_t bin_stride, int64_t n, TOut* planes,
                  int64_t plane_stride) {
  for (int64_t j = 0; j < n; j += kTransposeTileF32) {
    TransposeTile(bins, bin_stride, plane_stride, 0, count, j, std::min(n, j + kTransposeTileF32), planes);
  }
}

// dst[0, count) = src[0, count) with non-temporal stores for the whole vectors inside dst, ordinary ones for the
// edges, which may share a cache line with another task's output. The caller calls hwy::FlushStream before its
// tasks' barrier.
template <typename T>
void StreamCopy(const T* src, int64_t count, T* dst) {
  const hn::ScalableTag<uint8_t> d8;
  const size_t lanes = hn::Lanes(d8);
  const uint8_t* from = reinterpret_cast<const uint8_t*>(src);
  uint8_t* to = reinterpret_cast<uint8_t*>(dst);
  const size_t bytes = static_cast<size_t>(count) * sizeof(T);
  const size_t head = std::min(bytes, (lanes - reinterpret_cast<uintptr_t>(to) % lanes) % lanes);
  std::memcpy(to, from, head);
  size_t i = head;
  for (; i + lanes <= bytes; i += lanes) hn::Stream(hn::LoadU(d8, from + i), d8, to + i);
  std::memcpy(to + i, from + i, bytes - i);
}

// One RoI's state while its bins are processed in rectangles.
template <typename T>
struct RoiWork {
  const Problem& p;
  const Pass& pass;
  Scratch& s;
  int64_t k, batch, c_begin, c_end;
  AxisGeometry gy, gx;
  const AxisTap *ty, *tx;  // the call's taps of the RoI (CallGeometry)
};

// Pools one bin of a tile or band (taps ty, tx in its indices; sample rows [iy0, iy1)) into channels-last f32 `out`
// through the shared microkernel; AVG's taps are merged here, as the tile's indices are the RoI's own.
template <typename T>
void PoolTileBin(const RoiWork<T>& w, const ChannelsLast<T>& in, const AxisTap* ty, const AxisTap* tx, int64_t iy0,
                 int64_t iy1, int64_t channels, float* out) {
  const int64_t gh = w.gy.grid, gw = w.gx.grid;
  MergedTap* const merged = w.s.merged.data();
  SeparableBin bin = {merged, 0, nullptr, 0, ty, iy0, iy1, tx, gw, gh * gw, iy0 == 0, iy1 == gh};
  if (w.p.params.pool_mode == PoolMode::kAvg) {
    bin.ny = MergeTaps(ty + iy0, iy1 - iy0, in.row_stride, merged);
    bin.cols = merged + bin.ny;
    bin.nx = MergeTaps(tx, gw, in.pixel_stride, merged + bin.ny);
  }
  PoolSeparableBin(hn::ScalableTag<float>(), w.p.params.pool_mode, in, bin, channels, false,
                   BinOutput<float>{out, out}, w.s.bin_taps.data());
}

// Pools bins [ph0, ph1) x [pw0, pw1) of the RoI for all its channels, channel_block channels at a time, taking
// sample rows rows_per_chunk at a time (== grid_h unless a single bin's footprint exceeds the tile).
template <typename T>
void ProcessRect(const RoiWork<T>& w, int64_t ph0, int64_t ph1, int64_t pw0, int64_t pw1, int64_t rows_per_chunk,
                 int64_t channel_block) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const Problem& p = w.p;
  Scratch& s = w.s;
  const int64_t PH = p.params.pooled_height, PW = p.params.pooled_width, H = p.height, W = p.width;
  const int64_t gh = w.gy.grid, gw = w.gx.grid;
  T* const tile = reinterpret_cast<T*>(s.tile.get());
  float* const bins = s.bins.get();

  const int64_t nx = DistinctTaps(w.tx + pw0 * gw, 1, 0, 0, (pw1 - pw0) * gw, s.cols.data());
  RemapTaps(w.tx + pw0 * gw, 1, 0, 0, (pw1 - pw0) * gw, s.cols.data(), nx,
            s.x_tile_taps.data() + pw0 * gw);
  for (int64_t c = w.c_begin; c < w.c_end; c += channel_block) {
    const int64_t n = std::min(channel_block, w.c_end - c);
    const int64_t stride = (n + lanes - 1) / lanes * lanes;
    for (int64_t iy0 = 0; iy0 == 0 || iy0 < gh; iy0 += rows_per_chunk) {
      const int64_t iy1 = std::min(gh, iy0 + rows_per_chunk);
      const AxisTap* y_taps = w.ty + ph0 * gh;
      const int64_t ny = DistinctTaps(y_taps, ph1 - ph0, gh, iy0, iy1, s.rows.data());
      RemapTaps(y_taps, ph1 - ph0, gh, iy0, iy1, s.rows.data(), ny, s.y_tile_taps.data() + ph0 * gh);

      // Channels-last tile: tile[(row * nx + col) * stride + channel]; padding lanes zeroed (no denormal junk).
      // Channel-innermost copy: contiguous tile writes, and the n planes' current lines stay in L1 across cols.
      const T* plane0 = static_cast<const T*>(p.input) + ((w.batch * p.channels + c) * H) * W;
      const int64_t plane_stride = H * W;
      for (int64_t yi = 0; yi < ny; ++yi) {
        const T* row0 = plane0 + s.rows[yi] * W;
        // The next tap row's lines, a plane apart each, follow no pattern a hardware prefetcher detects: without
        // this, every line is a full cache-miss latency.
        const int64_t ahead = yi + 1 < ny ? (s.rows[yi + 1] - s.rows[yi]) * W : 0;
        for (int64_t xi = 0; xi < nx; ++xi) {
          const T* src = row0 + s.cols[xi];
          T* dst = tile + (yi * nx + xi) * stride;
          for (int64_t ci = 0; ci < n; ++ci) {
            dst[ci] = src[ci * plane_stride];
            hwy::Prefetch(src + ci * plane_stride + ahead);
          }
          for (int64_t ci = n; ci < stride; ++ci) dst[ci] = T();
        }
      }
      const ChannelsLast<T> in = {tile, tile + ny * nx * stride, nx * stride, stride};
      for (int64_t ph = ph0; ph < ph1; ++ph) {
        for (int64_t pw = pw0; pw < pw1; ++pw) {
          PoolTileBin(w, in, s.y_tile_taps.data() + ph * gh, s.x_tile_taps.data() + pw * gw, iy0, iy1, stride,
                      bins + ((ph - ph0) * (pw1 - pw0) + (pw - pw0)) * stride);
        }
      }
    }
    // Transpose the finished bins into the planar output: all at once when the rectangle spans whole rows of
    // bins (they are then consecutive in the planes too), else one row of bins at a time.
    T* const planes = static_cast<T*>(p.output) + (w.k * p.channels + c) * PH * PW;
    if (pw0 == 0 && pw1 == PW) {
      BinsToPlanes(bins, (ph1 - ph0) * PW, stride, n, planes + ph0 * PW, PH * PW);
    } else {
      for (int64_t ph = ph0; ph < ph1; ++ph) {
        BinsToPlanes(bins + (ph - ph0) * (pw1 - pw0) * stride, pw1 - pw0, stride, n, planes + ph * PW + pw0,
                     PH * PW);
      }
    }
  }
}

// Pools bins [b0, b1) of the RoI (bin = ph * PW + pw) from the channels-last band `in` into channels-last
// `bins` (n floats per bin, bin b0 first); a bin resumes from the state already there unless the band holds its
// first sample row. Needs ProcessShared's rebased y taps and per-row sample ranges.
template <typename T>
void PoolBins(const RoiWork<T>& w, const ChannelsLast<T>& in, int64_t b0, int64_t b1, float* bins) {
  const Problem& p = w.p;
  Scratch& s = w.s;
  const int64_t PW = p.params.pooled_width, gh = w.gy.grid, gw = w.gx.grid, n = w.c_end - w.c_begin;
  for (int64_t bin = b0; bin < b1; ++bin) {
    const int64_t ph = bin / PW, pw = bin % PW;
    const int64_t ib = s.band_samples[2 * ph], ie = s.band_samples[2 * ph + 1];
    PoolTileBin(w, in, s.y_tile_taps.data() + ph * gh, w.tx + pw * gw, ib, ie, n, bins + (bin - b0) * n);
  }
}

// ProcessShared for a RoI whose bins all fit the bins buffer. Until its last band, the RoI's bins stay
// channels-last in its own f32 partial block (n * PH * PW floats, contiguous: for f32 outputs its output block):
// a band pools its bin rows there in place, resuming a row from the state it left. The last band copies the
// earlier rows into the bins buffer and turns the whole RoI planar at once. Planar partial state instead cost a
// cache line per plane for every few bins a band wrote or resumed, each read from memory first.
template <typename T>
void ProcessSharedWhole(const RoiWork<T>& w, const ChannelsLast<T>& in, int64_t ph0, int64_t ph1, bool resumes) {
  const Problem& p = w.p;
  Scratch& s = w.s;
  const int64_t PH = p.params.pooled_height, PW = p.params.pooled_width, C = p.channels;
  const int64_t gh = w.gy.grid, n = w.c_end - w.c_begin;
  const int64_t roi_offset = (w.k * C + w.c_begin) * PH * PW;
  float* const held = w.pass.partial + roi_offset;  // the channels-last state between bands
  if (ph1 < PH || s.band_samples[2 * (PH - 1) + 1] < gh) {  // a later band goes on
    PoolBins(w, in, ph0 * PW, ph1 * PW, held + ph0 * PW * n);
    return;
  }
  float* const bins = s.bins.get();
  std::memcpy(bins, held, static_cast<size_t>((resumes ? ph0 + 1 : ph0) * PW * n) * sizeof(float));
  PoolBins(w, in, ph0 * PW, PH * PW, bins + ph0 * PW * n);
  T* const out = static_cast<T*>(p.output) + roi_offset;
  if (!w.pass.stream_output || ph0 > 0) {  // ph0 > 0: earlier bands held state in the output, now in cache
    BinsToPlanes(bins, PH * PW, n, n, out, PH * PW);
    return;
  }
  // A RoI within one band: its planes are one contiguous block of the output, never touched yet. Stage them in
  // the (here unused) tile, then stream the block out, so that its lines are not first read from memory.
  T* const staged = reinterpret_cast<T*>(s.tile.get());
  BinsToPlanes(bins, PH * PW, n, n, staged, PH * PW);
  StreamCopy(staged, n * PH * PW, out);
}

// The RoI's bins from the channels-last band of map rows that the plan prepared for all RoIs of the image
// (Pass::channels_last_rows): only the sample rows in the band, with y taps made relative to its first row. The
// bins with samples in the band are consecutive rows of bins; they are pooled channels-last and transposed into
// the planar output in register tiles. A bin row that began in an earlier band resumes from its partial state
// in Pass::partial (first/last protocol). That state is channels-last when all the RoI's bins fit the bins
// buffer (ProcessSharedWhole), else planar, chunk by chunk of bins.
template <typename T>
void ProcessShared(const RoiWork<T>& w) {
  const Problem& p = w.p;
  const Pass& pass = w.pass;
  Scratch& s = w.s;
  const int64_t PH = p.params.pooled_height, PW = p.params.pooled_width, C = p.channels;
  const int64_t gh = w.gy.grid, n = w.c_end - w.c_begin;
  HWY_DASSERT(w.batch == pass.image);
  const int64_t r0 = pass.rows_begin;
  const T* const rows = static_cast<const T*>(pass.channels_last_rows);
  const T* const band_end = rows + (pass.rows_end - r0) * p.width * C;
  const ChannelsLast<T> in = {rows + w.c_begin, band_end, p.width * C, C};
  float* const bins = s.bins.get();
  const int64_t roi_offset = (w.k * C + w.c_begin) * PH * PW;
  T* const planes = static_cast<T*>(p.output) + roi_offset;
  float* const partial_planes = pass.partial + roi_offset;
  // Sample rows [ib, ie) of each bin row in the band (y taps rebased), and the bin rows [ph0, ph1) that have any.
  int64_t ph0 = PH, ph1 = 0, resume_ph = -1;
  for (int64_t ph = 0; ph < PH; ++ph) {
    const AxisTap* ty = w.ty + ph * gh;
    int64_t ib = 0, ie = 0;
    if (!SampleRowsInBand(w.gy, ty, ph, pass.band_rows, pass.band, pass.num_bands, &ib, &ie)) continue;
    s.band_samples[2 * ph] = ib;
    s.band_samples[2 * ph + 1] = ie;
    ph0 = std::min(ph0, ph);
    ph1 = ph + 1;
    if (ib > 0) resume_ph = ph;
    AxisTap* band_ty = s.y_tile_taps.data() + ph * gh;
    for (int64_t iy = ib; iy < ie; ++iy) {
      band_ty[iy] = ty[iy];
      if (!ty[iy].valid) continue;
      HWY_DASSERT(ty[iy].lo >= r0 && ty[iy].hi < pass.rows_end);
      band_ty[iy].lo -= r0;
      band_ty[iy].hi -= r0;
    }
  }
  if (ph0 >= ph1) return;  // no sample row of the RoI in this band (sparse grids)
  if (n * PH * PW <= static_cast<int64_t>(kTileFloats)) {
    ProcessSharedWhole(w, in, ph0, ph1, resume_ph >= 0);
    return;
  }
  // Bins [b0, b1) of the rows in the band, as many at a time as the bins buffer holds.
  const int64_t bins_per_chunk = std::max<int64_t>(1, static_cast<int64_t>(kTileFloats) / n);
  for (int64_t b0 = ph0 * PW; b0 < ph1 * PW; b0 += bins_per_chunk) {
    const int64_t b1 = std::min(ph1 * PW, b0 + bins_per_chunk);
    if (resume_ph >= 0) {  // the chunk's bins of the resumed row: planar partial state -> channels-last bins
      const int64_t r_begin = std::max(b0, resume_ph * PW), r_end = std::min(b1, (resume_ph + 1) * PW);
      if (r_begin < r_end) {
        TransposeTile(partial_planes + r_begin, PH * PW, n, 0, n, 0, r_end - r_begin, bins + (r_begin - b0) * n);
      }
    }
    PoolBins(w, in, b0, b1, bins);
    // Finished rows go to the output, rows that go on in a later band to the partial state: runs of bins whose
    // rows agree.
    auto finished = [&](int64_t bin) { return s.band_samples[2 * (bin / PW) + 1] == gh; };
    for (int64_t r0_bin = b0; r0_bin < b1;) {
      int64_t r1_bin = std::min(b1, (r0_bin / PW + 1) * PW);
      while (r1_bin < b1 && finished(r1_bin) == finished(r0_bin)) r1_bin = std::min(b1, r1_bin + PW);
      const float* src = bins + (r0_bin - b0) * n;
      if (finished(r0_bin)) {
        BinsToPlanes(src, r1_bin - r0_bin, n, n, planes + r0_bin, PH * PW);
      } else {
        BinsToPlanes(src, r1_bin - r0_bin, n, n, partial_planes + r0_bin, PH * PW);
      }
      r0_bin = r1_bin;
    }
  }
}

// Channels per tile so that max(pixels, bins) vectors of them fit the tile budget; 0 if not even one fits.
int64_t ChannelBlock(int64_t pixels, int64_t bins, int64_t lanes, int64_t channels) {
  const int64_t budget = static_cast<int64_t>(kTilePixels) * lanes;
  const int64_t blocks = budget / std::max<int64_t>({pixels, bins, 1}) / lanes * lanes;
  return std::min(blocks, (channels + lanes - 1) / lanes * lanes);
}

}  // namespace

template <typename T>
void RoiAlignNchw(const Problem& p, const Pass& pass, int64_t roi_begin, int64_t roi_end, int64_t c_begin,
                  int64_t c_end, Scratch& scratch) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t PH = p.params.pooled_height, PW = p.params.pooled_width, C = c_end - c_begin;
  for (int64_t k = roi_begin; k < roi_end; ++k) {
    const CallGeometry& g = *pass.geometry;
    const RoiSampling& roi = g.rois[static_cast<size_t>(k)];
    const RoiWork<T> w = {p,     pass,   scratch, k, roi.batch, c_begin, c_end, roi.gy, roi.gx, g.y.data() + roi.y,
                          g.x.data() + roi.x};
    const int64_t gh = w.gy.grid, gw = w.gx.grid;
    if (pass.channels_last_rows != nullptr) {
      ProcessShared(w);
      continue;
    }
    // Largest rectangle of bins whose footprint fits the tile: the whole RoI, else a row of bins, else one bin,
    // else one bin a few sample rows at a time (huge sparse grids only).
    int64_t* rows = scratch.rows.data();
    int64_t* cols = scratch.cols.data();
    const int64_t nx_all = DistinctTaps(w.tx, 1, 0, 0, PW * gw, cols);
    const int64_t ny_all = DistinctTaps(w.ty, 1, 0, 0, PH * gh, rows);
    const int64_t whole = ChannelBlock(ny_all * nx_all, PH * PW, lanes, C);
    if (whole > 0) {
      ProcessRect(w, 0, PH, 0, PW, std::max<int64_t>(gh, 1), whole);
      continue;
    }
    for (int64_t ph = 0; ph < PH; ++ph) {
      const int64_t ny_row = DistinctTaps(w.ty + ph * gh, 1, 0, 0, gh, rows);
      const int64_t row = ChannelBlock(ny_row * nx_all, PW, lanes, C);
      if (row > 0) {
        ProcessRect(w, ph, ph + 1, 0, PW, std::max<int64_t>(gh, 1), row);
        continue;
      }
      for (int64_t pw = 0; pw < PW; ++pw) {
        const int64_t ny_bin = ny_row;  // a bin's rows are its row's rows
        const int64_t nx_bin = DistinctTaps(w.tx + pw * gw, 1, 0, 0, gw, cols);
        const int64_t bin = ChannelBlock(ny_bin * nx_bin, 1, lanes, C);
        if (bin > 0) {
          ProcessRect(w, ph, ph + 1, pw, pw + 1, std::max<int64_t>(gh, 1), bin);
        } else {
          // Each sample row touches at most 2 pixel rows; nx_bin <= 2 * grid_w <= kTilePixels / 2.
          const int64_t rows_per_chunk = std::max<int64_t>(1, static_cast<int64_t>(kTilePixels) / (2 * nx_bin));
          ProcessRect(w, ph, ph + 1, pw, pw + 1, rows_per_chunk, lanes);
        }
      }
    }
  }
  if (pass.stream_output) hwy::FlushStream();  // order StreamCopy's stores before the caller's barrier
}

TargetKernel NchwTargetKernel() {
  return {HWY_TARGET, KernelPerDType([](auto* t) { return &RoiAlignNchw<std::remove_pointer_t<decltype(t)>>; })};
}

}  // namespace HWY_NAMESPACE
}  // namespace internal
}  // namespace roialign
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace roialign {
namespace internal {

const KernelDescriptor& RoiAlignNchwDescriptor() {
  static TargetKernel (*const kMakers[])() = ROIALIGN_COMPILED_TARGETS(NchwTargetKernel);
  static const std::vector<TargetKernel> kTargets = CompiledTargets(kMakers);
  PlannerNeeds needs;
  needs.tiles = true;
  needs.band_transform = true;
  // 64 channels: one 8-vector AVG pass on AVX2, and a block's planes stay in the last-level cache while every
  // RoI reads them (the choice was measured with bench/ab.py; its commit has the numbers).
  needs.channel_block = 64;
  static const KernelDescriptor kDescriptor = {"roi_align_nchw", Layout::kNCHW, 0, needs, kTargets.data(),
                                               kTargets.size()};
  return kDescriptor;
}

}  // namespace internal
}  // namespace roialign
#endif  // HWY_ONCE
