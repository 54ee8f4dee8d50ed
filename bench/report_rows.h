// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// What one run of the layout report measured, kept apart from how it is measured, printed or written, so that the
// table (bench/report_table.h) and the JSON (bench/report_json.h) are built from the same records.
#ifndef ROIALIGN_BENCH_REPORT_ROWS_H_
#define ROIALIGN_BENCH_REPORT_ROWS_H_

#include <string>
#include <vector>

#include "bench/limit.h"
#include "bench/verdict.h"
#include "core/enums.h"

namespace roialign {
namespace bench {

// The limit of one (workload, ISA, dtype, threads): its best and per-round peaks.
struct LimitRow {
  std::string workload, isa, dtype;
  int threads;
  double ops_bound, read_bytes, write_bytes;
  Peaks best, median;
  Limit limit;
  double limit_median_seconds;  // the median of the rounds' limits, each from its own round's peaks
  double dy_bytes = 0, map_bytes = 0;  // a backward limit's read_bytes: dY's, and the map's (MAX modes)
};

// One transform-bandwidth row: a map transform's time and rate, and the copy bandwidth of the same rounds.
struct TransformRow {
  std::string workload;
  int threads;
  Layout from, to;
  double read_bytes, write_bytes;
  double ms, ms_min;                       // median and minimum over the rounds
  double gb_per_s, gb_per_s_median;        // (read + written) / minimum time, / median time
  double copy_gb_per_s, copy_gb_per_s_median;  // the copy's best and median over the rounds, read + written
  double fraction, fraction_median;        // gb_per_s / copy_gb_per_s; the median of each round's own ratio
  std::vector<std::string> reasons;        // why the row is unstable (bench/stability.h); empty: stable
  bool stable() const { return reasons.empty(); }
};

// A rotated workload's NHWC kernel against the axis-aligned NHWC kernel on the same boxes (HALF_PIXEL), timed in
// the same rounds: with the workload's angles (its NHWC row), with every angle 0, and the axis-aligned kernel.
struct RotatedComparison {
  std::string workload, isa, dtype;
  int threads;
  double rotated_ms_min, rotated_ms, angle0_ms_min, angle0_ms, axis_ms_min, axis_ms;
  std::vector<std::string> reasons;  // the three paths' (bench/stability.h); empty: stable
  bool stable() const { return reasons.empty(); }
};

// Everything a run measured, in the order it ran; the single-level and the multi-level workloads append alike.
struct Report {
  std::vector<Row> rows;
  std::vector<LimitRow> limits;
  std::vector<TransformRow> transforms;
  std::vector<Row> backward_rows;
  std::vector<LimitRow> backward_limits;
  std::vector<RotatedComparison> comparisons;  // rotated workloads' NHWC against axis-aligned NHWC
  std::vector<std::string> violations;         // rows above their limit, forward or backward
};

}  // namespace bench
}  // namespace roialign

#endif  // ROIALIGN_BENCH_REPORT_ROWS_H_
