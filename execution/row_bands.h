// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Row bands: a large map does not fit in the last-level cache, and RoIs sorted by their rows still reach across
// most of it, so every tap pixel would come from DRAM. The plan instead runs all RoIs over one band of map rows
// at a time (a few MB, cache-resident); each bin takes the sample rows that fall in the band and keeps its
// partial state between bands.
#ifndef ROIALIGN_EXECUTION_ROW_BANDS_H_
#define ROIALIGN_EXECUTION_ROW_BANDS_H_

#include <algorithm>
#include <cstdint>

#include "kernels/roi_geometry.h"

namespace roialign {
namespace internal {

// Rows per band: the band's pixels fill about `kBandBytes`. Depends only on the map's shape and element size, so
// the bands (and hence AVG's rounding) are the same for any thread count.
inline constexpr int64_t kBandBytes = 8 * 1024 * 1024;
inline int64_t BandRows(int64_t width, int64_t channels, int64_t element_bytes) {
  return std::max<int64_t>(1, kBandBytes / std::max<int64_t>(1, width * channels * element_bytes));
}

// Band of sample row `iy` of bin `b`: that of its upper tap row; rows outside the map go to the first or last
// band.
inline int64_t BandOfSampleRow(const AxisGeometry& gy, const AxisTap& t, int64_t b, int64_t iy, int64_t band_rows,
                               int64_t num_bands) {
  if (t.valid) return std::min(t.lo / band_rows, num_bands - 1);
  return SamplePosition(gy, b, iy) < 0.0f ? 0 : num_bands - 1;
}

// Whether a RoI's sample rows (taps[b * grid + i] for `pooled` bins) can be split by band, and its first and
// last band. They can when the bands never decrease along the rows, so that each bin meets its rows band by band
// in order (the first/last protocol); inverted boxes and empty grids run whole in band 0 instead. The planner
// decides once per call and records the answer in the call's geometry (RoiSampling).
inline bool RoiBands(const AxisGeometry& gy, int64_t pooled, const AxisTap* taps, int64_t band_rows,
                     int64_t num_bands, int64_t* first, int64_t* last) {
  *first = *last = 0;
  if (gy.grid <= 0 || !(gy.bin > 0.0f)) return false;
  int64_t prev = 0;
  for (int64_t b = 0; b < pooled; ++b) {
    for (int64_t i = 0; i < gy.grid; ++i) {
      const int64_t band = BandOfSampleRow(gy, taps[b * gy.grid + i], b, i, band_rows, num_bands);
      if (band < prev) return false;
      if (b == 0 && i == 0) *first = band;
      prev = band;
    }
  }
  *last = prev;
  return true;
}

// The sample rows [*begin, *end) of bin row `b` (taps[0, grid) are its sample rows) that fall in band `band`;
// the bands never decrease along a RoI split by RoiBands, so they are consecutive. Returns whether any do.
inline bool SampleRowsInBand(const AxisGeometry& gy, const AxisTap* taps, int64_t b, int64_t band_rows,
                             int64_t band, int64_t num_bands, int64_t* begin, int64_t* end) {
  auto band_of = [&](int64_t i) { return BandOfSampleRow(gy, taps[i], b, i, band_rows, num_bands); };
  int64_t i = 0;
  while (i < gy.grid && band_of(i) < band) ++i;
  *begin = i;
  while (i < gy.grid && band_of(i) == band) ++i;
  *end = i;
  return *begin < *end;
}

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_ROW_BANDS_H_
