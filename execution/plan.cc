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

Plan DirectPlan(const Problem& p, const PlannerNeeds& needs, const Threading& threading) {
  Plan plan;
  PlanTasks(p, needs, threading, false, &plan);
  PlannedPass pass;
  pass.rois = LocalityOrder(p);
  plan.passes.push_back(std::move(pass));
  return plan;
}

Plan BandPlan(const Problem& p, const PlannerNeeds& needs, const Threading& threading, int64_t band_rows,
              bool transform) {
  Plan plan;
  PlanTasks(p, needs, threading, true, &plan);
  const int64_t K = p.num_rois, PH = p.params.pooled_height, H = p.height;
  plan.band_rows = band_rows;
  plan.num_bands = (H + band_rows - 1) / band_rows;
  // Each RoI's first and last band, and whether its rows can be split by band at all (row_bands.h).
  std::vector<int64_t> first(static_cast<size_t>(K)), last(static_cast<size_t>(K));
  std::vector<char> split(static_cast<size_t>(K));
  std::vector<AxisTap> taps(static_cast<size_t>(PH * p.max_grid_h));
  for (int64_t j = 0; j < RunCount(p); ++j) {
    const int64_t k = RunRoi(p, j);
    const RoiRecord r = RoiAt(p.rois, p.batch_indices, k);
    const AxisGeometry gy = AxisOf(r.y1, r.y2, PH, p.params);
    FillAxisTaps(gy, PH, H, taps.data());
    const size_t i = static_cast<size_t>(k);
    split[i] = RoiBands(gy, PH, taps.data(), band_rows, plan.num_bands, &first[i], &last[i]);
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
        const size_t i = static_cast<size_t>(k);
        if (first[i] > band || band > last[i]) continue;
        if (transform && (!split[i] || RoiAt(p.rois, p.batch_indices, k).batch != image)) continue;
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
      if (!split[static_cast<size_t>(k)]) tiles.rois.push_back(k);
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
