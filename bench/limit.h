// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The limit of docs/performance-model.md: a lower bound on the time of any correct roi_align of a workload, from
// work that cannot be avoided (arithmetic after merging taps, bytes that must move) and peaks measured on this
// machine beside the kernel timings.
#ifndef ROIALIGN_BENCH_LIMIT_H_
#define ROIALIGN_BENCH_LIMIT_H_

#include <cstdint>
#include <vector>

#include "bench/workloads.h"
#include "kernels/roi_geometry.h"

namespace roialign {
namespace bench {

// Per channel, the two-operand operations any kernel needs for one RoI (axes gy, gx of a map H x W, `pooled`
// bins per axis): D - B, where D is the number of distinct pixels the RoI's output depends on (a nonzero weight)
// and B the number of bins that depend on any pixel (docs/performance-model.md has the argument). 0 if D <= B.
double RoiOpsLowerBound(const internal::AxisGeometry& gy, const internal::AxisGeometry& gx, int64_t pooled, int64_t H,
                        int64_t W);

// The 64-byte cache lines of an f32 map (H x W, C channels, in `layout`) that one RoI's bins read in place, a line
// counted once per bin that reads it: as when nothing survives in L1 from one bin to the next. A bin reads its
// distinct tap rows by its distinct tap columns in every plane (NCHW: C planes of 4-byte pixels; NHWC: one plane of
// C-float pixels; blocked: ceil(C / b) planes, the last one's padded lanes included); the map starts on a line. A
// block narrower than a line lets the pixel pair (x, x + 1) of a tap straddle two lines, so those layouts read more
// lines than NHWC for the same taps.
double RoiBinLines(const internal::AxisGeometry& gy, const internal::AxisGeometry& gx, int64_t pooled, int64_t H,
                   int64_t W, int64_t C, Layout layout);

// The same count for one bin whose taps read `pixels` (distinct map pixels y * W + x, ascending): a rotated bin's
// samples are not separable into rows and columns, so its pixel set is given whole.
double BinPixelLines(const std::vector<int64_t>& pixels, int64_t H, int64_t W, int64_t C, Layout layout);

// One measurement of the machine: lane-operation rates of FMAs and of adds, and the time one pass that reads a
// buffer of the workload's distinct input bytes and writes one of its output bytes takes.
struct Peaks {
  double gfma_per_s = 0, gadd_per_s = 0;
  double move_seconds = 0, moved_bytes = 0;
};

// Measures Peaks for a workload's byte counts; owns the buffers, so that repeated measurements reuse them.
class PeakMeter {
 public:
  PeakMeter(double read_bytes, double write_bytes);
  // One measurement now with `threads` threads: each rate is the best of two back-to-back runs, the move the
  // best of four passes in alternating directions (each starts on the data the caches kept from the last).
  Peaks Measure(int threads);
  // Only the move of Measure (the rates stay 0): a copy's bandwidth, for buffers sized as a transform's input and
  // output.
  Peaks MeasureMove(int threads);

 private:
  AlignedBuffer read_, write_;
};

// Best of several measurements: the highest rates and the shortest move.
Peaks Best(const std::vector<Peaks>& measurements);

// The limit (seconds), and its two terms.
struct Limit {
  double seconds = 0, compute_seconds = 0, memory_seconds = 0;
};
// compute = w.ops_bound / (FMA rate + add rate); memory = the measured move of the bytes that must move (peaks
// measured with the byte counts of the dtype the kernel ran).
Limit LimitOf(const Accounting& w, const Peaks& peaks);
// The backward's limit, the same model over its work: compute = b.ops_bound / (FMA rate + add rate); memory = the
// measured move of its bytes (read: dY, and the map in the MAX modes; written: all of dX), measured by a PeakMeter
// built with those byte counts in the dtype the kernel ran.
Limit LimitOf(const BackwardAccounting& b, const Peaks& peaks);

}  // namespace bench
}  // namespace roialign

#endif  // ROIALIGN_BENCH_LIMIT_H_
