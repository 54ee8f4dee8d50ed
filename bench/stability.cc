// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "bench/stability.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace roialign {
namespace bench {
namespace {

std::string ReadAll(const char* path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string Percent(double fraction) {
  char s[32];
  std::snprintf(s, sizeof(s), "%.0f%%", 100 * fraction);
  return s;
}

}  // namespace

bool ParseProcStat(const std::string& text, CpuTimes* out) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu ", 0) != 0) continue;
    std::istringstream fields(line.substr(4));
    // user nice system idle iowait irq softirq steal [guest guest_nice: already inside user and nice]
    double v[8] = {};
    int n = 0;
    while (n < 8 && fields >> v[n]) ++n;
    if (n < 4) return false;
    out->busy = v[0] + v[1] + v[2] + v[5] + v[6];
    out->steal = v[7];
    out->total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
    return true;
  }
  return false;
}

bool ParseSelfStat(const std::string& text, double* ticks) {
  // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream in(text.substr(close + 1));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15; ++i) {
    if (!(in >> field)) return false;
    if (i == 14) utime = std::atof(field.c_str());
    if (i == 15) stime = std::atof(field.c_str());
  }
  *ticks = utime + stime;
  return true;
}

MachineSample SampleMachine() {
  MachineSample s;
  double load1 = 0;
  const std::string loadavg = ReadAll("/proc/loadavg");
  s.valid = ParseProcStat(ReadAll("/proc/stat"), &s.cpu) && ParseSelfStat(ReadAll("/proc/self/stat"), &s.self_ticks) &&
            std::sscanf(loadavg.c_str(), "%lf", &load1) == 1;
  s.load1 = load1;
  return s;
}

MachineLoad LoadBetween(const MachineSample& before, const MachineSample& after, int cores) {
  MachineLoad l;
  l.cores = cores;
  const double total = after.cpu.total - before.cpu.total;
  l.valid = before.valid && after.valid && total > 0 && cores > 0;
  if (!l.valid) return l;
  const double others = std::max(0.0, (after.cpu.busy - before.cpu.busy) - (after.self_ticks - before.self_ticks));
  l.others_cores = others / total * cores;
  l.steal_fraction = (after.cpu.steal - before.cpu.steal) / total;
  l.load1 = std::max(before.load1, after.load1);
  return l;
}

double Spread(const std::vector<double>& seconds) {
  if (seconds.size() < 2) return 0;
  std::vector<double> v = seconds;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  const double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return v[0] > 0 ? median / v[0] - 1 : 0;
}

std::vector<std::string> UnstableReasons(double spread, double limit_spread, const MachineLoad& load, int threads,
                                         const StabilityThresholds& t) {
  std::vector<std::string> reasons;
  if (spread > t.max_spread) {
    reasons.push_back("rounds disagree: median " + Percent(spread) + " above the minimum");
  }
  if (limit_spread > t.max_spread) {
    reasons.push_back("the peaks' rounds disagree: the limit's median " + Percent(limit_spread) + " above its best");
  }
  if (load.valid) {
    char s[128];
    const double idle_for_others = std::max(0, load.cores - threads);
    if (load.others_cores > idle_for_others + t.others_slack) {
      std::snprintf(s, sizeof(s), "other processes used %.2f cores of %d beside %d thread(s)", load.others_cores,
                    load.cores, threads);
      reasons.push_back(s);
    }
    if (load.steal_fraction > t.max_steal) reasons.push_back("steal " + Percent(load.steal_fraction) + " of CPU time");
    if (load.load1 > load.cores + t.load_slack) {
      std::snprintf(s, sizeof(s), "load average %.2f on %d cores", load.load1, load.cores);
      reasons.push_back(s);
    }
  }
  return reasons;
}

}  // namespace bench
}  // namespace roialign
