// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The layout report's command line: the flags, and the workloads and ISAs they select. Kept apart from the
// measuring so that the run reads as a plan: what to run, then running it.
#ifndef ROIALIGN_BENCH_REPORT_FLAGS_H_
#define ROIALIGN_BENCH_REPORT_FLAGS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "bench/stability.h"
#include "bench/workloads.h"
#include "core/enums.h"
#include "strategy/targets.h"

namespace roialign {
namespace bench {

// What the machine and the user allow: thresholds of the stability check, and how often to repeat an unstable group.
struct Stability {
  StabilityThresholds thresholds;
  int settle = 0;  // round robins repeated while a row of the group is unstable
  int cores = 1;
};

// The flags of one run (--help describes each).
struct ReportFlags {
  std::vector<std::string> workload_names, isas;  // empty: every one
  std::vector<DType> dtypes = {DType::kF32};
  std::vector<int> threads;  // sorted, without repeats
  int repeats = 7;
  size_t best_isas = 0;  // 0: all
  Stability stability;
  std::string json_path, dump_dir, custom;
  std::vector<std::string> backward = {"all"};  // the workloads whose backward is timed

  // Whether `workload`'s backward is timed.
  bool BackwardOf(const std::string& workload) const;
  // Whether the multi-level workload fpn runs (it is not among the single-level specs).
  bool RunsPyramid() const;
};

// Parses the command line into `flags`. Returns -1 to go on, or the status to exit with: 0 after --help, 2 after
// a message on a bad flag.
int ParseFlags(int argc, char** argv, ReportFlags* flags);

// The single-level workloads the flags select, in order; false, with a message, on an unknown name or a bad
// --custom spec.
bool SelectWorkloads(const ReportFlags& flags, std::vector<WorkloadSpec>* specs);

// Every runnable built-in SIMD target the flags select, best first (empty, with a message, if none).
std::vector<const internal::IsaTarget*> SelectTargets(const ReportFlags& flags);

}  // namespace bench
}  // namespace roialign

#endif  // ROIALIGN_BENCH_REPORT_FLAGS_H_
