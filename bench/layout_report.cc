// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The layout report (the project's main job): which layout's roi_align is fastest on this CPU, and what does a
// layout transform around the kernel cost? Times, per workload, ISA and thread count, in one round robin:
//   the NCHW, NHWC and blocked (NCHW4c/8c/16c) kernels on their own data; conversions around them (data transformed
//   to the kernel's layout, the kernel, the output transformed back; bench/conversions.h); and the bandwidth of the
//   NCHW -> NCHW16c / NCHW8c / NHWC map transforms against a copy's,
// per dtype (f32 by default, f16 and bf16 on request; blocked rows f32 only), and the backward (dX from dY) of each
// kernel layout in a round robin of its own, and prints a table with fraction_of_limit (docs/performance-model.md)
// and a verdict, writes JSON, and optionally dumps the workloads for bench/peers.py. Run with --help.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/backward_kernel.h"
#include "bench/conversions.h"
#include "bench/limit.h"
#include "bench/stability.h"
#include "bench/verdict.h"
#include "bench/workloads.h"
#include "core/enums.h"
#include "kernels/half_float.h"
#include "strategy/registry.h"
#include "strategy/targets.h"

namespace roialign {
namespace bench {
namespace {

const char kHelp[] = R"(layout_report: NCHW vs NHWC vs blocked roi_align on this CPU, with layout transforms, per ISA.

Usage: layout_report [options]
  --workloads=a,b     standard workloads to run (default: all): default, pooled14, adaptive, rois100, rois20, l3, rotated,
                        fpn
                        default  = 256x200x272 map, 1000 RoIs (16-512 px, log-uniform), 7x7, ratio 2, scale 1/4
                        pooled14 = default with 14x14 output
                        adaptive = default with adaptive sampling and HALF_PIXEL (Detectron2)
                        rois100  = default with 100 RoIs
                        rois20   = default with 20 RoIs (NCHW: the per-RoI tile path, no map transform)
                        l3       = a 256x50x68 map (fits in L3), 1000 RoIs of 16-128 px
                        rotated  = default's map and boxes as rotated RoIs, angles uniform over [-90, 90] degrees
                                   (detectron2: DEGREES, counter-clockwise, HALF_PIXEL); also times, in the same
                                   rounds, NHWC with every angle 0 and the axis-aligned NHWC kernel on the same
                                   boxes (HALF_PIXEL), and reports rotated NHWC over axis-aligned NHWC
                        fpn      = P2-P5 of a 1088x800 image (200x272 .. 25x34), C=256, 1000 RoIs 16-512 px,
                                   7x7, ratio 2, f32: one multi-level call vs the same RoIs level by level
  --custom=SPEC       a custom workload instead, SPEC = key=value pairs separated by ':' e.g.
                        C=64:H=100:W=100:K=500:pooled=7:ratio=2:coord=HALF_PIXEL:pool=MAX:scale=0.25
                        (keys: C H W K pooled ratio coord{LEGACY,HALF_PIXEL,HALF_PIXEL_CENTERED,LEGACY_UNCLAMPED}
                         pool{AVG,MAX,MAX_ONNX} scale; unspecified keys keep the default workload's values;
                         angle=A makes the RoIs rotated, angles uniform over [-A, A] degrees, as workload rotated:
                         HALF_PIXEL unless coord says LEGACY)
  --isas=a,b          ISAs to time (default: every one this CPU runs), e.g. avx2,sse4,emu128
  --best-isas=N       of those, only the N best, as target "host" ranks them (2: the host's ISA and the next)
  --threads=a,b       thread counts (default: 1 and all cores)
  --dtypes=a,b        feature-map and output dtypes (default: f32): f32, f16, bf16, f64 (16-bit maps are the
                        f32 map rounded to nearest even, f64 maps and RoIs the f32 ones widened; an ISA that does
                        not serve a dtype is skipped)
  --repeats=N         rounds (default 7): each round measures the peaks and then times every path once (after
                        an untimed run), in an order that reverses from round to round
  --backward=LIST     the workloads whose backward is timed (default: all of those run): all, none, or names
                        (default,fpn,custom,...)
  --settle=N          measure a group (workload, ISA, dtype, threads) again, up to N times, while one of its rows is
                        unstable (default 0); the rows keep the last attempt and say how many ran
  --max-spread=X      a row whose median is more than X above its minimum is unstable (default 0.10)
  --json=FILE         write the results as JSON (schema in docs/layouts.md)
  --dump-dir=DIR      write each workload's map, RoIs and our NCHW result there, for bench/peers.py
  --help              this text

Rows, per workload, ISA, dtype and thread count (blocked rows f32 only):
  NCHW, NHWC, NCHW4c, NCHW8c, NCHW16c   the kernel of that layout on data in that layout
  D->K kernel->D                        data in layout D transformed to K, K's kernel, its output transformed back
                                        to D (roialign::TransformLayout, the row's threads): NHWC->NCHW, NCHW->NHWC,
                                        and per blocked layout b NCHWb->NHWC and NCHW->NCHWb
Every f32 row is first checked against the reference (the generic NCHW kernel, max abs diff 1e-4).
Backward rows, per workload, ISA, dtype and thread count, after the forward's, in a round robin of their own with
their own limit: "backward dX from dY" of each kernel layout (NCHW, NHWC, and the blocked ones in f32): dX, every
element of it, from a dY of values in [-1, 1), with the forward's inputs. Every f32 backward row is first checked
against the generic NCHW kernel's backward, bit for bit (the backward's contract).

Columns: ms = minimum/median wall time over the rounds; "lim%" = fraction_of_limit = limit / minimum time, then
limit / median time, where the limit (docs/performance-model.md) is a lower bound on any kernel's time from the
best peaks of the rounds. A fraction above 100% would disprove the limit: the report then says so and exits with
status 3. The spread of the limit itself (the median of the rounds' limits) goes to stderr with the progress.
Under each line: the blocked kernels (time over NHWC's, at the minimum, and the f32 map's cache lines their bins
read over NHWC's: blocks narrower than a 64-byte line read more of them for the same taps; bench/limit.h
RoiBinLines), then the conversion rows (time over the kernel that runs on the data's own layout, at the minimum).

Transform bandwidth (f32, in the first ISA's round robin; the library's transform runs on the host's best ISA
whatever --isas says): the workload's NCHW map (every level for fpn) transformed to NCHW16c, NCHW8c and NHWC.
GB/s = (bytes read + bytes written) / time, where read = the NCHW map's bytes and written = the output's, padded
lanes included; each round also measures a copy over buffers of the map's size (the peaks' "move": one pass that
reads the map's bytes and writes as many, with and without streaming stores, best of 4 passes), counted the same
way, read + written, on the same threads. "of copy" = transform GB/s at the minimum time over the copy's best GB/s
of the rounds, then the median over the rounds of each round's transform GB/s over that round's copy GB/s.

Stability: the machine is sampled before and after each group's rounds (/proc/loadavg, /proc/stat, this
process's own CPU time). A row is unstable, marked "!" in the table with an UNSTABLE line giving the reason, if
its median is more than --max-spread above its minimum, if the limit's rounds disagree as much, if other
processes used more cores than the row's threads left idle (plus 0.25), if steal exceeds 5% of CPU time, or if
the load average exceeds the cores by 0.5. The JSON carries the same judgement per row.

The backward's limit (docs/performance-model.md, "The backward's limit") is the same model over the backward's
work: the combining operations of the MAX modes' argmax search (the forward's; none in AVG) over the FMA + add
peaks, and a measured pass that reads dY (the bins dX depends on; the map too in the MAX modes) and writes all of
dX. A backward row faster than its limit is reported, and the exit status is 3, as for the forward.

The verdict at the end, from stable rows only: per ISA, dtype and thread count, the kernel layout with the least time summed over the
workloads that ran every layout, and per conversion row its time over the native kernel (the kernel on the data's
own layout) and the transforms' share of the row (row minus the kernel it wraps, over the row; never negative:
a row no slower than its kernel has no measurable share). A key whose workloads all had unstable kernel rows
says that its verdict could not be built.
)";

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs `run` once, exiting with its message if it fails.
void RunOrExit(const std::function<Status()>& run) {
  const Status s = run();
  if (!s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    std::exit(1);
  }
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
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

bool ParseCustom(const std::string& spec, WorkloadSpec* w) {
  *w = StandardWorkloads()[0];
  w->name = "custom";
  bool coord_given = false;
  for (const std::string& kv : Split(spec, ':')) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos) return false;
    const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
    if (k == "C") w->channels = std::stoll(v);
    else if (k == "H") w->height = std::stoll(v);
    else if (k == "W") w->width = std::stoll(v);
    else if (k == "K") w->num_rois = std::stoll(v);
    else if (k == "pooled") w->pooled = std::stoll(v);
    else if (k == "ratio") w->sampling_ratio = std::stoi(v);
    else if (k == "scale") w->spatial_scale = std::stof(v);
    else if (k == "angle") {
      w->roi_kind = RoiKind::kRotated;
      w->max_angle = std::stof(v);
    } else if (k == "coord") {
      coord_given = true;
      if (!internal::ParseEnum(v, &w->coordinate_mode)) return false;
    } else if (k == "pool") {
      if (!internal::ParseEnum(v, &w->pool_mode)) return false;
    } else {
      return false;
    }
  }
  if (w->roi_kind == RoiKind::kRotated && !coord_given) w->coordinate_mode = CoordinateMode::kHalfPixel;  // aligned
  w->image_width = static_cast<float>(w->width) / w->spatial_scale;
  w->image_height = static_cast<float>(w->height) / w->spatial_scale;
  w->max_roi = std::min(w->max_roi, std::min(w->image_width, w->image_height));
  w->min_roi = std::min(w->min_roi, w->max_roi);
  return w->channels > 0 && w->height > 0 && w->width > 0 && w->num_rois > 0 && w->pooled > 0;
}

void WriteFile(const std::string& path, const void* data, size_t bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!f) {
    std::fprintf(stderr, "error: cannot write %s\n", path.c_str());
    std::exit(1);
  }
}

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

// Runs `path` once, then exits unless its output `out` (num_rois x C x pooled x pooled f32, in `layout`) is within
// `tolerance` of the reference output `ref` (in `ref_layout`).
void CheckOrExit(const std::string& what, const std::function<Status()>& path, const float* out, Layout layout,
                 const float* ref, int64_t num_rois, int64_t channels, int64_t pooled,
                 Layout ref_layout = Layout::kNCHW, double tolerance = 1e-4) {
  RunOrExit(path);
  const double diff = MaxAbsDiff(out, layout, ref, ref_layout, num_rois, channels, pooled, pooled);
  if (!(diff <= tolerance)) {
    std::fprintf(stderr, "error: %s differs from the reference by %g\n", what.c_str(), diff);
    std::exit(1);
  }
}

// Runs the transform `path` once, then exits unless the scratch's maps in `to` hold the NCHW maps `nchw` exactly.
void CheckTransformOrExit(const std::string& workload, const std::function<Status()>& path,
                          const ConversionScratch& scratch, Layout to, const MapShape& shape,
                          const std::vector<const void*>& nchw) {
  RunOrExit(path);
  const double diff = MaxAbsDiffOfMaps(scratch, to, shape, nchw);
  if (diff != 0) {
    std::fprintf(stderr, "error: %s NCHW->%s transform differs from the map by %g\n", workload.c_str(), ToString(to),
                 diff);
    std::exit(1);
  }
}

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

void PrintTransform(const TransformRow& t) {
  char name[48];
  std::snprintf(name, sizeof(name), "%s->%s", ToString(t.from), ToString(t.to));
  std::printf("%-9s %-7s %-5s %3d | transform %-14s %7.3f/%-7.3f ms %6.1f GB/s (read + written) = %5.1f%%/%5.1f%% "
              "of the copy's %.1f GB/s%s\n",
              t.workload.c_str(), "", "F32", t.threads, name, t.ms_min, t.ms, t.gb_per_s, 100 * t.fraction,
              100 * t.fraction_median, t.copy_gb_per_s,
              t.stable() ? "" : (" ! unstable: " + t.reasons[0] + (t.reasons.size() > 1 ? "; ..." : "")).c_str());
}

// A rotated workload's NHWC kernel against the axis-aligned NHWC kernel on the same boxes (HALF_PIXEL), timed in
// the same rounds: with the workload's angles (its NHWC row), with every angle 0, and the axis-aligned kernel.
struct RotatedComparison {
  std::string workload, isa, dtype;
  int threads;
  double rotated_ms_min, rotated_ms, angle0_ms_min, angle0_ms, axis_ms_min, axis_ms;
  std::vector<std::string> reasons;  // the three paths' (bench/stability.h); empty: stable
  bool stable() const { return reasons.empty(); }
};

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

// The limit row of one (workload, ISA, dtype, threads) from its rounds' peaks: the best peaks give the limit, the
// medians its spread. W is Workload or PyramidWorkload (LimitOf in bench/limit.h).
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

// What the machine and the user allow: thresholds of the stability check, and how often to repeat an unstable group.
struct Stability {
  StabilityThresholds thresholds;
  int settle = 0;  // round robins repeated while a row of the group is unstable
  int cores = 1;
};

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
// together. W is Workload or PyramidWorkload.
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

// Under a group's lines: its unstable rows and why, so that no figure of them is read without the warning. The
// machine's reasons are the group's (its rows share their rounds); each row's own spread follows.
void PrintUnstable(const std::vector<Row>& rows, const char* label = "") {
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

// dY for the backward rows: one logical K x C x P x P tensor of values in [-1, 1) (the map's first values,
// repeated), in each layout and dtype a row runs, built when first asked for (16-bit: rounded to nearest even;
// f64: widened).
class BackwardDy {
 public:
  BackwardDy(const AlignedVector<float>& values, int64_t num_rois, int64_t channels, int64_t pooled)
      : K_(num_rois), C_(channels), P_(pooled), nchw_(static_cast<size_t>(num_rois * channels * pooled * pooled)) {
    for (size_t i = 0; i < nchw_.size(); ++i) nchw_[i] = values[i % values.size()];
  }
  const void* Get(Layout layout, DType dtype) {
    const AlignedBuffer& f32 = F32(layout);
    if (dtype == DType::kF32) return f32.data();
    if (dtype == DType::kF64) {  // widened
      AlignedVector<double>& wide = f64_[layout];
      if (wide.empty()) wide.assign(f32.begin(), f32.end());
      return wide.data();
    }
    AlignedVector<uint16_t>& half = half_[{layout, dtype}];
    if (half.empty()) {
      half.resize(f32.size());
      for (size_t i = 0; i < f32.size(); ++i) {
        half[i] = dtype == DType::kF16 ? internal::F16BitsFromF32(f32[i]) : internal::BF16BitsFromF32(f32[i]);
      }
    }
    return half.data();
  }

 private:
  const AlignedBuffer& F32(Layout layout) {
    if (layout == Layout::kNCHW) return nchw_;
    AlignedBuffer& b = f32_[layout];
    if (b.empty()) b = FromNchw(nchw_.data(), K_, C_, P_, P_, layout);
    return b;
  }
  int64_t K_, C_, P_;
  AlignedBuffer nchw_;
  std::map<Layout, AlignedBuffer> f32_;
  std::map<std::pair<Layout, DType>, AlignedVector<uint16_t>> half_;
  std::map<Layout, AlignedVector<double>> f64_;
};

// The kernel layouts whose backward is timed in `dtype`: NCHW and NHWC, and the blocked ones in f32 (whose maps the
// workloads build in f32 only).
std::vector<Layout> BackwardLayouts(DType dtype) {
  std::vector<Layout> layouts = {Layout::kNCHW, Layout::kNHWC};
  if (dtype == DType::kF32) layouts.insert(layouts.end(), std::begin(kBlockedLayouts), std::end(kBlockedLayouts));
  return layouts;
}

// Runs the backward `path` once, then exits unless its dX (`dx[l]` per level, C x heights[l] x widths[l] f32 in
// `layout`) holds the reference's (`ref[l]`, NCHW) bits: every backward kernel gives the reference's
// (docs/semantics.md#backward).
void CheckBackwardOrExit(const std::string& what, const std::function<Status()>& path, Layout layout,
                         const std::vector<const float*>& dx, const std::vector<const float*>& ref, int64_t channels,
                         const std::vector<int64_t>& heights, const std::vector<int64_t>& widths) {
  RunOrExit(path);
  for (size_t l = 0; l < dx.size(); ++l) {
    const double diff = MaxAbsDiff(dx[l], layout, ref[l], Layout::kNCHW, 1, channels, heights[l], widths[l]);
    if (diff != 0) {
      std::fprintf(stderr, "error: %s differs from the reference's by %g (level %zu)\n", what.c_str(), diff, l);
      std::exit(1);
    }
  }
}

// The backward group of one (workload, ISA, dtype, threads), measured: its limit on stderr, its lines under the
// forward's (NCHW and NHWC, then the blocked layouts), its unstable rows; its rows and limit appended to `rows` and
// `limits`, and each row faster than the limit to `violations`.
void ReportBackward(const Group& g, const BackwardAccounting& b, DType dtype, int repeats, std::vector<Row>* rows,
                    std::vector<LimitRow>* limits, std::vector<std::string>* violations) {
  const LimitRow& lr = g.limit;
  std::fprintf(stderr,
               "    backward limit %.2f ms, rounds' median %.2f ms (compute %.2f, memory %.2f): best of %d rounds "
               "%.1f GFMA/s + %.1f GADD/s, move %.2f ms = %.1f GB/s\n",
               lr.limit.seconds * 1e3, lr.limit_median_seconds * 1e3, lr.limit.compute_seconds * 1e3,
               lr.limit.memory_seconds * 1e3, repeats, lr.best.gfma_per_s, lr.best.gadd_per_s,
               lr.best.move_seconds * 1e3, lr.best.moved_bytes / lr.best.move_seconds / 1e9);
  limits->push_back(lr);
  limits->back().dy_bytes = Bytes(b.dy_bytes, dtype);
  limits->back().map_bytes = Bytes(b.map_bytes, dtype);
  for (const Row& r : g.rows) {
    if (r.fraction > 1.0) {
      violations->push_back(r.workload + " " + r.isa + " " + r.dtype + " " + std::to_string(r.threads) +
                            " thread(s) backward " + r.path + ": " + std::to_string(100 * r.fraction) + "%");
    }
  }
  rows->insert(rows->end(), g.rows.begin(), g.rows.end());
  std::string line;
  for (size_t i = 0; i < g.rows.size(); ++i) {
    const Row& r = g.rows[i];
    line += " " + r.path + " " + Cell(r) + " |";
    if (i == 1 || i + 1 == g.rows.size()) {
      std::printf("%-9s %-7s %-5s %3d | backward dX from dY, ms min/med (lim%% min/med):%s\n", r.workload.c_str(),
                  r.isa.c_str(), r.dtype.c_str(), r.threads, line.c_str());
      line.clear();
    }
  }
  PrintUnstable(g.rows, " (backward)");
}

// The FPN rows: one multi-level call per layout, the same RoIs level by level, the conversion rows and the
// transforms of the four levels (f32), timed round robin with the peaks like the other workloads.
void RunPyramid(const Stability& stability, const std::vector<const internal::IsaTarget*>& targets,
                const std::vector<int>& threads, int repeats, const std::string& dump_dir, bool run_backward,
                std::vector<Row>* rows, std::vector<LimitRow>* limits, std::vector<TransformRow>* transforms,
                std::vector<Row>* backward_rows, std::vector<LimitRow>* backward_limits,
                std::vector<std::string>* violations) {
  std::fprintf(stderr, "building workload fpn...\n");
  const PyramidWorkload w = MakePyramidWorkload();
  AlignedBuffer out(w.OutputSize());
  if (!dump_dir.empty()) {  // for bench/peers.py: the maps, the RoIs and our result
    const std::string base = dump_dir + "/fpn";
    const MultiLevelSelectResult ref = SelectMultiLevel(targets[0]->target, w.ParamsFor(Layout::kNCHW));
    const std::vector<LevelMap> maps = w.MapsFor(Layout::kNCHW);
    const MultiLevelInputs in = w.InputsFor(maps);
    if (!ref.ok() || !ref.kernel.Run(in, out.data(), 0).ok()) std::exit(1);
    std::ofstream j(base + ".json");
    j << "{\"name\": \"fpn\", \"batch\": 1, \"channels\": " << w.channels << ", \"num_rois\": " << w.num_rois
      << ", \"pooled_height\": " << w.pooled << ", \"pooled_width\": " << w.pooled
      << ", \"sampling_ratio\": " << w.sampling_ratio
      << ", \"coordinate_mode\": \"LEGACY\", \"pool_mode\": \"AVG\", \"image_height\": 800, \"image_width\": 1088"
      << ", \"levels\": [";
    for (size_t l = 0; l < maps.size(); ++l) {
      WriteFile(base + ".map" + std::to_string(l) + ".f32", w.nchw[l].data(), w.nchw[l].size() * 4);
      j << (l ? ", " : "") << "{\"height\": " << w.heights[l] << ", \"width\": " << w.widths[l]
        << ", \"spatial_scale\": " << w.scales[l] << "}";
    }
    j << "], \"threads\": [";
    for (size_t i = 0; i < threads.size(); ++i) j << (i ? ", " : "") << threads[i];
    j << "]}\n";
    WriteFile(base + ".rois.f32", w.rois.data(), w.rois.size() * 4);
    WriteFile(base + ".ref.f32", out.data(), out.size() * 4);
  }
  std::printf("%-9s %-7s %-5s %3s | %-31s | %-31s | %-20s | %-20s | %s\n", "workload", "isa", "dtype", "thr",
              "NCHW ms min/med (lim% min/med)", "NHWC ms min/med (lim% min/med)", "NCHW by level ms",
              "NHWC by level ms", "one call vs by level (min)");
  PeakMeter meter(w.distinct_input_bytes, w.output_bytes);
  const MapShape shape{w.channels, w.heights, w.widths};
  // The copy the transforms are held to: one pass over buffers of the NCHW maps' bytes, read and written.
  PeakMeter copy_meter(shape.Bytes(Layout::kNCHW, DType::kF32), shape.Bytes(Layout::kNCHW, DType::kF32));
  ConversionScratch scratch(shape, w.num_rois, w.pooled);
  const std::vector<LevelMap> maps[2] = {w.MapsFor(Layout::kNCHW), w.MapsFor(Layout::kNHWC)};
  std::vector<std::vector<LevelMap>> blocked_maps;
  for (Layout layout : kBlockedLayouts) blocked_maps.push_back(w.MapsFor(layout));
  // Each layout's maps as plain pointers, as the conversion and transform rows take them.
  auto pointers = [&w](Layout layout) {
    std::vector<const void*> p;
    for (const LevelMap& m : w.MapsFor(layout)) p.push_back(m.input);
    return p;
  };
  const int64_t C = w.channels, K = w.num_rois, P = w.pooled;
  // The reference every f32 row is checked against before it is timed; the blocked rows' output (padded channels).
  AlignedBuffer ref_out(w.OutputSize());
  AlignedBuffer out_b(static_cast<size_t>(K * internal::StoredChannels(Layout::kNCHW16c, C) * P * P));
  {
    const MultiLevelSelectResult ref = SelectMultiLevel("generic", w.ParamsFor(Layout::kNCHW));
    RunOrExit([&] { return ref.ok() ? ref.kernel.Run(w.InputsFor(maps[0]), ref_out.data(), 0) : ref.status; });
  }
  // The backward rows, as the single-level workloads': dY, one dX per level (padded lanes included) that every path
  // overwrites, the reference's, and the meter of the bytes a backward must move.
  std::unique_ptr<BackwardDy> dy;
  std::vector<AlignedBuffer> dx, ref_dx;
  std::vector<void*> dx_levels, ref_dx_levels;
  std::unique_ptr<PeakMeter> backward_meter;
  if (run_backward) {
    dy = std::make_unique<BackwardDy>(w.nchw[0], K, C, P);
    const int64_t padded = internal::StoredChannels(Layout::kNCHW16c, C);
    for (size_t l = 0; l < w.heights.size(); ++l) {
      dx.emplace_back(static_cast<size_t>(padded * w.heights[l] * w.widths[l]));
      ref_dx.emplace_back(dx.back().size());
    }
    for (size_t l = 0; l < dx.size(); ++l) {
      dx_levels.push_back(dx[l].data());
      ref_dx_levels.push_back(ref_dx[l].data());
    }
    const MultiLevelBackwardKernel ref("generic", w.ParamsFor(Layout::kNCHW));
    RunOrExit([&] {
      return ref.ok() ? ref.Run(w.InputsFor(maps[0]), dy->Get(Layout::kNCHW, DType::kF32), ref_dx_levels.data(), 0)
                      : ref.status();
    });
    backward_meter = std::make_unique<PeakMeter>(w.backward.dy_bytes + w.backward.map_bytes, w.backward.dx_bytes);
  }
  std::vector<const float*> dx_read, ref_dx_read;  // the same, as CheckBackwardOrExit reads them
  for (size_t l = 0; l < dx.size(); ++l) {
    dx_read.push_back(dx[l].data());
    ref_dx_read.push_back(ref_dx[l].data());
  }
  for (const internal::IsaTarget* t : targets) {
    MultiLevelSelectResult multi[2];
    LevelByLevel levels[2];
    MultiLevelInputs in[2];
    for (int i = 0; i < 2; ++i) {
      const Layout layout = i == 0 ? Layout::kNCHW : Layout::kNHWC;
      multi[i] = SelectMultiLevel(t->target, w.ParamsFor(layout));
      const Status init = levels[i].Init(w, t->target, layout);
      if (!multi[i].ok() || !init.ok()) {
        std::fprintf(stderr, "fpn %s: %s\n", t->isa, (multi[i].ok() ? init : multi[i].status).message().c_str());
        std::exit(1);
      }
      in[i] = w.InputsFor(maps[i]);
    }
    std::vector<MultiLevelSelectResult> blocked;
    std::vector<MultiLevelInputs> in_b;
    for (Layout layout : kBlockedLayouts) {
      blocked.push_back(SelectMultiLevel(t->target, w.ParamsFor(layout)));
      if (!blocked.back().ok()) {
        std::fprintf(stderr, "fpn %s %s: %s\n", t->isa, ToString(layout), blocked.back().status.message().c_str());
        std::exit(1);
      }
      in_b.push_back(w.InputsFor(blocked_maps[BlockedIndex(layout)]));
    }
    std::vector<MultiLevelBackwardKernel> backward_kernels;
    std::vector<Layout> backward_layouts;
    for (Layout layout : run_backward ? BackwardLayouts(DType::kF32) : std::vector<Layout>()) {
      MultiLevelBackwardKernel k(t->target, w.ParamsFor(layout));
      if (!k.ok()) {
        std::fprintf(stderr, "  fpn %s %s backward: skipped (%s)\n", t->isa, ToString(layout),
                     k.status().message().c_str());
        continue;
      }
      backward_kernels.push_back(k);
      backward_layouts.push_back(layout);
    }
    // The forward's inputs of each layout, which the backward takes too.
    auto inputs_of = [&](Layout layout) {
      return layout == Layout::kNCHW   ? in[0]
             : layout == Layout::kNHWC ? in[1]
                                       : in_b[BlockedIndex(layout)];
    };
    // The kernel of `layout`, as the conversion rows call it: on maps given as pointers, one per level.
    auto kernel_on = [&](Layout layout) -> KernelOn {
      const MultiLevelSelectResult* k = layout == Layout::kNCHW   ? &multi[0]
                                        : layout == Layout::kNHWC ? &multi[1]
                                                                  : &blocked[BlockedIndex(layout)];
      return [k, &w](const std::vector<const void*>& m, void* dst, int nt) {
        std::vector<LevelMap> level_maps;
        for (size_t l = 0; l < m.size(); ++l) level_maps.push_back({m[l], w.heights[l], w.widths[l]});
        return k->kernel.Run(w.InputsFor(level_maps), dst, nt);
      };
    };
    // The transforms do not depend on the ISA the kernels were selected for: timed once, with the first.
    const bool time_transforms = t == targets[0];
    for (size_t ti = 0; ti < threads.size(); ++ti) {
      const int nt = threads[ti];
      std::fprintf(stderr, "  fpn %s F32 %d thread(s)...\n", t->isa, nt);
      std::vector<std::function<Status()>> paths = {
          [&] { return multi[0].kernel.Run(in[0], out.data(), nt); },
          [&] { return multi[1].kernel.Run(in[1], out.data(), nt); },
          [&] { return levels[0].Run(out.data(), nt); },
          [&] { return levels[1].Run(out.data(), nt); }};
      std::vector<std::string> names = {"NCHW", "NHWC", "NCHW level by level", "NHWC level by level"};
      const std::string what = std::string("fpn ") + t->isa + " ";
      for (size_t b = 0; b < blocked.size(); ++b) {
        paths.push_back([&, b] { return blocked[b].kernel.Run(in_b[b], out_b.data(), nt); });
        names.push_back(ToString(kBlockedLayouts[b]));
        if (ti == 0) {
          CheckOrExit(what + names.back(), paths.back(), out_b.data(), kBlockedLayouts[b], ref_out.data(), K, C, P);
        }
      }
      for (const Conversion& c : kConversions) {
        float* dst = internal::IsBlocked(c.data) ? out_b.data() : out.data();
        paths.push_back(ConversionPath(c, DType::kF32, shape, pointers(c.data), kernel_on(c.kernel), K, P, &scratch,
                                       dst, nt));
        names.push_back(ConversionName(c));
        if (ti == 0) CheckOrExit(what + names.back(), paths.back(), dst, c.data, ref_out.data(), K, C, P);
      }
      if (time_transforms) {
        for (Layout to : kBandwidthLayouts) {
          paths.push_back(TransformPath(Layout::kNCHW, to, DType::kF32, shape, pointers(Layout::kNCHW), &scratch, nt));
          if (ti == 0) CheckTransformOrExit("fpn", paths.back(), scratch, to, shape, pointers(Layout::kNCHW));
        }
      }
      const Group g = MeasureGroup(stability, w, "fpn", t->isa, "F32", nt, repeats, &meter,
                                   time_transforms ? &copy_meter : nullptr, paths, names, w.distinct_input_bytes,
                                   w.output_bytes, w.loaded_bytes);
      limits->push_back(g.limit);
      const std::vector<Row>& now = g.rows;
      const std::vector<std::vector<double>>& seconds = g.seconds;
      const std::vector<Peaks>& copies = g.copies;
      for (const Row& r : now) {
        if (r.fraction > 1.0) {
          violations->push_back(std::string("fpn ") + t->isa + " F32 " + std::to_string(nt) + " thread(s) " + r.path +
                                ": " + std::to_string(100 * r.fraction) + "%");
        }
      }
      rows->insert(rows->end(), now.begin(), now.end());
      std::printf("%-9s %-7s %-5s %3d | %-31s | %-31s | %8.2f/%-11.2f | %8.2f/%-11.2f | NCHW %.2fx, NHWC %.2fx\n",
                  "fpn", t->isa, "F32", nt, Cell(now[0]).c_str(), Cell(now[1]).c_str(), now[2].ms_min, now[2].ms,
                  now[3].ms_min, now[3].ms, now[2].ms_min / now[0].ms_min, now[3].ms_min / now[1].ms_min);
      PrintExtras(now, 4, w.bin_lines);
      PrintUnstable(now);
      for (size_t k = 0; time_transforms && k < 3; ++k) {
        const Layout to = kBandwidthLayouts[k];
        transforms->push_back(SummarizeTransform("fpn", nt, Layout::kNCHW, to, shape.Bytes(Layout::kNCHW, DType::kF32),
                                                 shape.Bytes(to, DType::kF32), seconds[names.size() + k], copies));
        transforms->back().reasons = UnstableReasons(Spread(seconds[names.size() + k]), g.limit_spread, g.load, nt,
                                                     stability.thresholds);
        PrintTransform(transforms->back());
      }
      if (!backward_kernels.empty()) {
        std::fprintf(stderr, "  fpn %s F32 %d thread(s) backward...\n", t->isa, nt);
        std::vector<std::function<Status()>> backward_paths;
        std::vector<std::string> backward_names;
        for (size_t b = 0; b < backward_kernels.size(); ++b) {
          const MultiLevelBackwardKernel& kernel = backward_kernels[b];
          const Layout layout = backward_layouts[b];
          const MultiLevelInputs inputs = inputs_of(layout);
          const void* grad = dy->Get(layout, DType::kF32);
          void* const* d = dx_levels.data();
          backward_paths.push_back([&kernel, inputs, grad, d, nt] { return kernel.Run(inputs, grad, d, nt); });
          backward_names.push_back(ToString(layout));
          if (ti == 0) {
            CheckBackwardOrExit(what + "backward " + backward_names.back(), backward_paths.back(), layout, dx_read,
                                ref_dx_read, C, w.heights, w.widths);
          }
        }
        const BackwardAccounting& b = w.backward;
        const Group bg = MeasureGroup(stability, b, "fpn", t->isa, "F32", nt, repeats, backward_meter.get(), nullptr,
                                      backward_paths, backward_names, b.dy_bytes + b.map_bytes, b.dx_bytes,
                                      b.loaded_bytes);
        ReportBackward(bg, b, DType::kF32, repeats, backward_rows, backward_limits, violations);
      }
      std::fflush(stdout);
    }
  }
}

}  // namespace

int Main(int argc, char** argv) {
  std::vector<std::string> workload_names, isas;
  std::vector<DType> dtypes = {DType::kF32};
  std::vector<int> threads = {1, omp_get_num_procs()};
  int repeats = 7;
  size_t best_isas = 0;  // 0: all
  Stability stability;
  stability.cores = omp_get_num_procs();
  std::string json_path, dump_dir, custom;
  std::vector<std::string> backward = {"all"};  // the workloads whose backward is timed
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* key) -> const char* {
      const std::string k = std::string(key) + "=";
      return a.rfind(k, 0) == 0 ? argv[i] + k.size() : nullptr;
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp, stdout);
      return 0;
    } else if (const char* v = value("--workloads")) {
      workload_names = Split(v, ',');
    } else if (const char* v2 = value("--isas")) {
      isas = Split(v2, ',');
    } else if (const char* v3 = value("--threads")) {
      threads.clear();
      for (const std::string& t : Split(v3, ',')) threads.push_back(std::max(1, std::atoi(t.c_str())));
    } else if (const char* v4 = value("--repeats")) {
      repeats = std::max(1, std::atoi(v4));
    } else if (const char* v5 = value("--json")) {
      json_path = v5;
    } else if (const char* v6 = value("--dump-dir")) {
      dump_dir = v6;
    } else if (const char* v7 = value("--custom")) {
      custom = v7;
    } else if (const char* v9 = value("--best-isas")) {
      best_isas = static_cast<size_t>(std::max(1, std::atoi(v9)));
    } else if (const char* v12 = value("--backward")) {
      backward = Split(v12, ',');
    } else if (const char* v10 = value("--settle")) {
      stability.settle = std::max(0, std::atoi(v10));
    } else if (const char* v11 = value("--max-spread")) {
      stability.thresholds.max_spread = std::atof(v11);
      if (!(stability.thresholds.max_spread > 0)) {
        std::fprintf(stderr, "--max-spread must be above 0 (see --help)\n");
        return 2;
      }
    } else if (const char* v8 = value("--dtypes")) {
      dtypes.clear();
      for (std::string d : Split(v8, ',')) {
        std::transform(d.begin(), d.end(), d.begin(),
                       [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
        DType dtype;
        if (!internal::ParseEnum(d, &dtype)) {
          std::fprintf(stderr, "unknown dtype '%s' (see --help)\n", d.c_str());
          return 2;
        }
        dtypes.push_back(dtype);
      }
    } else {
      std::fprintf(stderr, "unknown option '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  std::sort(threads.begin(), threads.end());
  threads.erase(std::unique(threads.begin(), threads.end()), threads.end());
  const auto backward_of = [&backward](const std::string& workload) {
    return std::find(backward.begin(), backward.end(), "all") != backward.end() ||
           std::find(backward.begin(), backward.end(), workload) != backward.end();
  };

  std::vector<WorkloadSpec> specs;
  if (!custom.empty()) {
    WorkloadSpec w;
    if (!ParseCustom(custom, &w)) {
      std::fprintf(stderr, "bad --custom spec '%s' (see --help)\n", custom.c_str());
      return 2;
    }
    specs.push_back(w);
  } else if (workload_names.empty()) {
    specs = StandardWorkloads();
  } else {
    for (const std::string& n : workload_names) {
      if (n == "fpn") continue;  // the pyramid workload, below
      const WorkloadSpec* w = FindWorkload(n);
      if (w == nullptr) {
        std::fprintf(stderr, "unknown workload '%s' (see --help)\n", n.c_str());
        return 2;
      }
      specs.push_back(*w);
    }
  }
  // ISAs: every runnable built-in SIMD target, best first, filtered by --isas.
  std::vector<const internal::IsaTarget*> targets;
  for (const internal::IsaTarget& t : internal::IsaTargets()) {
    if (!internal::CpuSupports(t.hwy_target)) continue;
    // Not compiled into this build, or another ISA serves the name ("portable" is EMU128 or SCALAR).
    const SelectResult probe = Select(t.target, Params());
    if (!probe.ok() || probe->name() != std::string("roi_align_nchw.") + t.isa) continue;
    if (!isas.empty() && std::find(isas.begin(), isas.end(), t.isa) == isas.end()) continue;
    targets.push_back(&t);
  }
  if (best_isas > 0 && targets.size() > best_isas) targets.resize(best_isas);  // they are best first
  if (targets.empty()) {
    std::fprintf(stderr, "no ISA to run (this CPU: %s)\n", internal::CpuTargetsDescription().c_str());
    return 2;
  }

  std::vector<Row> rows;
  std::vector<LimitRow> limits;
  std::vector<TransformRow> transforms;
  std::vector<std::string> violations;  // rows above their limit
  std::vector<Row> backward_rows;
  std::vector<LimitRow> backward_limits;
  std::vector<RotatedComparison> comparisons;  // rotated workloads' NHWC against axis-aligned NHWC
  if (!specs.empty()) {
    std::printf("%-9s %-7s %-5s %3s | %-31s | %-31s | %-20s | %-20s | %s\n", "workload", "isa", "dtype", "thr",
                "NCHW ms min/med (lim% min/med)", "NHWC ms min/med (lim% min/med)", "NHWC->NCHW->NHWC ms",
                "NCHW->NHWC->NCHW ms", "winner");
  }
  for (const WorkloadSpec& spec : specs) {
    std::fprintf(stderr, "building workload %s...\n", spec.name.c_str());
    const Workload w = MakeWorkload(spec);
    const MapShape shape{spec.channels, {spec.height}, {spec.width}};
    ConversionScratch scratch(shape, spec.num_rois, spec.pooled);
    // The copy the transforms are held to: one pass over buffers of the NCHW map's bytes, read and written.
    PeakMeter copy_meter(shape.Bytes(Layout::kNCHW, DType::kF32), shape.Bytes(Layout::kNCHW, DType::kF32));
    // The blocked rows' output (padded channels), and the reference every f32 row is checked against before timing.
    AlignedBuffer out(BufferFloats(w.OutputSize(), DType::kF64));  // room for the widest dtype
    const int64_t padded = internal::StoredChannels(Layout::kNCHW16c, spec.channels);
    AlignedBuffer out_b(static_cast<size_t>(spec.num_rois * padded * spec.pooled * spec.pooled));
    AlignedBuffer ref_out(w.OutputSize());
    {
      const SelectResult ref = Select("generic", w.ParamsFor(Layout::kNCHW));
      RunOrExit([&] { return ref.ok() ? ref->Run(w.InputsFor(Layout::kNCHW), ref_out.data(), 0) : ref.status(); });
    }
    // The backward rows' dY, their dX (every path overwrites all of it, padded lanes included), the reference dX
    // every f32 backward row is checked against, and per dtype the meter of the bytes a backward must move.
    const bool run_backward = backward_of(spec.name);
    std::unique_ptr<BackwardDy> dy;
    AlignedBuffer dx, ref_dx;
    std::vector<std::unique_ptr<PeakMeter>> backward_meters;
    if (run_backward) {
      dy = std::make_unique<BackwardDy>(w.nchw, spec.num_rois, spec.channels, spec.pooled);
      dx.resize(BufferFloats(static_cast<size_t>(padded * spec.height * spec.width), DType::kF64));  // widest dtype
      ref_dx.resize(dx.size());
      const BackwardKernel ref("generic", w.ParamsFor(Layout::kNCHW));
      RunOrExit([&] {
        return ref.ok() ? ref.Run(w.InputsFor(Layout::kNCHW), dy->Get(Layout::kNCHW, DType::kF32), ref_dx.data(), 0)
                        : ref.status();
      });
      for (DType dtype : dtypes) {
        backward_meters.push_back(std::make_unique<PeakMeter>(Bytes(w.backward.dy_bytes + w.backward.map_bytes, dtype),
                                                              Bytes(w.backward.dx_bytes, dtype)));
      }
    }
    if (!dump_dir.empty()) {
      const std::string base = dump_dir + "/" + spec.name;
      SelectResult ref = Select(targets[0]->target, w.ParamsFor(Layout::kNCHW));
      ref->Run(w.InputsFor(Layout::kNCHW), out.data(), 0);
      WriteFile(base + ".map.f32", w.nchw.data(), w.nchw.size() * 4);
      WriteFile(base + ".rois.f32", w.rois.data(), w.rois.size() * 4);  // [K,6] rows for rotated RoIs
      WriteFile(base + ".ref.f32", out.data(), w.OutputSize() * 4);
      const bool rotated = spec.roi_kind == RoiKind::kRotated;
      if (rotated) {  // the same boxes axis-aligned and our axis-aligned result on them, for axis-aligned peers
        SelectResult axis = Select(targets[0]->target, w.AxisAlignedParamsFor(Layout::kNCHW));
        RunOrExit([&] { return axis.ok() ? axis->Run(w.AxisAlignedInputsFor(Layout::kNCHW), out.data(), 0)
                                         : axis.status(); });
        WriteFile(base + ".rois_axis.f32", w.rois_axis.data(), w.rois_axis.size() * 4);
        WriteFile(base + ".ref_axis.f32", out.data(), w.OutputSize() * 4);
      }
      std::ofstream j(base + ".json");
      j << "{\"name\": \"" << spec.name << "\", \"batch\": 1, \"channels\": " << spec.channels
        << ", \"height\": " << spec.height << ", \"width\": " << spec.width << ", \"num_rois\": " << spec.num_rois
        << ", \"pooled_height\": " << spec.pooled << ", \"pooled_width\": " << spec.pooled
        << ", \"spatial_scale\": " << spec.spatial_scale << ", \"sampling_ratio\": " << spec.sampling_ratio
        << ", \"coordinate_mode\": \"" << ToString(spec.coordinate_mode) << "\", \"pool_mode\": \""
        << ToString(spec.pool_mode) << "\"";
      if (rotated) {
        const Params p = w.ParamsFor(Layout::kNCHW);
        j << ", \"roi_kind\": \"" << ToString(p.roi_kind) << "\", \"angle_unit\": \"" << ToString(p.angle_unit)
          << "\", \"rotation\": \"" << ToString(p.rotation) << "\"";
      }
      j << ", \"threads\": [";
      for (size_t i = 0; i < threads.size(); ++i) j << (i ? ", " : "") << threads[i];
      j << "]}\n";
    }
    const int64_t C = spec.channels, K = spec.num_rois, P = spec.pooled;
    // Buffers of the bytes that must move, per dtype (bench/limit.h).
    std::vector<std::unique_ptr<PeakMeter>> meters;
    for (DType dtype : dtypes) {
      meters.push_back(std::make_unique<PeakMeter>(Bytes(w.distinct_input_bytes, dtype), Bytes(w.output_bytes, dtype)));
    }
    for (const internal::IsaTarget* t : targets) {
      for (size_t di = 0; di < dtypes.size(); ++di) {
        const DType dtype = dtypes[di];
        const SelectResult nchw = Select(t->target, w.ParamsFor(Layout::kNCHW, dtype));
        const SelectResult nhwc = Select(t->target, w.ParamsFor(Layout::kNHWC, dtype));
        if (!nchw.ok() || !nhwc.ok()) {
          std::fprintf(stderr, "  %s %s %s: skipped (%s)\n", spec.name.c_str(), t->isa, ToString(dtype),
                       (nchw.ok() ? nhwc : nchw).status().message().c_str());
          continue;
        }
        std::vector<SelectResult> blocked;
        if (dtype == DType::kF32) {
          for (Layout layout : kBlockedLayouts) {
            blocked.push_back(Select(t->target, w.ParamsFor(layout, dtype)));
            if (!blocked.back().ok()) {
              std::fprintf(stderr, "error: %s %s: %s\n", t->isa, ToString(layout),
                           blocked.back().status().message().c_str());
              return 1;
            }
          }
        }
        std::vector<BackwardKernel> backward_kernels;
        std::vector<Layout> backward_layouts;
        for (Layout layout : run_backward ? BackwardLayouts(dtype) : std::vector<Layout>()) {
          BackwardKernel k(t->target, w.ParamsFor(layout, dtype));
          if (!k.ok()) {
            std::fprintf(stderr, "  %s %s %s %s backward: skipped (%s)\n", spec.name.c_str(), t->isa, ToString(dtype),
                         ToString(layout), k.status().message().c_str());
            continue;
          }
          backward_kernels.push_back(k);
          backward_layouts.push_back(layout);
        }
        // The kernel of `layout`, as the conversion rows call it: on one map given as a pointer.
        auto kernel_on = [&](Layout layout, DType d) -> KernelOn {
          const SelectResult* k = layout == Layout::kNCHW   ? &nchw
                                  : layout == Layout::kNHWC ? &nhwc
                                                            : &blocked[BlockedIndex(layout)];
          const Inputs in = w.InputsFor(layout, d);
          return [k, in](const std::vector<const void*>& maps, void* dst, int nt) {
            Inputs with_map = in;
            with_map.input = maps[0];
            return (*k)->Run(with_map, dst, nt);
          };
        };
        for (size_t ti = 0; ti < threads.size(); ++ti) {
          const int nt = threads[ti];
          std::fprintf(stderr, "  %s %s %s %d thread(s)...\n", spec.name.c_str(), t->isa, ToString(dtype), nt);
          const Inputs in_nchw = w.InputsFor(Layout::kNCHW, dtype), in_nhwc = w.InputsFor(Layout::kNHWC, dtype);
          std::vector<std::function<Status()>> paths = {[&] { return nchw->Run(in_nchw, out.data(), nt); },
                                                        [&] { return nhwc->Run(in_nhwc, out.data(), nt); }};
          std::vector<std::string> names = {"NCHW", "NHWC"};
          const std::string what = spec.name + " " + t->isa + " " + ToString(dtype) + " ";
          const bool check = ti == 0 && dtype == DType::kF32;  // the reference is f32
          if (check) {
            CheckOrExit(what + "NCHW", paths[0], out.data(), Layout::kNCHW, ref_out.data(), K, C, P);
            CheckOrExit(what + "NHWC", paths[1], out.data(), Layout::kNHWC, ref_out.data(), K, C, P);
          }
          // The conversion rows (bench/conversions.h) whose layouts are all served in this dtype; the NCHW<->NHWC
          // ones first, in the table's columns.
          auto add_conversions = [&](bool with_blocked) {
            for (const Conversion& c : kConversions) {
              if ((internal::IsBlocked(c.data) || internal::IsBlocked(c.kernel)) != with_blocked) continue;
              float* dst = internal::IsBlocked(c.data) ? out_b.data() : out.data();
              paths.push_back(ConversionPath(c, dtype, shape, {w.Map(c.data, dtype)}, kernel_on(c.kernel, dtype), K,
                                             P, &scratch, dst, nt));
              names.push_back(ConversionName(c));
              if (check) CheckOrExit(what + names.back(), paths.back(), dst, c.data, ref_out.data(), K, C, P);
            }
          };
          add_conversions(false);
          // The blocked kernels (f32 maps only).
          for (size_t b = 0; b < blocked.size(); ++b) {
            const SelectResult& kernel = blocked[b];
            const Inputs in_b = w.InputsFor(kBlockedLayouts[b], dtype);
            paths.push_back([&kernel, in_b, &out_b, nt] { return kernel->Run(in_b, out_b.data(), nt); });
            names.push_back(ToString(kBlockedLayouts[b]));
            if (check) {
              CheckOrExit(what + names.back(), paths.back(), out_b.data(), kBlockedLayouts[b], ref_out.data(), K, C,
                          P);
            }
          }
          if (!blocked.empty()) add_conversions(true);
          // The transforms do not depend on the ISA the kernels were selected for: timed once, with the first, f32.
          const bool time_transforms = t == targets[0] && dtype == DType::kF32;
          const std::vector<const void*> nchw_map = {w.nchw.data()};
          for (size_t k = 0; time_transforms && k < 3; ++k) {
            paths.push_back(
                TransformPath(Layout::kNCHW, kBandwidthLayouts[k], DType::kF32, shape, nchw_map, &scratch, nt));
            if (ti == 0) CheckTransformOrExit(spec.name, paths.back(), scratch, kBandwidthLayouts[k], shape, nchw_map);
          }
          // A rotated workload: its NHWC kernel with every angle 0, and the axis-aligned NHWC kernel on the same boxes
          // (HALF_PIXEL), in the same rounds, after the transforms (the rows stay the named paths'). Only for aligned
          // (HALF_PIXEL) RoIs, the mode in which angle 0 is the axis-aligned box; not in F64, whose RoIs the workload
          // keeps in double for its own angles only.
          const bool compare_axis = spec.roi_kind == RoiKind::kRotated && dtype != DType::kF64 &&
                                    spec.coordinate_mode == CoordinateMode::kHalfPixel;
          const size_t compare_at = paths.size();
          const SelectResult axis_nhwc =
              compare_axis ? Select(t->target, w.AxisAlignedParamsFor(Layout::kNHWC, dtype)) : SelectResult(Status());
          if (compare_axis) {
            if (!axis_nhwc.ok()) {
              std::fprintf(stderr, "error: %s axis-aligned NHWC: %s\n", t->isa, axis_nhwc.status().message().c_str());
              return 1;
            }
            const Inputs in0 = w.Angle0InputsFor(Layout::kNHWC, dtype);
            const Inputs in_axis = w.AxisAlignedInputsFor(Layout::kNHWC, dtype);
            paths.push_back([&nhwc, in0, &out, nt] { return nhwc->Run(in0, out.data(), nt); });
            paths.push_back([&axis_nhwc, in_axis, &out, nt] { return axis_nhwc->Run(in_axis, out.data(), nt); });
            if (check) {  // angle 0 is the axis-aligned box up to the rounding of its corners (DESIGN.md section 5)
              RunOrExit([&] { return axis_nhwc->Run(in_axis, out_b.data(), nt); });
              CheckOrExit(what + "NHWC angles 0", paths[compare_at], out.data(), Layout::kNHWC, out_b.data(), K, C, P,
                          Layout::kNHWC, 1e-3);
            }
          }
          const Group g = MeasureGroup(stability, w, spec.name, t->isa, ToString(dtype), nt, repeats,
                                       meters[di].get(), time_transforms ? &copy_meter : nullptr, paths, names,
                                       Bytes(w.distinct_input_bytes, dtype), Bytes(w.output_bytes, dtype),
                                       Bytes(w.loaded_bytes, dtype));
          const LimitRow& lr = g.limit;
          const std::vector<Row>& now = g.rows;
          const std::vector<std::vector<double>>& seconds = g.seconds;
          const std::vector<Peaks>& copies = g.copies;
          limits.push_back(lr);
          std::fprintf(stderr,
                       "    limit %.2f ms, rounds' median %.2f ms (compute %.2f, memory %.2f): best of %d rounds "
                       "%.1f GFMA/s + %.1f GADD/s, move %.2f ms = %.1f GB/s (medians %.1f, %.1f, %.2f ms)\n",
                       lr.limit.seconds * 1e3, lr.limit_median_seconds * 1e3,
                       lr.limit.compute_seconds * 1e3, lr.limit.memory_seconds * 1e3, repeats, lr.best.gfma_per_s,
                       lr.best.gadd_per_s, lr.best.move_seconds * 1e3, lr.best.moved_bytes / lr.best.move_seconds / 1e9,
                       lr.median.gfma_per_s, lr.median.gadd_per_s, lr.median.move_seconds * 1e3);
          for (const Row& r : now) {
            if (r.fraction > 1.0) {
              violations.push_back(spec.name + " " + t->isa + " " + ToString(dtype) + " " + std::to_string(nt) +
                                   " thread(s) " + r.path + ": " + std::to_string(100 * r.fraction) + "%");
            }
          }
          rows.insert(rows.end(), now.begin(), now.end());
          const double s_nchw = now[0].ms_min / 1e3, s_nhwc = now[1].ms_min / 1e3;
          const bool nhwc_wins = s_nhwc < s_nchw;
          char winner[96];
          std::snprintf(winner, sizeof(winner), "%s %.2fx faster%s", nhwc_wins ? "NHWC" : "NCHW",
                        nhwc_wins ? s_nchw / s_nhwc : s_nhwc / s_nchw,
                        now[0].stable() && now[1].stable() ? "" : " (unstable)");
          std::printf("%-9s %-7s %-5s %3d | %-31s | %-31s | %8.2f/%-11.2f | %8.2f/%-11.2f | %s\n", spec.name.c_str(),
                      t->isa, ToString(dtype), nt, Cell(now[0]).c_str(), Cell(now[1]).c_str(), now[2].ms_min, now[2].ms,
                      now[3].ms_min, now[3].ms, winner);
          PrintExtras(now, 4, w.bin_lines);
          PrintUnstable(now);
          if (compare_axis) {
            const auto summarize = [&](size_t i, double* ms_min, double* ms, std::vector<std::string>* reasons) {
              const std::vector<double>& sec = seconds[i];
              *ms_min = *std::min_element(sec.begin(), sec.end()) * 1e3;
              *ms = Median(sec) * 1e3;
              for (const std::string& why :
                   UnstableReasons(Spread(sec), g.limit_spread, g.load, nt, stability.thresholds)) {
                if (std::find(reasons->begin(), reasons->end(), why) == reasons->end()) reasons->push_back(why);
              }
            };
            RotatedComparison rc{spec.name, t->isa, ToString(dtype), nt, now[1].ms_min, now[1].ms, 0, 0, 0, 0,
                                 now[1].reasons};
            const size_t at = names.size() + (time_transforms ? 3 : 0);
            summarize(at, &rc.angle0_ms_min, &rc.angle0_ms, &rc.reasons);
            summarize(at + 1, &rc.axis_ms_min, &rc.axis_ms, &rc.reasons);
            std::printf("%-9s %-7s %-5s %3s | rotated NHWC / axis-aligned NHWC on the same boxes: %.2fx (angles 0: "
                        "%.2fx); axis-aligned %.2f/%.2f ms, angles 0 %.2f/%.2f ms%s\n",
                        "", "", "", "", rc.rotated_ms_min / rc.axis_ms_min, rc.angle0_ms_min / rc.axis_ms_min,
                        rc.axis_ms_min, rc.axis_ms, rc.angle0_ms_min, rc.angle0_ms,
                        rc.stable() ? "" : (" ! unstable: " + rc.reasons[0]).c_str());
            comparisons.push_back(rc);
          }
          for (size_t k = 0; time_transforms && k < 3; ++k) {
            const Layout to = kBandwidthLayouts[k];
            transforms.push_back(SummarizeTransform(spec.name, nt, Layout::kNCHW, to,
                                                    shape.Bytes(Layout::kNCHW, DType::kF32),
                                                    shape.Bytes(to, DType::kF32), seconds[names.size() + k], copies));
            transforms.back().reasons = UnstableReasons(Spread(seconds[names.size() + k]), g.limit_spread, g.load,
                                                        nt, stability.thresholds);
            PrintTransform(transforms.back());
          }
          if (!backward_kernels.empty()) {
            std::fprintf(stderr, "  %s %s %s %d thread(s) backward...\n", spec.name.c_str(), t->isa, ToString(dtype),
                         nt);
            std::vector<std::function<Status()>> backward_paths;
            std::vector<std::string> backward_names;
            for (size_t b = 0; b < backward_kernels.size(); ++b) {
              const BackwardKernel& kernel = backward_kernels[b];
              const Layout layout = backward_layouts[b];
              const Inputs in = w.InputsFor(layout, dtype);
              const void* grad = dy->Get(layout, dtype);
              float* d = dx.data();
              backward_paths.push_back([&kernel, in, grad, d, nt] { return kernel.Run(in, grad, d, nt); });
              backward_names.push_back(ToString(layout));
              if (check) {
                CheckBackwardOrExit(what + "backward " + backward_names.back(), backward_paths.back(), layout, {d},
                                    {ref_dx.data()}, C, {spec.height}, {spec.width});
              }
            }
            const BackwardAccounting& b = w.backward;
            const Group bg = MeasureGroup(stability, b, spec.name, t->isa, ToString(dtype), nt, repeats,
                                          backward_meters[di].get(), nullptr, backward_paths, backward_names,
                                          Bytes(b.dy_bytes + b.map_bytes, dtype), Bytes(b.dx_bytes, dtype),
                                          b.loaded_bytes_f32 ? b.loaded_bytes : Bytes(b.loaded_bytes, dtype));
            ReportBackward(bg, b, dtype, repeats, &backward_rows, &backward_limits, &violations);
          }
          std::fflush(stdout);
        }
      }
    }
  }
  const bool run_fpn = custom.empty() && (workload_names.empty() ||
                                          std::find(workload_names.begin(), workload_names.end(), "fpn") !=
                                              workload_names.end());
  if (run_fpn) {
    RunPyramid(stability, targets, threads, repeats, dump_dir, backward_of("fpn"), &rows, &limits, &transforms,
               &backward_rows, &backward_limits, &violations);
  }
  std::fputs(Verdict(rows).c_str(), stdout);
  if (!backward_rows.empty()) std::fputs(Verdict(backward_rows, "backward verdict, dX from dY").c_str(), stdout);
  if (!json_path.empty()) {
    // Per thread count, the best arithmetic rates of every round of the run.
    std::vector<Peaks> by_threads(threads.size());
    for (const LimitRow& l : limits) {
      const auto at = std::find(threads.begin(), threads.end(), l.threads);
      Peaks& p = by_threads[static_cast<size_t>(at - threads.begin())];
      p.gfma_per_s = std::max(p.gfma_per_s, l.best.gfma_per_s);
      p.gadd_per_s = std::max(p.gadd_per_s, l.best.gadd_per_s);
    }
    std::ofstream j(json_path);
    j << "{\n  \"schema_version\": 4,\n  \"machine\": {\"cpu\": \"" << internal::BuildArchitecture() << " (" << internal::CpuTargetsDescription()
      << ")\", \"threads\": " << omp_get_num_procs() << ", \"peak_gfma_per_s\": " << by_threads.back().gfma_per_s
      << ", \"peak_gadd_per_s\": " << by_threads.back().gadd_per_s << ", \"rounds\": " << repeats
      << ", \"stability\": {\"max_spread\": " << stability.thresholds.max_spread
      << ", \"others_slack_cores\": " << stability.thresholds.others_slack
      << ", \"max_steal\": " << stability.thresholds.max_steal
      << ", \"load_slack\": " << stability.thresholds.load_slack << ", \"settle\": " << stability.settle << "}"
      << ", \"isa_order\": [";
    // Every built-in ISA, best first within its family, as target "host" ranks them (report_tables.py reads it).
    for (size_t i = 0; i < internal::IsaTargets().size(); ++i) {
      j << (i ? ", " : "") << '"' << internal::IsaTargets()[i].isa << '"';
    }
    j << "], \"peaks_by_threads\": [";
    for (size_t i = 0; i < threads.size(); ++i) {
      j << (i ? ", " : "") << "{\"threads\": " << threads[i] << ", \"peak_gfma_per_s\": " << by_threads[i].gfma_per_s
        << ", \"peak_gadd_per_s\": " << by_threads[i].gadd_per_s << "}";
    }
    // The limits and the rows, forward and backward alike (a backward limit also splits its reads).
    const auto write_limits = [&j](const std::vector<LimitRow>& list, bool backward_limit) {
      for (size_t i = 0; i < list.size(); ++i) {
        const LimitRow& l = list[i];
        j << "    {\"workload\": \"" << l.workload << "\", \"isa\": \"" << l.isa << "\", \"dtype\": \"" << l.dtype
          << "\", \"threads\": " << l.threads << ", \"ops_bound\": " << l.ops_bound
          << ", \"read_bytes\": " << l.read_bytes << ", \"write_bytes\": " << l.write_bytes;
        if (backward_limit) j << ", \"dy_bytes\": " << l.dy_bytes << ", \"map_bytes\": " << l.map_bytes;
        j << ", \"limit_ms\": " << l.limit.seconds * 1e3 << ", \"limit_ms_rounds_median\": " << l.limit_median_seconds * 1e3
          << ", \"compute_ms\": " << l.limit.compute_seconds * 1e3 << ", \"memory_ms\": " << l.limit.memory_seconds * 1e3
          << ", \"gfma_per_s\": {\"best\": " << l.best.gfma_per_s << ", \"median\": " << l.median.gfma_per_s
          << "}, \"gadd_per_s\": {\"best\": " << l.best.gadd_per_s << ", \"median\": " << l.median.gadd_per_s
          << "}, \"move_ms\": {\"best\": " << l.best.move_seconds * 1e3
          << ", \"median\": " << l.median.move_seconds * 1e3 << "}}" << (i + 1 < list.size() ? "," : "") << "\n";
      }
    };
    const auto write_rows = [&j](const std::vector<Row>& list) {
      for (size_t i = 0; i < list.size(); ++i) {
        const Row& r = list[i];
        j << "    {\"workload\": \"" << r.workload << "\", \"isa\": \"" << r.isa << "\", \"dtype\": \"" << r.dtype
          << "\", \"threads\": " << r.threads << ", \"path\": \"" << r.path << "\", \"ms\": " << r.ms
          << ", \"ms_min\": " << r.ms_min << ", \"fraction_of_limit\": " << r.fraction
          << ", \"fraction_of_limit_median\": " << r.fraction_median << ", \"gfma_per_s\": " << r.gfma
          << ", \"load_gb_per_s\": " << r.load_gb << ", \"ms_max\": " << r.ms_max << ", \"spread\": " << r.spread
          << ", \"stable\": " << (r.stable() ? "true" : "false") << ", \"unstable_reasons\": [";
        for (size_t k = 0; k < r.reasons.size(); ++k) j << (k ? ", " : "") << '"' << r.reasons[k] << '"';
        j << "], \"attempts\": " << r.attempts << ", \"machine\": {\"sampled\": "
          << (r.machine.valid ? "true" : "false") << ", \"cores\": " << r.machine.cores
          << ", \"load1\": " << r.machine.load1 << ", \"others_cores\": " << r.machine.others_cores
          << ", \"steal_fraction\": " << r.machine.steal_fraction << "}}" << (i + 1 < list.size() ? "," : "") << "\n";
      }
    };
    j << "]},\n  \"limits\": [\n";
    write_limits(limits, false);
    j << "  ],\n  \"results\": [\n";
    write_rows(rows);
    j << "  ],\n  \"backward_limits\": [\n";
    write_limits(backward_limits, true);
    j << "  ],\n  \"backward_results\": [\n";
    write_rows(backward_rows);
    j << "  ],\n  \"transforms\": [\n";
    for (size_t i = 0; i < transforms.size(); ++i) {
      const TransformRow& t = transforms[i];
      j << "    {\"workload\": \"" << t.workload << "\", \"dtype\": \"F32\", \"threads\": " << t.threads
        << ", \"from\": \"" << ToString(t.from) << "\", \"to\": \"" << ToString(t.to)
        << "\", \"read_bytes\": " << t.read_bytes << ", \"write_bytes\": " << t.write_bytes << ", \"ms\": " << t.ms
        << ", \"ms_min\": " << t.ms_min << ", \"gb_per_s\": " << t.gb_per_s
        << ", \"gb_per_s_median\": " << t.gb_per_s_median << ", \"copy_gb_per_s\": {\"best\": " << t.copy_gb_per_s
        << ", \"median\": " << t.copy_gb_per_s_median << "}, \"fraction_of_copy\": " << t.fraction
        << ", \"fraction_of_copy_median\": " << t.fraction_median << ", \"stable\": " << (t.stable() ? "true" : "false")
        << ", \"unstable_reasons\": [";
      for (size_t k = 0; k < t.reasons.size(); ++k) j << (k ? ", " : "") << '"' << t.reasons[k] << '"';
      j << "]}" << (i + 1 < transforms.size() ? "," : "")
        << "\n";
    }
    j << "  ],\n  \"rotated_vs_axis_aligned\": [\n";
    for (size_t i = 0; i < comparisons.size(); ++i) {
      const RotatedComparison& c = comparisons[i];
      j << "    {\"workload\": \"" << c.workload << "\", \"isa\": \"" << c.isa << "\", \"dtype\": \"" << c.dtype
        << "\", \"threads\": " << c.threads << ", \"rotated_ms_min\": " << c.rotated_ms_min
        << ", \"rotated_ms\": " << c.rotated_ms << ", \"angle0_ms_min\": " << c.angle0_ms_min
        << ", \"angle0_ms\": " << c.angle0_ms << ", \"axis_aligned_ms_min\": " << c.axis_ms_min
        << ", \"axis_aligned_ms\": " << c.axis_ms << ", \"ratio\": " << c.rotated_ms_min / c.axis_ms_min
        << ", \"ratio_angle0\": " << c.angle0_ms_min / c.axis_ms_min
        << ", \"stable\": " << (c.stable() ? "true" : "false") << ", \"unstable_reasons\": [";
      for (size_t k = 0; k < c.reasons.size(); ++k) j << (k ? ", " : "") << '"' << c.reasons[k] << '"';
      j << "]}" << (i + 1 < comparisons.size() ? "," : "") << "\n";
    }
    j << "  ]\n}\n";
    std::fprintf(stderr, "wrote %s\n", json_path.c_str());
  }
  if (!violations.empty()) {
    std::fprintf(stderr, "error: measured faster than the limit, which is meant to be a lower bound "
                         "(docs/performance-model.md):\n");
    for (const std::string& v : violations) std::fprintf(stderr, "  %s\n", v.c_str());
    return 3;
  }
  return 0;
}

}  // namespace bench
}  // namespace roialign

int main(int argc, char** argv) { return roialign::bench::Main(argc, argv); }
