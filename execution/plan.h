// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The execution plan of one call: a plain function of the validated problem, how the implementation reaches the
// pixels, and the threads it may use. It owns every decision: the per-call geometry, bands, copies, chunks and
// channel blocks. Run executes exactly this plan; tests build plans directly (with forced bands) and execute them
// to cover every path whatever the heuristics decide.
#ifndef ROIALIGN_EXECUTION_PLAN_H_
#define ROIALIGN_EXECUTION_PLAN_H_

#include <cstdint>
#include <memory_resource>
#include <vector>

#include "execution/parallel.h"
#include "kernels/kernel_descriptor.h"
#include "kernels/merged_taps.h"
#include "kernels/problem.h"
#include "kernels/roi_geometry.h"

namespace roialign {
namespace internal {

// Outputs larger than this do not stay in a typical last-level cache (shared with the map's bands), so they are
// written with non-temporal stores: the forward's finished bins, the backward's dX.
constexpr double kStreamOutputBytes = 16.0 * 1024 * 1024;

// How an implementation reaches the pixels, from its descriptor (whole RoIs or the microkernel) and the layout
// table (planar or channels in contiguous runs).
enum class PixelAccess {
  kWholeRois,  // the scalar reference: whole bins straight from the map
  kInPlace,    // the microkernel on the map itself, whose channels are contiguous
  kCopied,     // planar maps: the planner copies pixels channels-last (per-RoI tiles or a band of map rows)
};
PixelAccess AccessOf(const KernelFns& fns, Layout layout);

// A run of merged taps in CallGeometry::merged.
struct TapRun {
  int64_t begin = 0, count = 0;
};

// One RoI's sampling, computed once per call by the planner.
struct RoiSampling {
  int64_t batch = 0;
  AxisGeometry gy, gx;
  int64_t y = 0, x = 0;  // its PH * gy.grid y taps start at CallGeometry::y[y], its PW * gx.grid x taps at x[x]
  int64_t runs = 0;      // AVG: the merged taps of its PH bin rows, then of its PW bin columns, at runs[runs]
  // With bands: whether its sample rows split by band (row_bands.h), and the bands they meet; else it runs whole
  // in band 0.
  bool split = false;
  // In-place maps: with stage_output each channel group is pooled into scratch and streamed out
  // (Plan::staged_channels); each microkernel call takes at most chunk_rows sample rows of a bin (a large adaptive
  // bin in pieces whose pixels stay in L2).
  bool stage_output = false;
  int32_t chunk_rows = 0;
  int64_t first_band = 0, last_band = 0;
};

// Planar maps on per-RoI tiles (tile_plan.h): a rectangle of a RoI's bins, [ph0, ph1) x [pw0, pw1), whose tap
// pixels one channels-last tile holds. The tile takes kTilePixels * lanes / footprint channels, in whole vectors
// (footprint 0: one vector), and its sample rows go chunk_rows at a time. Its distinct tap columns are
// CallGeometry::tile_pixels[cols, cols + nx); its bins' x taps, as positions among them, are
// tile_taps[x_taps + (pw - pw0) * grid_w + ix]. Each chunk of rows has its own distinct tap rows
// (tile_chunks[chunks + j]), and its sample rows' y taps are tile_taps[y_taps + (ph - ph0) * grid_h + iy].
struct TileRect {
  int64_t ph0 = 0, ph1 = 0, pw0 = 0, pw1 = 0, chunk_rows = 0, footprint = 0;
  int64_t cols = 0, nx = 0, x_taps = 0, y_taps = 0, chunks = 0;
};
// One chunk of a rectangle's sample rows: its distinct tap rows, tile_pixels[rows, rows + ny).
struct TileChunk {
  int64_t rows = 0, ny = 0;
};

// Every computed RoI's taps, indexed by RoI index, and AVG's merged taps with the strides of the channels-last
// pixels the microkernel will read (the map's own, or a copied band's); RoIs on per-RoI tiles, their rectangles
// (roi_rects, by RoI index, runs of tile_rects).
// Arrays from the plan's memory resource (the heap, or a workspace run's arena).
struct CallGeometry {
  explicit CallGeometry(std::pmr::memory_resource* r)
      : rois(r), y(r), x(r), runs(r), merged(r), roi_rects(r), tile_rects(r), tile_chunks(r), tile_pixels(r),
        tile_taps(r) {}
  std::pmr::vector<RoiSampling> rois;
  std::pmr::vector<AxisTap> y, x;
  std::pmr::vector<TapRun> runs;
  std::pmr::vector<MergedTap> merged;
  std::pmr::vector<TapRun> roi_rects;
  std::pmr::vector<TileRect> tile_rects;
  std::pmr::vector<TileChunk> tile_chunks;
  std::pmr::vector<int64_t> tile_pixels;
  std::pmr::vector<AxisTap> tile_taps;
};

// One pass over a subset of the RoIs: all their bins, or the sample rows of one band of map rows.
struct PlannedPass {
  explicit PlannedPass(std::pmr::memory_resource* r) : rois(r) {}
  int64_t band = 0;  // with Plan::band_rows > 0: the band this pass processes
  // Planar kernels: first make rows [rows_begin, rows_end) of image `image` channels-last for this pass.
  bool transform = false;
  int64_t image = 0, rows_begin = 0, rows_end = 0;
  std::pmr::vector<int64_t> rois;  // in locality order
};

// Channels of a blocked map pooled per microkernel call, a multiple of every block: all blocks of a bin in one
// call would touch a page per block per tap row, more than the first-level TLB holds at 1024 channels.
inline constexpr int64_t kBlockedGroupChannels = 256;

struct Plan {
  explicit Plan(std::pmr::memory_resource* r = std::pmr::get_default_resource()) : geometry(r), passes(r) {}
  CallGeometry geometry;  // every RoI's taps, computed once for the call
  PixelAccess access = PixelAccess::kWholeRois;
  int threads = 1;
  // Tasks are (channel block, RoI) pairs, block-major: consecutive tasks share a block and follow `rois`.
  int64_t channels_per_task = 0, channel_blocks = 1;
  int64_t band_rows = 0, num_bands = 1;  // band_rows 0: no bands
  std::pmr::vector<PlannedPass> passes;  // run one after another (bins carry partial state between bands)
  bool stream_output = false;            // non-temporal stores for finished bins
  // Blocked outputs whose blocks are narrower than a cache line: channels per group that a RoI finished in one pass
  // pools into scratch laid out like its output, then streams out in whole lines (0: bins written in place).
  int64_t staged_channels = 0;
  // In-place blocked maps: channels per group of all a RoI's bins (kBlockedGroupChannels; staged RoIs:
  // staged_channels); 0: a task's channels in one group.
  int64_t group_channels = 0;
  // Bins keep partial state in the output itself (it is f32); otherwise in f32 working memory.
  bool partial_in_output = true;
  int64_t transform_elements = 0;  // size of the channels-last band buffer
  // Rotated RoIs (pool_rotated.cc): each bin's taps per sample, found once per call: by the bin's task when the
  // channels are one block, else from the call's table of them (rotated_table.h, rotated_table_bytes of working
  // memory, filled before the passes); planar maps in one pass per image made channels-last whole.
  bool rotated = false;
  int64_t rotated_table_bytes = 0;
  // AVG: a rotated bin's taps are sorted and the pixels its samples share merged (each read once), or each sample's
  // four taps are read as they are (MergesRotatedPixels).
  bool merge_rotated_pixels = false;
};

// Whether a rotated AVG call of `channels` channels merges its bins' shared pixels: sorting a bin's taps costs more
// than the loads it saves below kMergePixelsChannels (docs/layouts.md, "the rotated backward at 40x"). On the call's
// channels, not a task's, so every layout, thread count and split makes the same choice and gives the same bits.
inline constexpr int64_t kMergePixelsChannels = 512;
inline bool MergesRotatedPixels(int64_t channels) { return channels >= kMergePixelsChannels; }

// The plan Run executes: RoIs in locality order; row bands when the RoIs share pixels of a map larger than a
// band; the band transform for planar maps when the RoIs' footprint reaches a quarter of the map; channel
// blocks; streaming stores for outputs larger than the last-level cache. Every array comes from `memory`, sized
// exactly before it is filled (a workspace holds no slack for growth). Throws std::bad_alloc.
Plan MakePlan(const Problem& problem, PixelAccess access, const Threading& threading,
              std::pmr::memory_resource* memory = std::pmr::get_default_resource());

// The plan with bands of `band_rows` map rows, whatever the heuristics say: in-place maps are read band by band,
// planar ones through the band transform (RoIs that cannot be split by band run on tiles after the bands). For
// tests and for MakePlan. Throws std::bad_alloc.
Plan MakeBandPlan(const Problem& problem, PixelAccess access, const Threading& threading,
                  int64_t band_rows, std::pmr::memory_resource* memory = std::pmr::get_default_resource());

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_PLAN_H_
