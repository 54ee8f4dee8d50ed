// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Per-thread working memory of the drivers around the microkernel (pool_roi.cc), sized before the parallel region
// so that the hot path never allocates; kept with the kernel between calls (working_memory.h).
#ifndef ROIALIGN_EXECUTION_SCRATCH_H_
#define ROIALIGN_EXECUTION_SCRATCH_H_

#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <vector>

#include "execution/growing_buffer.h"
#include "kernels/merged_taps.h"
#include "kernels/problem.h"
#include "kernels/roi_geometry.h"

namespace roialign {
namespace internal {

// Pixels in a channels-last tile of a RoI's footprint (staged maps). With one vector of channels per pixel this
// is 256 KiB on AVX-512 (a quarter of a 1 MiB L2); the buffers are sized for 2048-bit SVE (64 lanes).
inline constexpr size_t kTilePixels = 4096;
inline constexpr size_t kTileFloats = kTilePixels * 64;

struct Scratch {
  explicit Scratch(std::pmr::memory_resource* r)
      : y_tile_taps(r), x_tile_taps(r), rows(r), cols(r), merged(r), band_samples(r), bin_taps(r), tile(r), bins(r) {}
  std::pmr::vector<AxisTap> y_tile_taps, x_tile_taps;  // a RoI's taps, indices remapped into the tile
  std::pmr::vector<int64_t> rows, cols;                // distinct tap rows / columns of the tile
  std::pmr::vector<MergedTap> merged;                  // one bin's merged y then x taps (AVG)
  std::pmr::vector<int64_t> band_samples;              // per bin row: its sample rows [begin, end) in the band
  std::pmr::vector<PixelTap> bin_taps;                 // kBinTaps: a piece of one bin's taps for the microkernel
  // kTileFloats floats' bytes: channels-last footprint in the map's element type (not zeroed: kernels write first)
  GrowingBuffer<unsigned char> tile;
  GrowingBuffer<float> bins;  // kTileFloats: channels-last results before transposing

// Sizes every buffer for `problem`; throws std::bad_alloc when memory runs out.
  void Prepare(const Problem& problem, bool needs_tile) {
    const size_t ny = static_cast<size_t>(problem.params.pooled_height * problem.max_grid_h);
    const size_t nx = static_cast<size_t>(problem.params.pooled_width * problem.max_grid_w);
    bin_taps.resize(static_cast<size_t>(kBinTaps));
    merged.resize(static_cast<size_t>(2 * (problem.max_grid_h + problem.max_grid_w)));
    if (!needs_tile) return;
    y_tile_taps.resize(ny);
    band_samples.resize(static_cast<size_t>(2 * problem.params.pooled_height));
    x_tile_taps.resize(nx);
    rows.resize(2 * ny);
    cols.resize(2 * nx);
    tile.Reserve(kTileFloats * sizeof(float));
    bins.Reserve(kTileFloats);
  }
};

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_SCRATCH_H_
