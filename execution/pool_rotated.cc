// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The rotated-RoI driver (docs/semantics.md#rotated-rois): a rotated bin's samples are not separable into rows and
// columns, so each sample's four taps (from the call's table, rotated_table.h) go to the shared microkernel as they
// are (MAX; AVG unless the plan merges the pixels samples share), over the channels-last pixels of the map in
// place (NHWC, blocked) or of the pass's image made channels-last (NCHW, whose bins then go through f32 and are
// transposed into the planes).
#include <algorithm>
#include <cstring>

#include "execution/pool_roi.h"
#include "kernels/roi_geometry.h"

namespace roialign {
namespace internal {
namespace {

// Where a task reads its channels-last pixels: element strides of a map row and of a pixel.
struct PixelStrides {
  int64_t row, pixel;
};

// The taps of samples [s0, s1) of bin (ph, pw) of RoI k, in sample order (iy-major) and each sample's taps in the
// order (y0,x0) (y0,x1) (y1,x0) (y1,x1), into out; returns the count. A sample outside the map is four kOutsideTap
// entries for the MAX modes (a sample of value 0) and nothing for AVG (it adds 0). The taps come from the call's
// table, or, without one, from the geometry.
int64_t RotatedTaps(const Problem& p, int64_t k, int64_t ph, int64_t pw, int64_t s0, int64_t s1,
                    const PixelStrides& at, bool avg, PixelTap* out) {
  int64_t n = 0;
  const RoiAxes& a = p.axes[k];
  const int64_t gw = a.gx.grid;
  const RotatedSampleOf<float>* const bin =
      p.rotated_taps == nullptr ? nullptr
                                : static_cast<const RotatedSampleOf<float>*>(p.rotated_taps) + p.rotated_first[k] +
                                      (ph * p.params.pooled_width + pw) * a.gy.grid * gw;
  for (int64_t s = s0; s < s1; ++s) {
    AxisTap y, x;
    if (bin != nullptr) {
      AxisTapsOf(bin[s], &y, &x);
    } else {
      RotatedSampleTaps(a, ph, pw, s / gw, s % gw, p.height, p.width, &y, &x);
    }
    if (!y.valid || !x.valid) {
      if (!avg) std::fill(out + n, out + n + 4, PixelTap{kOutsideTap, 0.0f}), n += 4;
      continue;
    }
    PixelTapsOf(y, x, at.row, at.pixel, 0, out + n);
    n += 4;
  }
  return n;
}

// Where the plan merges AVG's pixels, a pixel the samples share is read once: the taps sorted by offset (stably, so
// each pixel's weights add in sample order) and equal offsets merged, as MergeTaps merges an axis (a weight of 0
// stays on its own: 0 * Inf is NaN). Pieces longer than kSortedTaps stay as they are: the result then depends only
// on the geometry either way.
constexpr int64_t kSortedTaps = 64;
int64_t MergePixels(PixelTap* taps, int64_t n) {
  if (n > kSortedTaps) return n;
  for (int64_t i = 1; i < n; ++i) {
    const PixelTap t = taps[i];
    int64_t j = i;
    for (; j > 0 && taps[j - 1].offset > t.offset; --j) taps[j] = taps[j - 1];
    taps[j] = t;
  }
  int64_t m = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (m > 0 && taps[m - 1].offset == taps[i].offset && taps[i].weight != 0.0f && taps[m - 1].weight != 0.0f) {
      taps[m - 1].weight += taps[i].weight;
    } else {
      taps[m++] = taps[i];
    }
  }
  return m;
}

// Pools bin (ph, pw) of the RoI over `run` (its out and partial already placed): its samples kBinTaps / 4 at a
// time, the pieces carrying the bin's partial state, so the result is that of one call.
void PoolRotatedBin(const PassContext& ctx, int64_t k, int64_t ph, int64_t pw, const PixelStrides& at,
                    PoolBinFn pool, const ChannelRun& run, Scratch& s) {
  static const PixelTap kOne = {0, 1.0f};  // AVG's one column: each tap is a whole pixel
  const PoolMode mode = ctx.problem->params.pool_mode;
  const bool avg = mode == PoolMode::kAvg;
  const RoiAxes& a = ctx.problem->axes[k];
  const int64_t samples = a.gy.grid * a.gx.grid, step = kBinTaps / 4;
  PixelTap* const taps = s.bin_taps.data();
  for (int64_t s0 = 0; s0 == 0 || s0 < samples; s0 += step) {
    const int64_t s1 = std::min(samples, s0 + step);
    int64_t n = RotatedTaps(*ctx.problem, k, ph, pw, s0, s1, at, avg, taps);
    if (avg && ctx.plan->merge_rotated_pixels) n = MergePixels(taps, n);
    pool(mode, {taps, n, avg ? &kOne : nullptr, avg ? 1 : 0, samples, s0 == 0, s1 == samples}, run);
  }
}

}  // namespace

void PoolRotated(const PassContext& ctx, int64_t k, int64_t c_begin, int64_t c_end, Scratch& s) {
  const Problem& p = *ctx.problem;
  const RoiAxes& a = p.axes[k];
  const int64_t PH = p.params.pooled_height, PW = p.params.pooled_width;
  const int64_t bytes = BytesOf(p.params.dtype), n = c_end - c_begin;
  const MapStrides map = StridesOf(p.params.layout, p.channels, p.height, p.width);
  const MapStrides out = StridesOf(p.params.layout, p.channels, PH, PW);
  if (ctx.band != nullptr) {
    // NCHW: the pass's image channels-last (rows [0, H), every channel), bins pooled in f32 a group of consecutive
    // bins at a time and transposed into the RoI's planes.
    const int64_t C = p.channels, lanes = ctx.fns->lanes();
    const int64_t stride = (n + lanes - 1) / lanes * lanes;
    const int64_t group = std::max<int64_t>(1, static_cast<int64_t>(kTileFloats) / stride);
    const unsigned char* const band = static_cast<const unsigned char*>(ctx.band);
    ChannelRun run = {band + c_begin * bytes, band + p.height * p.width * C * bytes, n, nullptr, nullptr, false};
    unsigned char* const planes = static_cast<unsigned char*>(p.output) + out.Offset(k, c_begin, 0, 0) * bytes;
    for (int64_t b0 = 0; b0 < PH * PW; b0 += group) {
      const int64_t b1 = std::min(PH * PW, b0 + group);
      for (int64_t b = b0; b < b1; ++b) {
        run.partial = s.bins.data() + (b - b0) * stride;
        run.out = run.partial;
        PoolRotatedBin(ctx, k, b / PW, b % PW, {p.width * C, C}, ctx.fns->pool_bin_f32, run, s);
      }
      ctx.fns->bins_to_planes(s.bins.data(), b1 - b0, stride, n, planes + b0 * bytes, out.planes);
    }
    return;
  }
  // The map in place, a group of channels at a time (blocked maps: kBlockedGroupChannels, for the TLB).
  const unsigned char* const input = static_cast<const unsigned char*>(p.input);
  ChannelRun run = {input + map.Offset(a.batch, c_begin, 0, 0) * bytes, input + p.batch * map.image * bytes, n,
                    nullptr, nullptr, ctx.plan->stream_output};
  if (IsBlocked(p.params.layout)) {
    run.block = map.block;
    run.in_block_stride = map.planes;
    run.out_block_stride = out.planes;
  }
  const int64_t group = ctx.plan->group_channels > 0 ? ctx.plan->group_channels : n;
  const unsigned char* const first_in = static_cast<const unsigned char*>(run.in);
  for (int64_t c0 = 0; c0 == 0 || c0 < n; c0 += group) {
    run.channels = std::min(group, n - c0);
    run.in = first_in + c0 / map.block * map.planes * bytes;
    const int64_t roi_offset = out.Offset(k, c_begin + c0, 0, 0);
    for (int64_t ph = 0; ph < PH; ++ph) {
      for (int64_t pw = 0; pw < PW; ++pw) {
        const int64_t offset = roi_offset + ph * out.row + pw * out.pixel;
        run.partial = ctx.partial + offset;
        run.out = static_cast<unsigned char*>(p.output) + offset * bytes;
        PoolRotatedBin(ctx, k, ph, pw, {map.row, map.pixel}, ctx.fns->pool_bin, run, s);
      }
    }
  }
}

}  // namespace internal
}  // namespace roialign
