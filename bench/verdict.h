// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The layout report's rows and the verdict built from them (stable rows only).
#ifndef ROIALIGN_BENCH_VERDICT_H_
#define ROIALIGN_BENCH_VERDICT_H_

#include <string>
#include <vector>

#include "bench/stability.h"

namespace roialign {
namespace bench {

// One path of one (workload, ISA, dtype, threads): its times over the rounds and whether they can be trusted.
struct Row {
  std::string workload, isa, dtype, path;
  int threads = 0;
  double ms = 0, ms_min = 0, ms_max = 0;  // median, minimum and maximum over the rounds
  double fraction = 0, fraction_median = 0, gfma = 0, load_gb = 0;
  double spread = 0;                 // ms / ms_min - 1
  std::vector<std::string> reasons;  // why the row is unstable; empty: stable
  MachineLoad machine;               // while its rounds ran
  int attempts = 1;                  // round robins run for it (--settle repeats unstable ones)
  bool stable() const { return reasons.empty(); }
};

// The verdict, per ISA, dtype and thread count, from the minimum times of stable rows summed over workloads: the
// kernel layout with the least time over the workloads whose every kernel layout of that key is stable, and per
// conversion row its time over the native kernel's (the kernel on the data's own layout) and the transforms' share
// of the row, over the workloads where the row and both kernels are stable. A key with no such workload says that
// its verdict could not be built, and why. A share is never negative: a row faster than the kernel it wraps has no
// measurable share.
// `title` heads the text ("verdict", or the backward's).
std::string Verdict(const std::vector<Row>& rows, const std::string& title = "verdict");

}  // namespace bench
}  // namespace roialign

#endif  // ROIALIGN_BENCH_VERDICT_H_
