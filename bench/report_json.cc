// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "bench/report_json.h"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <vector>

#include "strategy/targets.h"

namespace roialign {
namespace bench {
namespace {

const char* Bool(bool b) { return b ? "true" : "false"; }

// A row's judgement, the same fields for every kind of row.
void WriteStability(std::ostream& j, bool stable, const std::vector<std::string>& reasons) {
  j << ", \"stable\": " << Bool(stable) << ", \"unstable_reasons\": [";
  for (size_t k = 0; k < reasons.size(); ++k) j << (k ? ", " : "") << '"' << reasons[k] << '"';
  j << "]";
}

// A limit, forward or backward (a backward limit also splits its reads).
void WriteLimit(std::ostream& j, const LimitRow& l, bool backward) {
  j << "    {\"workload\": \"" << l.workload << "\", \"isa\": \"" << l.isa << "\", \"dtype\": \"" << l.dtype
    << "\", \"threads\": " << l.threads << ", \"ops_bound\": " << l.ops_bound << ", \"read_bytes\": " << l.read_bytes
    << ", \"write_bytes\": " << l.write_bytes;
  if (backward) j << ", \"dy_bytes\": " << l.dy_bytes << ", \"map_bytes\": " << l.map_bytes;
  j << ", \"limit_ms\": " << l.limit.seconds * 1e3 << ", \"limit_ms_rounds_median\": " << l.limit_median_seconds * 1e3
    << ", \"compute_ms\": " << l.limit.compute_seconds * 1e3 << ", \"memory_ms\": " << l.limit.memory_seconds * 1e3
    << ", \"gfma_per_s\": {\"best\": " << l.best.gfma_per_s << ", \"median\": " << l.median.gfma_per_s
    << "}, \"gadd_per_s\": {\"best\": " << l.best.gadd_per_s << ", \"median\": " << l.median.gadd_per_s
    << "}, \"move_ms\": {\"best\": " << l.best.move_seconds * 1e3 << ", \"median\": " << l.median.move_seconds * 1e3
    << "}}";
}

// A row, forward or backward.
void WriteRow(std::ostream& j, const Row& r) {
  j << "    {\"workload\": \"" << r.workload << "\", \"isa\": \"" << r.isa << "\", \"dtype\": \"" << r.dtype
    << "\", \"threads\": " << r.threads << ", \"path\": \"" << r.path << "\", \"ms\": " << r.ms
    << ", \"ms_min\": " << r.ms_min << ", \"fraction_of_limit\": " << r.fraction
    << ", \"fraction_of_limit_median\": " << r.fraction_median << ", \"gfma_per_s\": " << r.gfma
    << ", \"load_gb_per_s\": " << r.load_gb << ", \"ms_max\": " << r.ms_max << ", \"spread\": " << r.spread;
  WriteStability(j, r.stable(), r.reasons);
  j << ", \"attempts\": " << r.attempts << ", \"machine\": {\"sampled\": " << Bool(r.machine.valid)
    << ", \"cores\": " << r.machine.cores << ", \"load1\": " << r.machine.load1
    << ", \"others_cores\": " << r.machine.others_cores << ", \"steal_fraction\": " << r.machine.steal_fraction
    << "}}";
}

void WriteTransform(std::ostream& j, const TransformRow& t) {
  j << "    {\"workload\": \"" << t.workload << "\", \"dtype\": \"F32\", \"threads\": " << t.threads
    << ", \"from\": \"" << ToString(t.from) << "\", \"to\": \"" << ToString(t.to)
    << "\", \"read_bytes\": " << t.read_bytes << ", \"write_bytes\": " << t.write_bytes << ", \"ms\": " << t.ms
    << ", \"ms_min\": " << t.ms_min << ", \"gb_per_s\": " << t.gb_per_s
    << ", \"gb_per_s_median\": " << t.gb_per_s_median << ", \"copy_gb_per_s\": {\"best\": " << t.copy_gb_per_s
    << ", \"median\": " << t.copy_gb_per_s_median << "}, \"fraction_of_copy\": " << t.fraction
    << ", \"fraction_of_copy_median\": " << t.fraction_median;
  WriteStability(j, t.stable(), t.reasons);
  j << "}";
}

void WriteComparison(std::ostream& j, const RotatedComparison& c) {
  j << "    {\"workload\": \"" << c.workload << "\", \"isa\": \"" << c.isa << "\", \"dtype\": \"" << c.dtype
    << "\", \"threads\": " << c.threads << ", \"rotated_ms_min\": " << c.rotated_ms_min
    << ", \"rotated_ms\": " << c.rotated_ms << ", \"angle0_ms_min\": " << c.angle0_ms_min
    << ", \"angle0_ms\": " << c.angle0_ms << ", \"axis_aligned_ms_min\": " << c.axis_ms_min
    << ", \"axis_aligned_ms\": " << c.axis_ms << ", \"ratio\": " << c.rotated_ms_min / c.axis_ms_min
    << ", \"ratio_angle0\": " << c.angle0_ms_min / c.axis_ms_min;
  WriteStability(j, c.stable(), c.reasons);
  j << "}";
}

// A top-level list, one element a line: `"key": [` ... `]`, every element through `write`.
template <typename T, typename Write>
void WriteList(std::ostream& j, const char* key, const std::vector<T>& list, bool last, Write write) {
  j << "  \"" << key << "\": [\n";
  for (size_t i = 0; i < list.size(); ++i) {
    write(j, list[i]);
    j << (i + 1 < list.size() ? "," : "") << "\n";
  }
  j << "  ]" << (last ? "\n" : ",\n");
}

// The machine: the CPU, the run's settings, and per thread count the best arithmetic rates of every round.
void WriteMachine(std::ostream& j, const Report& report, const ReportFlags& flags) {
  const std::vector<int>& threads = flags.threads;
  std::vector<Peaks> by_threads(threads.size());
  for (const LimitRow& l : report.limits) {
    const auto at = std::find(threads.begin(), threads.end(), l.threads);
    Peaks& p = by_threads[static_cast<size_t>(at - threads.begin())];
    p.gfma_per_s = std::max(p.gfma_per_s, l.best.gfma_per_s);
    p.gadd_per_s = std::max(p.gadd_per_s, l.best.gadd_per_s);
  }
  const StabilityThresholds& t = flags.stability.thresholds;
  j << "  \"machine\": {\"cpu\": \"" << internal::BuildArchitecture() << " (" << internal::CpuTargetsDescription()
    << ")\", \"threads\": " << omp_get_num_procs() << ", \"peak_gfma_per_s\": " << by_threads.back().gfma_per_s
    << ", \"peak_gadd_per_s\": " << by_threads.back().gadd_per_s << ", \"rounds\": " << flags.repeats
    << ", \"stability\": {\"max_spread\": " << t.max_spread << ", \"others_slack_cores\": " << t.others_slack
    << ", \"max_steal\": " << t.max_steal << ", \"load_slack\": " << t.load_slack
    << ", \"settle\": " << flags.stability.settle << "}, \"isa_order\": [";
  // Every built-in ISA, best first within its family, as target "host" ranks them (report_tables.py reads it).
  for (size_t i = 0; i < internal::IsaTargets().size(); ++i) {
    j << (i ? ", " : "") << '"' << internal::IsaTargets()[i].isa << '"';
  }
  j << "], \"peaks_by_threads\": [";
  for (size_t i = 0; i < threads.size(); ++i) {
    j << (i ? ", " : "") << "{\"threads\": " << threads[i] << ", \"peak_gfma_per_s\": " << by_threads[i].gfma_per_s
      << ", \"peak_gadd_per_s\": " << by_threads[i].gadd_per_s << "}";
  }
  j << "]},\n";
}

}  // namespace

void WriteReportJson(const std::string& path, const Report& report, const ReportFlags& flags) {
  std::ofstream j(path);
  j << "{\n  \"schema_version\": " << kReportSchemaVersion << ",\n";
  WriteMachine(j, report, flags);
  const auto forward_limit = [](std::ostream& o, const LimitRow& l) { WriteLimit(o, l, false); };
  const auto backward_limit = [](std::ostream& o, const LimitRow& l) { WriteLimit(o, l, true); };
  WriteList(j, "limits", report.limits, false, forward_limit);
  WriteList(j, "results", report.rows, false, WriteRow);
  WriteList(j, "backward_limits", report.backward_limits, false, backward_limit);
  WriteList(j, "backward_results", report.backward_rows, false, WriteRow);
  WriteList(j, "transforms", report.transforms, false, WriteTransform);
  WriteList(j, "rotated_vs_axis_aligned", report.comparisons, true, WriteComparison);
  j << "}\n";
}

}  // namespace bench
}  // namespace roialign
