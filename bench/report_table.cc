// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "bench/report_table.h"

#include <algorithm>
#include <cstdio>

#include "bench/conversions.h"
#include "bench/workloads.h"

namespace roialign {
namespace bench {
namespace {

// The row of `path` in `rows`, or null.
const Row* FindPath(const std::vector<Row>& rows, const std::string& path) {
  for (const Row& r : rows) {
    if (r.path == path) return &r;
  }
  return nullptr;
}

// A kernel's cell of the table: ms min/median (fraction_of_limit at each), "!" after an unstable row's.
std::string Cell(const Row& r) {
  char c[64];
  std::snprintf(c, sizeof(c), "%7.2f/%7.2f (%5.1f/%5.1f%%)%s", r.ms_min, r.ms, 100 * r.fraction,
                100 * r.fraction_median, r.stable() ? "" : "!");
  return std::string(c);
}

// Under the table line of one (workload, ISA, dtype, threads): the blocked kernels (time over NHWC's, and the cache
// lines their bins read over NHWC's: `bin_lines` of the workload), then the conversion rows from `now[first]` on
// (time over the native kernel: the one on the data's own layout).
void PrintExtras(const std::vector<Row>& now, size_t first, const double* bin_lines) {
  const Row* nhwc = FindPath(now, "NHWC");
  std::string line;
  char cell[160];
  for (Layout b : kBlockedLayouts) {
    const Row* r = FindPath(now, ToString(b));
    if (r == nullptr || nhwc == nullptr) continue;
    std::snprintf(cell, sizeof(cell), " %s%s %.2f/%.2f ms (%.1f%%, %.2fx NHWC; lines %.2fx) |", r->path.c_str(),
                  r->stable() ? "" : "!",
                  r->ms_min, r->ms, 100 * r->fraction, r->ms_min / nhwc->ms_min,
                  bin_lines[1 + BlockedIndex(b)] / bin_lines[0]);
    line += cell;
  }
  if (!line.empty()) std::printf("%-9s %-7s %-5s %3s |%s\n", "", "", "", "", line.c_str());
  line.clear();
  int on_line = 0;
  for (const Conversion& c : kConversions) {
    const auto at = std::find_if(now.begin() + static_cast<std::ptrdiff_t>(first), now.end(),
                                 [&](const Row& r) { return r.path == ConversionName(c); });
    const Row* native = FindPath(now, ToString(c.data));
    if (at == now.end() || native == nullptr) continue;
    const Row* r = &*at;
    std::snprintf(cell, sizeof(cell), " %s%s %.2f/%.2f ms (%.2fx %s) |", r->path.c_str(), r->stable() ? "" : "!",
                  r->ms_min, r->ms,
                  r->ms_min / native->ms_min, native->path.c_str());
    line += cell;
    if (++on_line == 3) {
      std::printf("%-9s %-7s %-5s %3s |%s\n", "", "", "", "", line.c_str());
      line.clear();
      on_line = 0;
    }
  }
  if (!line.empty()) std::printf("%-9s %-7s %-5s %3s |%s\n", "", "", "", "", line.c_str());
}

// Under a group's lines: its unstable rows and why, so that no figure of them is read without the warning. The
// machine's reasons are the group's (its rows share their rounds); each row's own spread follows.
void PrintUnstable(const std::vector<Row>& rows, const char* label) {
  std::vector<std::string> machine;
  std::string spreads;
  for (const Row& r : rows) {
    for (const std::string& why : r.reasons) {
      if (why.rfind("rounds disagree", 0) == 0) {
        char cell[96];
        std::snprintf(cell, sizeof(cell), "%s%s +%.0f%%", spreads.empty() ? "" : ", ", r.path.c_str(),
                      100 * r.spread);
        spreads += cell;
      } else if (std::find(machine.begin(), machine.end(), why) == machine.end()) {
        machine.push_back(why);
      }
    }
  }
  std::string line;
  for (const std::string& why : machine) line += (line.empty() ? "" : "; ") + why;
  if (!line.empty()) {
    std::printf("%-9s %-7s %-5s %3s | UNSTABLE%s, the machine: %s\n", "", "", "", "", label, line.c_str());
  }
  if (!spreads.empty()) {
    std::printf("%-9s %-7s %-5s %3s | UNSTABLE%s, rounds disagree (median over minimum): %s\n", "", "", "", "", label,
                spreads.c_str());
  }
}

}  // namespace

void PrintHeader(const char* third, const char* fourth, const char* last) {
  std::printf("%-9s %-7s %-5s %3s | %-31s | %-31s | %-20s | %-20s | %s\n", "workload", "isa", "dtype", "thr",
              "NCHW ms min/med (lim% min/med)", "NHWC ms min/med (lim% min/med)", third, fourth, last);
}

void PrintGroup(const std::vector<Row>& rows, const std::string& last, const double* bin_lines) {
  const Row& r = rows[0];
  std::printf("%-9s %-7s %-5s %3d | %-31s | %-31s | %8.2f/%-11.2f | %8.2f/%-11.2f | %s\n", r.workload.c_str(),
              r.isa.c_str(), r.dtype.c_str(), r.threads, Cell(rows[0]).c_str(), Cell(rows[1]).c_str(), rows[2].ms_min,
              rows[2].ms, rows[3].ms_min, rows[3].ms, last.c_str());
  PrintExtras(rows, 4, bin_lines);
  PrintUnstable(rows, "");
}

void PrintTransform(const TransformRow& t) {
  char name[48];
  std::snprintf(name, sizeof(name), "%s->%s", ToString(t.from), ToString(t.to));
  std::printf("%-9s %-7s %-5s %3d | transform %-14s %7.3f/%-7.3f ms %6.1f GB/s (read + written) = %5.1f%%/%5.1f%% "
              "of the copy's %.1f GB/s%s\n",
              t.workload.c_str(), "", "F32", t.threads, name, t.ms_min, t.ms, t.gb_per_s, 100 * t.fraction,
              100 * t.fraction_median, t.copy_gb_per_s,
              t.stable() ? "" : (" ! unstable: " + t.reasons[0] + (t.reasons.size() > 1 ? "; ..." : "")).c_str());
}

void PrintRotated(const RotatedComparison& c) {
  std::printf("%-9s %-7s %-5s %3s | rotated NHWC / axis-aligned NHWC on the same boxes: %.2fx (angles 0: "
              "%.2fx); axis-aligned %.2f/%.2f ms, angles 0 %.2f/%.2f ms%s\n",
              "", "", "", "", c.rotated_ms_min / c.axis_ms_min, c.angle0_ms_min / c.axis_ms_min, c.axis_ms_min,
              c.axis_ms, c.angle0_ms_min, c.angle0_ms, c.stable() ? "" : (" ! unstable: " + c.reasons[0]).c_str());
}

void PrintBackward(const std::vector<Row>& rows) {
  std::string line;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    line += " " + r.path + " " + Cell(r) + " |";
    if (i == 1 || i + 1 == rows.size()) {
      std::printf("%-9s %-7s %-5s %3d | backward dX from dY, ms min/med (lim%% min/med):%s\n", r.workload.c_str(),
                  r.isa.c_str(), r.dtype.c_str(), r.threads, line.c_str());
      line.clear();
    }
  }
  PrintUnstable(rows, " (backward)");
}

void PrintLimit(const LimitRow& lr, int repeats, bool backward) {
  if (backward) {
    std::fprintf(stderr,
                 "    backward limit %.2f ms, rounds' median %.2f ms (compute %.2f, memory %.2f): best of %d rounds "
                 "%.1f GFMA/s + %.1f GADD/s, move %.2f ms = %.1f GB/s\n",
                 lr.limit.seconds * 1e3, lr.limit_median_seconds * 1e3, lr.limit.compute_seconds * 1e3,
                 lr.limit.memory_seconds * 1e3, repeats, lr.best.gfma_per_s, lr.best.gadd_per_s,
                 lr.best.move_seconds * 1e3, lr.best.moved_bytes / lr.best.move_seconds / 1e9);
    return;
  }
  std::fprintf(stderr,
               "    limit %.2f ms, rounds' median %.2f ms (compute %.2f, memory %.2f): best of %d rounds "
               "%.1f GFMA/s + %.1f GADD/s, move %.2f ms = %.1f GB/s (medians %.1f, %.1f, %.2f ms)\n",
               lr.limit.seconds * 1e3, lr.limit_median_seconds * 1e3, lr.limit.compute_seconds * 1e3,
               lr.limit.memory_seconds * 1e3, repeats, lr.best.gfma_per_s, lr.best.gadd_per_s,
               lr.best.move_seconds * 1e3, lr.best.moved_bytes / lr.best.move_seconds / 1e9, lr.median.gfma_per_s,
               lr.median.gadd_per_s, lr.median.move_seconds * 1e3);
}

}  // namespace bench
}  // namespace roialign
