// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// How the layout report times a group of paths: a round robin with the machine's peaks measured in the same rounds,
// so that the limit and the times see the same machine, summarized into rows judged for stability.
#ifndef ROIALIGN_BENCH_REPORT_MEASURE_H_
#define ROIALIGN_BENCH_REPORT_MEASURE_H_

#include <functional>
#include <string>
#include <vector>

#include "bench/limit.h"
#include "bench/report_flags.h"
#include "bench/report_rows.h"
#include "bench/stability.h"
#include "core/library.h"

namespace roialign {
namespace bench {

double Median(std::vector<double> v);

// One (workload, ISA, dtype, threads) measured: its limit, its rows, and the rounds' copies and seconds per path.
struct Group {
  LimitRow limit;
  double limit_spread = 0;  // the limit's rounds' median over its best, minus 1
  MachineLoad load;         // the machine while the rounds ran
  std::vector<Row> rows;
  std::vector<Peaks> copies;
  std::vector<std::vector<double>> seconds;
};

// Runs the round robin of `paths` (named `names`) with the machine sampled before and after, summarizes the limit
// and every row, judges each row's stability, and repeats the whole round robin (up to stability.settle times)
// while a row is unstable: the rows of a group share their rounds and their limit, so they are measured again
// together. Paths after `names` are timed in the same rounds without a row of their own (their seconds are in
// the group). W is Accounting (a workload's, of either kind) or BackwardAccounting (LimitOf in bench/limit.h).
template <typename W>
Group MeasureGroup(const Stability& stability, const W& w, const std::string& workload, const char* isa,
                   const std::string& dtype, int threads, int repeats, PeakMeter* meter, PeakMeter* copy_meter,
                   const std::vector<std::function<Status()>>& paths, const std::vector<std::string>& names,
                   double read_bytes, double write_bytes, double loaded_bytes);

// The transform row of the seconds of one transform path, against the copies of the same rounds.
TransformRow SummarizeTransform(const std::string& workload, int threads, Layout from, Layout to, double read_bytes,
                                double write_bytes, const std::vector<double>& seconds,
                                const std::vector<Peaks>& copies);

// A rotated workload's NHWC kernel against the axis-aligned one, from its group `g`: the NHWC row (the second), and
// the paths at `at` (every angle 0) and `at + 1` (the axis-aligned kernel), judged with the group's machine; its
// reasons are the three paths'.
RotatedComparison SummarizeRotated(const Group& g, size_t at, const Stability& stability);

}  // namespace bench
}  // namespace roialign

#endif  // ROIALIGN_BENCH_REPORT_MEASURE_H_
