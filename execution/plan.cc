// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "execution/plan.h"

#include <algorithm>
#include <utility>

#include "core/enums.h"
#include "execution/parallel.h"
#include "execution/roi_order.h"
#include "execution/rotated_table.h"
#include "kernels/roi_geometry.h"
#include "execution/row_bands.h"
#include "execution/tile_plan.h"

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
bool UseBandTransform(PixelAccess access, const Problem& p, int64_t band_rows) {
  if (access != PixelAccess::kCopied) return false;
  const double pixels = static_cast<double>(p.batch) * static_cast<double>(p.height * p.width);
  const double rows = static_cast<double>(std::min(p.height, band_rows + 1));
  return p.footprint_pixels >= kBandTransformFootprint * pixels &&
         rows * static_cast<double>(p.width * p.channels * BytesOf(p.params.dtype)) <= kMaxBandBufferBytes;
}

// A blocked output streams only blocks of whole cache lines: a bin writes one block per plane, and a part line
// written non-temporally waits in a write-combining buffer for the next bin's half, or goes to memory partial.
constexpr int64_t kCacheLineBytes = 64;
bool BlocksFillLines(const Problem& p) {
  if (!IsBlocked(p.params.layout)) return true;
  return EnumTraits<Layout>::kChannelBlock[static_cast<size_t>(p.params.layout)] * BytesOf(p.params.dtype) %
             kCacheLineBytes == 0;
}

// A bin of a blocked output writes part of a line per plane, which an ordinary store first reads from memory.
// Outputs that would stream but for that (BlocksFillLines) pool each RoI's channels into scratch, a group of at
// most this many bytes (L2-resident) at a time, and stream the group's planes out, one contiguous run of lines.
constexpr int64_t kStagedOutputBytes = 256 * 1024;
int64_t StagedChannels(const Problem& p) {
  const int64_t block = EnumTraits<Layout>::kChannelBlock[static_cast<size_t>(p.params.layout)];
  const int64_t block_bytes = block * p.params.pooled_height * p.params.pooled_width * BytesOf(p.params.dtype);
  return std::min(kBlockedGroupChannels, kStagedOutputBytes / block_bytes * block);
}

// Channels per task. Per-RoI tiles of planar maps: a fixed block of 64 channels for all RoIs before the next block, so
// the block's planes stay in the last-level cache while every RoI reads them (and one 8-vector AVG pass on AVX2).
// Channels-last reads take each tap pixel's channels contiguously, which the prefetchers stream; they keep whole
// pixels per task and split channels (in multiples of 64, a multiple of every vector width) only as far as needed
// for about 4 tasks per thread.
constexpr int64_t kTileChannelBlock = 64;
int64_t ChannelsPerTask(PixelAccess access, const Problem& p, bool channels_last, const Threading& threading) {
  if (!channels_last && access == PixelAccess::kCopied) return kTileChannelBlock;
  const int64_t K = RunCount(p), C = p.channels;
  const int64_t max_blocks = (C + 63) / 64;
  const int max_threads = ResolveThreadCount(threading, K * max_blocks);
  const int64_t blocks = std::min<int64_t>(max_blocks, std::max<int64_t>(1, (4 * max_threads + K - 1) / K));
  return ((C + blocks - 1) / blocks + 63) / 64 * 64;
}

// Fills the parts of a plan that do not depend on bands.
void PlanTasks(const Problem& p, PixelAccess access, const Threading& threading, bool banded, Plan* plan) {
  const int64_t C = p.channels;
  const bool in_place = access == PixelAccess::kInPlace;
  plan->access = access;
  plan->channels_per_task = ChannelsPerTask(access, p, banded || in_place, threading);
  plan->channel_blocks = (C + plan->channels_per_task - 1) / plan->channels_per_task;
  plan->threads = ResolveThreadCount(threading, RunCount(p) * plan->channel_blocks);
  const double output_bytes = static_cast<double>(RunCount(p)) *
                              static_cast<double>(p.params.pooled_height * p.params.pooled_width * C) *
                              static_cast<double>(BytesOf(p.params.dtype));
  // In-place maps stream finished bins, planar ones the planes of RoIs finished in a band pass.
  const bool large = output_bytes > kStreamOutputBytes;
  plan->stream_output = (in_place || banded) && large && BlocksFillLines(p);
  plan->staged_channels = in_place && large && !BlocksFillLines(p) ? StagedChannels(p) : 0;
  plan->group_channels = in_place && IsBlocked(p.params.layout) ? kBlockedGroupChannels : 0;
  plan->partial_in_output = p.params.dtype == DType::kF32;
}

// Bytes of tap pixels one microkernel call over a bin's samples may touch before the bin is split into sample-row
// chunks. The microkernel makes one pass per 8 (AVG) or 4 (MAX) vectors of channels; when a large adaptive bin's
// footprint exceeds L2, every pass would refetch it from L3. Chunks keep it in L2 across passes.
constexpr int64_t kBinFootprintBytes = 256 * 1024;

// In-place maps, once bands are known: each computed RoI's sample rows per microkernel call and, for blocked outputs
// that stage (Plan::staged_channels), whether it does: the RoIs one pass finishes, whose planes then hold their
// final values.
void PlanInPlaceRois(const Problem& p, Plan* plan) {
  if (plan->access != PixelAccess::kInPlace) return;
  const int64_t pixel_bytes = p.channels * BytesOf(p.params.dtype);
  const bool staged = plan->staged_channels > 0, banded = plan->band_rows > 0;
  int64_t grid_w = -1;  // RoIs mostly share their grid width (always, with a fixed sampling ratio)
  int32_t chunk_rows = 0;
  for (int64_t j = 0; j < RunCount(p); ++j) {
    RoiSampling& roi = plan->geometry.rois[static_cast<size_t>(RunRoi(p, j))];
    if (roi.gx.grid != grid_w) {
      // Each sample reads 4 pixels. Sized from all the pixel's channels, not from a task's (nor from a block's), so
      // that chunking (which changes AVG's rounding) never depends on how threads split the channels, and a
      // blocked map gives NHWC's bits. At most the largest grid: a bin has no more rows.
      grid_w = roi.gx.grid;
      const int64_t sample_row_bytes = std::max<int64_t>(1, grid_w * 4 * pixel_bytes);
      chunk_rows = static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(1, kBinFootprintBytes / sample_row_bytes),
                                                          ROIALIGN_MAX_SAMPLING_GRID));
    }
    roi.chunk_rows = chunk_rows;
    roi.stage_output = staged && (!banded || !roi.split || roi.first_band == roi.last_band);
  }
}

// Each computed RoI's taps, and for AVG, when the microkernel reads the map in place or through the band
// transform, its bin rows' and columns' merged taps with the strides of those channels-last pixels (per-RoI
// tiles merge in tile coordinates).
void BuildGeometry(const Problem& p, PixelAccess access, bool band_transform, CallGeometry* g) {
  const int64_t PH = p.params.pooled_height, PW = p.params.pooled_width, n = RunCount(p);
  const MapStrides map = access == PixelAccess::kInPlace ? StridesOf(p.params.layout, p.channels, p.height, p.width)
                                                        : StridesOf(Layout::kNHWC, p.channels, p.height, p.width);
  const int64_t row = map.row, pixel = map.pixel;
  const bool avg = p.params.pool_mode == PoolMode::kAvg && (access == PixelAccess::kInPlace || band_transform);
  g->rois.resize(static_cast<size_t>(p.num_rois));
  int64_t ny = 0, nx = 0;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t k = RunRoi(p, j);
    const RoiAxes& a = p.axes[k];
    RoiSampling& s = g->rois[static_cast<size_t>(k)];
    s.batch = a.batch;
    s.gy = a.gy;
    s.gx = a.gx;
    s.y = ny;
    s.x = nx;
    s.runs = j * (PH + PW);
    ny += PH * s.gy.grid;
    nx += PW * s.gx.grid;
  }
  g->y.resize(static_cast<size_t>(ny));
  g->x.resize(static_cast<size_t>(nx));
  g->runs.resize(avg ? static_cast<size_t>(n * (PH + PW)) : 0);
  // Band transforms merge each bin's rows per band (pool_roi.cc PoolRows): the plan merges only their columns.
  g->merged.resize(avg ? static_cast<size_t>(2 * ((band_transform ? 0 : ny) + nx)) : 0);
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
    for (int64_t ph = 0; ph < PH && !band_transform; ++ph) merge(ty + ph * s.gy.grid, s.gy.grid, row, runs + ph);
    for (int64_t pw = 0; pw < PW; ++pw) merge(tx + pw * s.gx.grid, s.gx.grid, pixel, runs + PH + pw);
  }
}

Plan DirectPlan(const Problem& p, PixelAccess access, const Threading& threading, std::pmr::memory_resource* memory) {
  Plan plan(memory);
  // Whole-RoI kernels read validation's geometry (in double for F64) and lay out their own taps.
  if (access != PixelAccess::kWholeRois) BuildGeometry(p, access, false, &plan.geometry);
  PlanTasks(p, access, threading, false, &plan);
  PlannedPass pass(memory);
  pass.rois = LocalityOrder(p, memory);
  if (access == PixelAccess::kCopied) PlanTiles(p, pass.rois, &plan);
  plan.passes.reserve(1);
  plan.passes.push_back(std::move(pass));
  PlanInPlaceRois(p, &plan);
  return plan;
}

Plan BandPlan(const Problem& p, PixelAccess access, const Threading& threading, int64_t band_rows,
              std::pmr::memory_resource* memory) {
  const bool transform = access == PixelAccess::kCopied;
  Plan plan(memory);
  BuildGeometry(p, access, transform, &plan.geometry);
  PlanTasks(p, access, threading, true, &plan);
  const int64_t PH = p.params.pooled_height, H = p.height;
  plan.band_rows = band_rows;
  plan.num_bands = (H + band_rows - 1) / band_rows;
  // Each RoI's first and last band, and whether its rows can be split by band at all (row_bands.h).
  std::pmr::vector<RoiSampling>& rois = plan.geometry.rois;
  for (int64_t j = 0; j < RunCount(p); ++j) {
    RoiSampling& s = rois[static_cast<size_t>(RunRoi(p, j))];
    s.split = RoiBands(s.gy, PH, plan.geometry.y.data() + s.y, band_rows, plan.num_bands, &s.first_band,
                       &s.last_band);
  }
  const std::pmr::vector<int64_t> order = LocalityOrder(p, memory);
  // In-place maps are read band by band, all images at once (RoIs that cannot be split run whole in band 0);
  // planar ones from each image's band made channels-last, and the RoIs that cannot be split run afterwards on
  // per-RoI tiles.
  const int64_t images = transform ? p.batch : 1;
  auto in_pass = [&](const RoiSampling& s, int64_t image, int64_t band) {
    if (s.first_band > band || band > s.last_band) return false;
    return !transform || (s.split && s.batch == image);
  };
  // Exact sizes first: the passes that have RoIs (and the tile pass), then each pass's RoIs.
  size_t num_passes = 1;
  for (int64_t image = 0; image < images; ++image) {
    for (int64_t band = 0; band < plan.num_bands; ++band) {
      num_passes += std::any_of(order.begin(), order.end(), [&](int64_t k) {
        return in_pass(rois[static_cast<size_t>(k)], image, band);
      }) ? 1 : 0;
    }
  }
  plan.passes.reserve(num_passes);
  for (int64_t image = 0; image < images; ++image) {
    for (int64_t band = 0; band < plan.num_bands; ++band) {
      const auto count = std::count_if(order.begin(), order.end(), [&](int64_t k) {
        return in_pass(rois[static_cast<size_t>(k)], image, band);
      });
      if (count == 0) continue;
      PlannedPass pass(memory);
      pass.band = band;
      pass.rois.reserve(static_cast<size_t>(count));
      for (int64_t k : order) {
        if (in_pass(rois[static_cast<size_t>(k)], image, band)) pass.rois.push_back(k);
      }
      if (transform) {
        pass.transform = true;
        pass.image = image;
        // The map rows the band's sample rows read: their upper taps, plus the row below for the lower taps.
        pass.rows_begin = band * band_rows;
        pass.rows_end = band == plan.num_bands - 1 ? H : std::min(H, (band + 1) * band_rows + 1);
        plan.transform_elements =
            std::max(plan.transform_elements, (pass.rows_end - pass.rows_begin) * p.width * p.channels);
      }
      plan.passes.push_back(std::move(pass));
    }
  }
  if (transform) {
    PlannedPass tiles(memory);
    tiles.rois.reserve(static_cast<size_t>(
        std::count_if(order.begin(), order.end(), [&](int64_t k) { return !rois[static_cast<size_t>(k)].split; })));
    for (int64_t k : order) {
      if (!rois[static_cast<size_t>(k)].split) tiles.rois.push_back(k);
    }
    if (!tiles.rois.empty()) {
      PlanTiles(p, tiles.rois, &plan);
      plan.passes.push_back(std::move(tiles));
    }
  }
  PlanInPlaceRois(p, &plan);
  return plan;
}

// Rotated RoIs: tasks as for axis-aligned ones, with no call geometry (each bin's taps are its samples'), no bands
// and no staging. A planar map has no contiguous channels, so each image with RoIs is made channels-last whole
// before its RoIs run.
Plan RotatedPlan(const Problem& p, PixelAccess access, const Threading& threading,
                 std::pmr::memory_resource* memory) {
  Plan plan(memory);
  plan.rotated = true;
  plan.merge_rotated_pixels = MergesRotatedPixels(p.channels);
  PlanTasks(p, access, threading, access == PixelAccess::kCopied, &plan);
  // Tasks of one channel block find each bin's taps once per call, as a table would, without its traffic (which
  // measured slower: docs/layouts.md); tasks of several blocks would each find them again.
  if (access != PixelAccess::kWholeRois && plan.channel_blocks > 1) plan.rotated_table_bytes = RotatedTableBytes(p);
  plan.staged_channels = 0;
  if (access == PixelAccess::kInPlace) plan.group_channels = IsBlocked(p.params.layout) ? kBlockedGroupChannels : 0;
  const std::pmr::vector<int64_t> order = LocalityOrder(p, memory);
  if (access != PixelAccess::kCopied) {
    PlannedPass pass(memory);
    pass.rois = order;
    plan.passes.reserve(1);
    plan.passes.push_back(std::move(pass));
    return plan;
  }
  auto batch = [&](int64_t k) { return p.axes[k].batch; };
  size_t images = 0;
  for (int64_t image = 0; image < p.batch; ++image) {
    images += std::any_of(order.begin(), order.end(), [&](int64_t k) { return batch(k) == image; }) ? 1 : 0;
  }
  plan.passes.reserve(images);
  for (int64_t image = 0; image < p.batch; ++image) {
    const auto count = std::count_if(order.begin(), order.end(), [&](int64_t k) { return batch(k) == image; });
    if (count == 0) continue;
    PlannedPass pass(memory);
    pass.transform = true;
    pass.image = image;
    pass.rows_end = p.height;
    pass.rois.reserve(static_cast<size_t>(count));
    for (int64_t k : order) {
      if (batch(k) == image) pass.rois.push_back(k);
    }
    plan.passes.push_back(std::move(pass));
  }
  plan.transform_elements = p.height * p.width * p.channels;
  return plan;
}

}  // namespace

PixelAccess AccessOf(const KernelFns& fns, Layout layout) {
  if (fns.whole_rois != nullptr) return PixelAccess::kWholeRois;
  return EnumTraits<Layout>::kChannelBlock[static_cast<size_t>(layout)] == 1 ? PixelAccess::kCopied
                                                                             : PixelAccess::kInPlace;
}

Plan MakePlan(const Problem& p, PixelAccess access, const Threading& threading, std::pmr::memory_resource* memory) {
  if (p.params.roi_kind == RoiKind::kRotated && access != PixelAccess::kWholeRois) {
    return RotatedPlan(p, access, threading, memory);
  }
  const int64_t band_rows = BandRows(p.width, p.channels, BytesOf(p.params.dtype));
  if (UseBandTransform(access, p, band_rows)) return BandPlan(p, access, threading, band_rows, memory);
  // Bands pay when RoIs share pixels: only when together they read more pixels than the map holds (the planar
  // rule too). A few RoIs go straight over the map in one parallel region instead of one per band.
  const int64_t num_bands = (p.height + band_rows - 1) / band_rows;
  const double pixels = static_cast<double>(p.batch * p.height * p.width);
  if (access == PixelAccess::kInPlace && num_bands > 1 && p.footprint_pixels > pixels) {
    return BandPlan(p, access, threading, band_rows, memory);
  }
  return DirectPlan(p, access, threading, memory);
}

Plan MakeBandPlan(const Problem& p, PixelAccess access, const Threading& threading, int64_t band_rows,
                  std::pmr::memory_resource* memory) {
  if (p.params.roi_kind == RoiKind::kRotated) return MakePlan(p, access, threading, memory);  // never banded
  if (band_rows <= 0 || access == PixelAccess::kWholeRois) return DirectPlan(p, access, threading, memory);
  return BandPlan(p, access, threading, band_rows, memory);
}

}  // namespace internal
}  // namespace roialign
