// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "bench/report_measure.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "bench/report_checks.h"
#include "bench/workloads.h"

namespace roialign {
namespace bench {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The round robin: each of `rounds` rounds measures the machine's peaks (and, with a `copy_meter`, a copy's
// bandwidth), then runs every path untimed and timed, in an order that reverses from round to round, so that the
// limit and the times see the same machine. Returns per round the peaks, the copies and each path's seconds.
void RoundRobin(int rounds, int threads, PeakMeter* meter, PeakMeter* copy_meter,
                const std::vector<std::function<Status()>>& paths, std::vector<Peaks>* peaks,
                std::vector<Peaks>* copies, std::vector<std::vector<double>>* seconds) {
  seconds->assign(paths.size(), {});
  for (int r = 0; r < rounds; ++r) {
    peaks->push_back(meter->Measure(threads));
    if (copy_meter != nullptr) copies->push_back(copy_meter->MeasureMove(threads));
    for (size_t k = 0; k < paths.size(); ++k) {
      const size_t i = r % 2 ? paths.size() - 1 - k : k;
      RunOrExit(paths[i]);
      const double t0 = Now();
      paths[i]();
      (*seconds)[i].push_back(Now() - t0);
    }
  }
}

// The limit row of one (workload, ISA, dtype, threads) from its rounds' peaks: the best peaks give the limit, the
// medians its spread. W is Accounting or BackwardAccounting (LimitOf in bench/limit.h).
template <typename W>
LimitRow SummarizeLimit(const std::string& workload, const char* isa, const std::string& dtype, int threads,
                        const W& w, double read_bytes, double write_bytes, const std::vector<Peaks>& peaks) {
  LimitRow lr{workload, isa, dtype, threads, w.ops_bound, read_bytes, write_bytes, Best(peaks), {}, {}, 0};
  lr.limit = LimitOf(w, lr.best);
  std::vector<double> fma, add, move, limit;
  for (const Peaks& p : peaks) {
    fma.push_back(p.gfma_per_s);
    add.push_back(p.gadd_per_s);
    move.push_back(p.move_seconds);
    limit.push_back(LimitOf(w, p).seconds);
  }
  lr.limit_median_seconds = Median(limit);
  lr.median = lr.best;
  lr.median.gfma_per_s = Median(fma);
  lr.median.gadd_per_s = Median(add);
  lr.median.move_seconds = Median(move);
  return lr;
}

}  // namespace

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

template <typename W>
Group MeasureGroup(const Stability& stability, const W& w, const std::string& workload, const char* isa,
                   const std::string& dtype, int threads, int repeats, PeakMeter* meter, PeakMeter* copy_meter,
                   const std::vector<std::function<Status()>>& paths, const std::vector<std::string>& names,
                   double read_bytes, double write_bytes, double loaded_bytes) {
  Group g;
  for (int attempt = 1;; ++attempt) {
    std::vector<Peaks> peaks;
    g.copies.clear();
    const MachineSample before = SampleMachine();
    RoundRobin(repeats, threads, meter, copy_meter, paths, &peaks, &g.copies, &g.seconds);
    const MachineLoad load = LoadBetween(before, SampleMachine(), stability.cores);
    g.limit = SummarizeLimit(workload, isa, dtype, threads, w, read_bytes, write_bytes, peaks);
    const double limit_spread = g.limit.limit_median_seconds / g.limit.limit.seconds - 1;
    g.limit_spread = limit_spread;
    g.load = load;
    g.rows.clear();
    int unstable = 0;
    for (size_t i = 0; i < names.size(); ++i) {
      const std::vector<double>& sec = g.seconds[i];
      Row r;
      r.workload = workload;
      r.isa = isa;
      r.dtype = dtype;
      r.path = names[i];
      r.threads = threads;
      const double best = *std::min_element(sec.begin(), sec.end()), median = Median(sec);
      r.ms = median * 1e3;
      r.ms_min = best * 1e3;
      r.ms_max = *std::max_element(sec.begin(), sec.end()) * 1e3;
      r.fraction = g.limit.limit.seconds / best;
      r.fraction_median = g.limit.limit.seconds / median;
      r.gfma = w.fmas / best / 1e9;
      r.load_gb = loaded_bytes / best / 1e9;
      r.spread = Spread(sec);
      r.machine = load;
      r.attempts = attempt;
      r.reasons = UnstableReasons(r.spread, limit_spread, load, threads, stability.thresholds);
      unstable += r.stable() ? 0 : 1;
      g.rows.push_back(r);
    }
    if (unstable == 0 || attempt > stability.settle) break;
    std::fprintf(stderr, "    %d of %zu rows unstable (%s): measuring the group again (%d of %d)\n", unstable,
                 g.rows.size(), g.rows[0].stable() ? "see the table" : g.rows[0].reasons[0].c_str(), attempt,
                 stability.settle);
    std::this_thread::sleep_for(std::chrono::seconds(2));  // let a passing neighbour finish
  }
  return g;
}

TransformRow SummarizeTransform(const std::string& workload, int threads, Layout from, Layout to, double read_bytes,
                                double write_bytes, const std::vector<double>& seconds,
                                const std::vector<Peaks>& copies) {
  TransformRow t{workload, threads, from, to, read_bytes, write_bytes, 0, 0, 0, 0, 0, 0, 0, 0, {}};
  const double bytes = read_bytes + write_bytes;
  const double best = *std::min_element(seconds.begin(), seconds.end()), median = Median(seconds);
  t.ms = median * 1e3;
  t.ms_min = best * 1e3;
  t.gb_per_s = bytes / best / 1e9;
  t.gb_per_s_median = bytes / median / 1e9;
  std::vector<double> copy, ratio;
  for (size_t r = 0; r < copies.size(); ++r) {
    copy.push_back(copies[r].moved_bytes / copies[r].move_seconds / 1e9);
    ratio.push_back(bytes / seconds[r] / 1e9 / copy.back());
  }
  t.copy_gb_per_s = *std::max_element(copy.begin(), copy.end());
  t.copy_gb_per_s_median = Median(copy);
  t.fraction = t.gb_per_s / t.copy_gb_per_s;
  t.fraction_median = Median(ratio);
  return t;
}

RotatedComparison SummarizeRotated(const Group& g, size_t at, const Stability& stability) {
  const Row& nhwc = g.rows[1];
  RotatedComparison rc{nhwc.workload, nhwc.isa, nhwc.dtype, nhwc.threads, nhwc.ms_min, nhwc.ms, 0, 0, 0, 0,
                       nhwc.reasons};
  const auto summarize = [&](size_t i, double* ms_min, double* ms) {
    const std::vector<double>& sec = g.seconds[i];
    *ms_min = *std::min_element(sec.begin(), sec.end()) * 1e3;
    *ms = Median(sec) * 1e3;
    for (const std::string& why :
         UnstableReasons(Spread(sec), g.limit_spread, g.load, nhwc.threads, stability.thresholds)) {
      if (std::find(rc.reasons.begin(), rc.reasons.end(), why) == rc.reasons.end()) rc.reasons.push_back(why);
    }
  };
  summarize(at, &rc.angle0_ms_min, &rc.angle0_ms);
  summarize(at + 1, &rc.axis_ms_min, &rc.axis_ms);
  return rc;
}

template Group MeasureGroup(const Stability&, const Accounting&, const std::string&, const char*, const std::string&,
                            int, int, PeakMeter*, PeakMeter*, const std::vector<std::function<Status()>>&,
                            const std::vector<std::string>&, double, double, double);
template Group MeasureGroup(const Stability&, const BackwardAccounting&, const std::string&, const char*,
                            const std::string&, int, int, PeakMeter*, PeakMeter*,
                            const std::vector<std::function<Status()>>&, const std::vector<std::string>&, double,
                            double, double);

}  // namespace bench
}  // namespace roialign
