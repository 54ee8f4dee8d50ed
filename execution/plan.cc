// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "execution/plan.h"

#include <algorithm>
#include <utility>

#include "core/enums.h"
#include "execution/parallel.h"
#include "execution/roi_order.h"
#include "kernels/roi_geometry.h"
#include "kernels/row_bands.h"

namespace roialign {
namespace internal {
namespace {

// Planar kernels: when the RoIs' tap pixels (their footprint) reach a quarter of the map's pixels, turn the map
// channels-last once for all RoIs instead of copying each RoI's taps into a tile, one band of rows at a time, and
// run the channels-last bin loop on whole pixels over each band as the NHWC kernels do. The band (a few MB plus
// one row) is written just before the RoIs read it, so it is still in the last-level cache. A tile copy pays a
// cache line of every plane per run of tap columns, so the transform pays before the footprint reaches the map;
// with few RoIs (10 to 30 on the default map) tiles stay faster (docs/performance-model.md).
constexpr double kBandTransformFootprint = 0.25;
constexpr double kMaxBandBufferBytes = 64.0 * 1024 * 1024;
bool UseBandTransform(const PlannerNeeds& needs, const Problem& p, int64_t band_rows) {
  if (!needs.band_transform) return false;
  const double pixels = static_cast<double>(p.batch) * static_cast<double>(p.height * p.width);
  const double rows = static_cast<double>(std::min(p.height, band_rows + 1));
  return p.footprint_pixels >= kBandTransformFootprint * pixels &&
         rows * static_cast<double>(p.width * p.channels * BytesOf(p.params.dtype)) <= kMaxBandBufferBytes;
}

// Outputs larger than this do not stay in a typical last-level cache (shared with the map's bands), so
// channels-last kernels write finished bins with non-temporal stores.
constexpr double kStreamOutputBytes = 16.0 * 1024 * 1024;

// Channels per task. Planar kernels on per-RoI tiles: a fixed block of channels for all RoIs before the next
// block, so the block's planes stay in the last-level cache while every RoI reads them. Channels-last loops read
// each tap pixel's channels contiguously, which the prefetchers stream; they keep whole pixels per task and split
// channels (in multiples of 64, a multiple of every vector width) only as far as needed for about 4 tasks per
// thread.
int64_t ChannelsPerTask(const PlannerNeeds& needs, const Problem& p, bool channels_last, const Threading& threading) {
  if (!channels_last && needs.channel_block > 0) return needs.channel_block;
  const int64_t K = RunCount(p), C = p.channels;
  const int64_t max_blocks = (C + 63) / 64;
  const int max_threads = ResolveThreadCount(threading, K * max_blocks);
  const int64_t blocks = std::min<int64_t>(max_blocks, std::max<int64_t>(1, (4 * max_threads + K - 1) / K));
  return ((C + blocks - 1) / blocks + 63) / 64 * 64;
}

// Fills the parts of a plan that do not depend on bands.
void PlanTasks(const Problem& p, const PlannerNeeds& needs, const Threading& threading, bool banded, Plan* plan) {
  const int64_t C = p.channels;
  plan->channels_per_task = ChannelsPerTask(needs, p, banded || needs.row_bands, threading);
  plan->channel_blocks = (C + plan->channels_per_task - 1) / plan->channels_per_task;
  plan->threads = ResolveThreadCount(threading, RunCount(p) * plan->channel_blocks);
  const double output_bytes = static_cast<double>(RunCount(p)) *
                              static_cast<double>(p.params.pooled_height * p.params.pooled_width * C) *
                              static_cast<double>(BytesOf(p.params.dtype));
  // Channels-last kernels stream finished bins, planar ones the planes of RoIs finished in a band pass.
  plan->stream_output = (needs.row_bands || banded) && output_bytes > kStreamOutputBytes;
  plan->partial_in_output = p.params.dtype == DType::kF32;
}

// Each computed RoI's taps, and for AVG its bin rows' and bin columns' merged taps.
void BuildGeometry(const Problem& p, CallGeometry* g) {
  const int64_t PH = p.params.pooled_height, PW = p.params.pooled_width, n = RunCount(p);
  // Channels-last maps are read in place, so their AVG taps merge once here with the map's strides; planar
  // kernels merge theirs in tile coordinates.
  const bool avg = p.params.pool_mode == PoolMode::kAvg && p.params.layout == Layout::kNHWC;
  g->rois.resize(static_cast<size_t>(p.num_rois));
  int64_t ny = 0, nx = 0;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t k = RunRoi(p, j);
    const RoiRecord r = RoiAt(p.rois, p.batch_indices, k);
    RoiSampling& s = g->rois[static_cast<size_t>(k)];
    s.batch = r.batch;
    s.gy = AxisOf(r.y1, r.y2, PH, p.params);
    s.gx = AxisOf(r.x1, r.x2, PW, p.params);
    s.y = ny;
    s.x = nx;
    s.runs = j * (PH + PW);
    ny += PH * s.gy.grid;
    nx += PW * s.gx.grid;
  }
  g->y.resize(static_cast<size_t>(ny));
  g->x.resize(static_cast<size_t>(nx));
  g->runs.resize(avg ? static_cast<size_t>(n * (PH + PW)) : 0);
  g->merged.resize(avg ? static_cast<size_t>(2 * (ny + nx)) : 0);
  int64_t m = 0;
  auto merge = [&](const AxisTap* taps, int64_t count, int64_t stride, TapRun* run) {
    *run = {m, MergeTaps(taps, count, stride, g->merged.data() + m)};
    m += run->count;
  };
  for (int64_t j = 0; j < n; ++j) {
    const RoiSampling& s = g->rois[static_cast<size_t>(RunRoi(p, j))];
    AxisTap* const ty = g->y.data() + s.y;
    AxisTap* const tx = g->x.data() + s.x;
    FillAxisTaps(s.gy, PH, p.height, ty);
    FillAxisTaps(s.gx, PW, p.width, tx);
    if (!avg) continue;
    TapRun* const runs = g->runs.data() + s.runs;
    for (int64_t ph = 0; ph < PH; ++ph) merge(ty + ph * s.gy.grid, s.gy.grid, p.width * p.channels, runs + ph);
    for (int64_t pw = 0; pw < PW; ++pw) merge(tx + pw * s.gx.grid, s.gx.grid, p.channels, runs + PH + pw);
  }
}

Plan DirectPlan(const Problem& p, const PlannerNeeds& needs, const Threading& threading) {
  Plan plan;
  BuildGeometry(p, &plan.geometry);
  PlanTasks(p, needs, threading, false, &plan);
  PlannedPass pass;
  pass.rois = LocalityOrder(p);
  plan.passes.push_back(std::move(pass));
  return plan;
}

Plan BandPlan(const Problem& p, const PlannerNeeds& needs, const Threading& threading, int64_t band_rows,
              bool transform) {
  Plan plan;
  BuildGeometry(p, &plan.geometry);
  PlanTasks(p, needs, threading, true, &plan);
  const int64_t PH = p.params.pooled_height, H = p.height;
  plan.band_rows = band_rows;
  plan.num_bands = (H + band_rows - 1) / band_rows;
  // Each RoI's first and last band, and whether its rows can be split by band at all (row_bands.h).
  std::vector<RoiSampling>& rois = plan.geometry.rois;
  for (int64_t j = 0; j < RunCount(p); ++j) {
    RoiSampling& s = rois[static_cast<size_t>(RunRoi(p, j))];
    s.split = RoiBands(s.gy, PH, plan.geometry.y.data() + s.y, band_rows, plan.num_bands, &s.first_band,
                       &s.last_band);
  }
  const std::vector<int64_t> order = LocalityOrder(p);
  // Channels-last kernels read the bands in place, all images at once (RoIs that cannot be split run whole in
  // band 0); planar kernels read each image's band from the channels-last copy, and the RoIs that cannot be
  // split run afterwards on per-RoI tiles.
  const int64_t images = transform ? p.batch : 1;
  for (int64_t image = 0; image < images; ++image) {
    for (int64_t band = 0; band < plan.num_bands; ++band) {
      PlannedPass pass;
      pass.band = band;
      pass.band_rows = band_rows;
      for (int64_t k : order) {
        const RoiSampling& s = rois[static_cast<size_t>(k)];
        if (s.first_band > band || band > s.last_band) continue;
        if (transform && (!s.split || s.batch != image)) continue;
        pass.rois.push_back(k);
      }
      if (pass.rois.empty()) continue;
      if (transform) {
        pass.transform = true;
        pass.image = image;
        BandMapRows(band, band_rows, plan.num_bands, H, &pass.rows_begin, &pass.rows_end);
        plan.transform_elements =
            std::max(plan.transform_elements, (pass.rows_end - pass.rows_begin) * p.width * p.channels);
      }
      plan.passes.push_back(std::move(pass));
    }
  }
  if (transform) {
    PlannedPass tiles;
    for (int64_t k : order) {
      if (!rois[static_cast<size_t>(k)].split) tiles.rois.push_back(k);
    }
    if (!tiles.rois.empty()) plan.passes.push_back(std::move(tiles));
  }
  return plan;
}

}  // namespace

Plan MakePlan(const Problem& p, const PlannerNeeds& needs, const Threading& threading) {
  const int64_t band_rows = BandRows(p.width, p.channels, BytesOf(p.params.dtype));
  if (UseBandTransform(needs, p, band_rows)) return BandPlan(p, needs, threading, band_rows, true);
  // Bands pay when RoIs share pixels: only when together they read more pixels than the map holds (the planar
  // rule too). A few RoIs go straight over the map in one parallel region instead of one per band.
  const int64_t num_bands = (p.height + band_rows - 1) / band_rows;
  const double pixels = static_cast<double>(p.batch * p.height * p.width);
  if (needs.row_bands && num_bands > 1 && p.footprint_pixels > pixels) {
    return BandPlan(p, needs, threading, band_rows, false);
  }
  return DirectPlan(p, needs, threading);
}

Plan MakeBandPlan(const Problem& p, const PlannerNeeds& needs, const Threading& threading, int64_t band_rows) {
  if (band_rows <= 0 || !(needs.row_bands || needs.band_transform)) return DirectPlan(p, needs, threading);
  return BandPlan(p, needs, threading, band_rows, needs.band_transform);
}

}  // namespace internal
}  // namespace roialign
