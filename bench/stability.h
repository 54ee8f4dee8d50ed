// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Whether a row of the layout report can be trusted: the spread of its rounds, and the machine's state while they
// ran (load average against the cores, other processes' CPU time and steal from /proc/stat).
#ifndef ROIALIGN_BENCH_STABILITY_H_
#define ROIALIGN_BENCH_STABILITY_H_

#include <string>
#include <vector>

namespace roialign {
namespace bench {

// Jiffies summed over every CPU (the "cpu" line of /proc/stat).
struct CpuTimes {
  double busy = 0;   // user + nice + system + irq + softirq
  double steal = 0;  // taken by the hypervisor for other guests
  double total = 0;  // every field, idle and iowait included
};

// One look at the machine: /proc/stat, this process's own CPU time (/proc/self/stat) and the 1-minute load average.
struct MachineSample {
  CpuTimes cpu;
  double self_ticks = 0;  // utime + stime of this process, every thread
  double load1 = 0;
  bool valid = false;  // false where /proc is not readable: then no row is judged by the machine
};

// The machine between two samples.
struct MachineLoad {
  double others_cores = 0;    // cores' worth of CPU time other processes used
  double steal_fraction = 0;  // of all CPU time
  double load1 = 0;           // the larger of the two samples' load averages
  int cores = 0;
  bool valid = false;
};

struct StabilityThresholds {
  double max_spread = 0.10;     // median over minimum of a row's rounds, minus 1
  double others_slack = 0.25;   // cores other processes may use beyond those our threads leave idle
  double max_steal = 0.05;      // of all CPU time
  double load_slack = 0.5;      // runnable tasks beyond the cores
};

// Parses the "cpu" line of /proc/stat's text; false if there is none.
bool ParseProcStat(const std::string& text, CpuTimes* out);
// utime + stime (clock ticks) from /proc/<pid>/stat's text; false if malformed.
bool ParseSelfStat(const std::string& text, double* ticks);
MachineSample SampleMachine();
MachineLoad LoadBetween(const MachineSample& before, const MachineSample& after, int cores);

// The reasons a row is unstable, empty if it is stable: its rounds' spread (median / minimum - 1) and the machine
// while it ran with `threads` threads. `limit_spread` is the same spread of the limit's rounds (the machine's peaks
// measured beside the row), or a negative value if there is none.
std::vector<std::string> UnstableReasons(double spread, double limit_spread, const MachineLoad& load, int threads,
                                         const StabilityThresholds& t);
// Median over minimum of `seconds`, minus 1 (0 for fewer than two values).
double Spread(const std::vector<double>& seconds);

}  // namespace bench
}  // namespace roialign

#endif  // ROIALIGN_BENCH_STABILITY_H_
