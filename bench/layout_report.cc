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
// This file builds each group's paths, in one flow for both kinds of workload (single-level and the pyramid, behind
// report_workload.h); the flags (report_flags.h), the timing (report_measure.h), the table (report_table.h) and the
// JSON (report_json.h) are each in their own file.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/backward_dy.h"
#include "bench/conversions.h"
#include "bench/limit.h"
#include "bench/report_checks.h"
#include "bench/report_flags.h"
#include "bench/report_json.h"
#include "bench/report_measure.h"
#include "bench/report_rows.h"
#include "bench/report_table.h"
#include "bench/stability.h"
#include "bench/report_workload.h"
#include "bench/verdict.h"
#include "bench/workloads.h"
#include "core/enums.h"
#include "strategy/registry.h"
#include "strategy/targets.h"

namespace roialign {
namespace bench {
namespace {

// Each row of `rows` faster than its limit, which is meant to be a lower bound; `kind` goes before the path.
void AddViolations(const std::vector<Row>& rows, const char* kind, std::vector<std::string>* violations) {
  for (const Row& r : rows) {
    if (r.fraction > 1.0) {
      violations->push_back(r.workload + " " + r.isa + " " + r.dtype + " " + std::to_string(r.threads) +
                            " thread(s) " + kind + r.path + ": " + std::to_string(100 * r.fraction) + "%");
    }
  }
}

// A forward group of either kind: its limit and rows into `report`, then its lines, `last` at the end of the first.
void ReportForward(const Group& g, const std::string& last, const double* bin_lines, Report* report) {
  report->limits.push_back(g.limit);
  AddViolations(g.rows, "", &report->violations);
  report->rows.insert(report->rows.end(), g.rows.begin(), g.rows.end());
  PrintGroup(g.rows, last, bin_lines);
}

// The three transforms (kBandwidthLayouts) timed in group `g` from its path `first` on: their rows into `report`,
// judged with the group's machine, and their lines.
void ReportTransforms(const Group& g, size_t first, const std::string& workload, int nt, const MapShape& shape,
                      const Stability& stability, Report* report) {
  for (size_t k = 0; k < 3; ++k) {
    const Layout to = kBandwidthLayouts[k];
    const std::vector<double>& seconds = g.seconds[first + k];
    report->transforms.push_back(SummarizeTransform(workload, nt, Layout::kNCHW, to,
                                                    shape.Bytes(Layout::kNCHW, DType::kF32),
                                                    shape.Bytes(to, DType::kF32), seconds, g.copies));
    report->transforms.back().reasons =
        UnstableReasons(Spread(seconds), g.limit_spread, g.load, nt, stability.thresholds);
    PrintTransform(report->transforms.back());
  }
}

// The backward group of one (workload, ISA, dtype, threads) of either kind, in a round robin of its own with its own
// limit (`b`'s work in `dtype`): its limit on stderr, its rows into `report` and its lines under the forward's.
void MeasureBackward(const Stability& stability, const BackwardAccounting& b, const std::string& workload,
                     const char* isa, DType dtype, int nt, int repeats, PeakMeter* meter,
                     const std::vector<std::function<Status()>>& paths, const std::vector<std::string>& names,
                     Report* report) {
  const Group g = MeasureGroup(stability, b, workload, isa, ToString(dtype), nt, repeats, meter, nullptr, paths,
                               names, Bytes(b.dy_bytes + b.map_bytes, dtype), Bytes(b.dx_bytes, dtype),
                               b.loaded_bytes_f32 ? b.loaded_bytes : Bytes(b.loaded_bytes, dtype));
  PrintLimit(g.limit, repeats, true);
  report->backward_limits.push_back(g.limit);
  report->backward_limits.back().dy_bytes = Bytes(b.dy_bytes, dtype);
  report->backward_limits.back().map_bytes = Bytes(b.map_bytes, dtype);
  AddViolations(g.rows, "backward ", &report->violations);
  report->backward_rows.insert(report->backward_rows.end(), g.rows.begin(), g.rows.end());
  PrintBackward(g.rows);
}

// Whether every kernel of `kernels` was selected; if not, says which was refused on `isa`, and why.
bool AllSelected(const std::vector<ForwardKernel>& kernels, const char* isa) {
  for (const ForwardKernel& k : kernels) {
    if (!k.ok()) {
      std::fprintf(stderr, "error: %s %s: %s\n", isa, k.name.c_str(), k.status.message().c_str());
      return false;
    }
  }
  return true;
}

// The rows of one workload of either kind, every ISA, dtype and thread count: the NCHW and NHWC kernels, the third
// and fourth columns (the NHWC<->NCHW conversions, or the kind's own kernels: the pyramid's RoIs level by level), the
// blocked kernels, the other conversions, the transforms (the first ISA, f32), the kind's comparison (a rotated
// workload's with the axis-aligned kernel) and the backward. A single-level workload is the one-level case: its maps,
// dX and the conversions' scratch are one level of the pyramid's. Returns 0, or 1 after a message if a kernel the
// report needs is refused.
int RunWorkload(const ReportWorkload& w, const ReportFlags& flags,
                const std::vector<const internal::IsaTarget*>& targets, Report* report) {
  const Stability& stability = flags.stability;
  const std::vector<DType> dtypes = w.Dtypes(flags.dtypes);
  const int repeats = flags.repeats;
  const Accounting& a = w.accounting();
  const MapShape& shape = w.shape();
  const int64_t C = shape.channels, K = w.num_rois(), P = w.pooled();
  DType widest = DType::kF32;  // the outputs' buffers hold any dtype the workload runs
  for (DType dtype : dtypes) widest = internal::BytesOf(dtype) > internal::BytesOf(widest) ? dtype : widest;
  ConversionScratch scratch(shape, K, P);
  // The copy the transforms are held to: one pass over buffers of the NCHW maps' bytes, read and written.
  PeakMeter copy_meter(shape.Bytes(Layout::kNCHW, DType::kF32), shape.Bytes(Layout::kNCHW, DType::kF32));
  // The rows' output, the blocked rows' (padded channels), and the reference every f32 row is checked against before
  // timing.
  AlignedBuffer out(BufferFloats(w.OutputSize(), widest));
  const int64_t padded = internal::StoredChannels(Layout::kNCHW16c, C);
  AlignedBuffer out_b(static_cast<size_t>(K * padded * P * P));
  AlignedBuffer ref_out(w.OutputSize());
  {
    const ForwardKernel ref = w.Forward("generic", Layout::kNCHW, DType::kF32);
    RunOrExit([&] { return ref.ok() ? ref.run(ref_out.data(), 0) : ref.status; });
  }
  // The backward rows' dY, their dX (one per level; every path overwrites all of it, padded lanes included), the
  // reference dX every f32 backward row is checked against, and per dtype the meter of the bytes a backward must move.
  const bool run_backward = flags.BackwardOf(w.name());
  std::unique_ptr<BackwardDy> dy;
  std::vector<AlignedBuffer> dx, ref_dx;
  std::vector<void*> dx_levels, ref_dx_levels;
  std::vector<const float*> dx_read, ref_dx_read;  // the same, as CheckBackwardOrExit reads them
  std::vector<std::unique_ptr<PeakMeter>> backward_meters;
  if (run_backward) {
    dy = std::make_unique<BackwardDy>(w.DyValues(), K, C, P);
    for (size_t l = 0; l < shape.heights.size(); ++l) {
      dx.emplace_back(BufferFloats(static_cast<size_t>(padded * shape.heights[l] * shape.widths[l]), widest));
      ref_dx.emplace_back(dx.back().size());
    }
    for (size_t l = 0; l < dx.size(); ++l) {
      dx_levels.push_back(dx[l].data());
      ref_dx_levels.push_back(ref_dx[l].data());
      dx_read.push_back(dx[l].data());
      ref_dx_read.push_back(ref_dx[l].data());
    }
    const BackwardCall ref = w.Backward("generic", Layout::kNCHW, DType::kF32);
    RunOrExit([&] {
      return ref.ok() ? ref.run(dy->Get(Layout::kNCHW, DType::kF32), ref_dx_levels.data(), 0) : ref.status;
    });
    for (DType dtype : dtypes) {
      backward_meters.push_back(std::make_unique<PeakMeter>(Bytes(a.backward.dy_bytes + a.backward.map_bytes, dtype),
                                                            Bytes(a.backward.dx_bytes, dtype)));
    }
  }
  if (!flags.dump_dir.empty()) w.Dump(flags.dump_dir, targets[0]->target, flags.threads);
  // Buffers of the bytes that must move, per dtype (bench/limit.h).
  std::vector<std::unique_ptr<PeakMeter>> meters;
  for (DType dtype : dtypes) {
    meters.push_back(std::make_unique<PeakMeter>(Bytes(a.distinct_input_bytes, dtype), Bytes(a.output_bytes, dtype)));
  }
  const std::vector<const void*> nchw_maps = w.Maps(Layout::kNCHW, DType::kF32);
  for (const internal::IsaTarget* t : targets) {
    for (size_t di = 0; di < dtypes.size(); ++di) {
      const DType dtype = dtypes[di];
      const ForwardKernel nchw = w.Forward(t->target, Layout::kNCHW, dtype);
      const ForwardKernel nhwc = w.Forward(t->target, Layout::kNHWC, dtype);
      if (!nchw.ok() || !nhwc.ok()) {
        std::fprintf(stderr, "  %s %s %s: skipped (%s)\n", w.name().c_str(), t->isa, ToString(dtype),
                     (nchw.ok() ? nhwc : nchw).status.message().c_str());
        continue;
      }
      // The other kernels the rows need: the blocked ones (f32 maps only), the kind's columns and its comparison.
      std::vector<ForwardKernel> blocked;
      if (dtype == DType::kF32) {
        for (Layout layout : kBlockedLayouts) blocked.push_back(w.Forward(t->target, layout, dtype));
      }
      const std::vector<ForwardKernel> columns = w.ColumnKernels(t->target);
      const std::vector<ForwardKernel> comparison = w.Comparison(t->target, dtype);
      if (!AllSelected(blocked, t->isa) || !AllSelected(columns, t->isa) || !AllSelected(comparison, t->isa)) {
        return 1;
      }
      std::vector<BackwardCall> backward_kernels;
      std::vector<Layout> backward_layouts;
      for (Layout layout : run_backward ? BackwardLayouts(dtype) : std::vector<Layout>()) {
        BackwardCall k = w.Backward(t->target, layout, dtype);
        if (!k.ok()) {
          std::fprintf(stderr, "  %s %s %s %s backward: skipped (%s)\n", w.name().c_str(), t->isa, ToString(dtype),
                       ToString(layout), k.status.message().c_str());
          continue;
        }
        backward_kernels.push_back(k);
        backward_layouts.push_back(layout);
      }
      // The kernel of `layout`.
      auto kernel_of = [&](Layout layout) -> const ForwardKernel& {
        return layout == Layout::kNCHW ? nchw : layout == Layout::kNHWC ? nhwc : blocked[BlockedIndex(layout)];
      };
      for (size_t ti = 0; ti < flags.threads.size(); ++ti) {
        const int nt = flags.threads[ti];
        std::fprintf(stderr, "  %s %s %s %d thread(s)...\n", w.name().c_str(), t->isa, ToString(dtype), nt);
        std::vector<std::function<Status()>> paths;
        std::vector<std::string> names;
        const std::string what = w.name() + " " + t->isa + " " + ToString(dtype) + " ";
        const bool check = ti == 0 && dtype == DType::kF32;  // the reference is f32
        // Kernel `k` on the workload's maps into `dst`, checked against the reference unless its output is in an
        // order of its own (`checked` false).
        auto add_kernel = [&](const ForwardKernel& k, float* dst, Layout layout, bool checked) {
          paths.push_back([&k, dst, nt] { return k.run(dst, nt); });
          names.push_back(k.name);
          if (check && checked) CheckOrExit(what + k.name, paths.back(), dst, layout, ref_out.data(), K, C, P);
        };
        // The conversion rows (bench/conversions.h) not among the paths yet whose layouts are all served in this
        // dtype, in kConversions' order; with `with_blocked` false, the NHWC<->NCHW ones only.
        auto add_conversions = [&](bool with_blocked) {
          for (const Conversion& c : kConversions) {
            const bool of_blocked = internal::IsBlocked(c.data) || internal::IsBlocked(c.kernel);
            const std::string name = ConversionName(c);
            if (of_blocked && (!with_blocked || blocked.empty())) continue;
            if (std::find(names.begin(), names.end(), name) != names.end()) continue;
            float* dst = internal::IsBlocked(c.data) ? out_b.data() : out.data();
            paths.push_back(ConversionPath(c, dtype, shape, w.Maps(c.data, dtype), kernel_of(c.kernel).run_on, K, P,
                                           &scratch, dst, nt));
            names.push_back(name);
            if (check) CheckOrExit(what + name, paths.back(), dst, c.data, ref_out.data(), K, C, P);
          }
        };
        add_kernel(nchw, out.data(), Layout::kNCHW, true);
        add_kernel(nhwc, out.data(), Layout::kNHWC, true);
        if (columns.empty()) add_conversions(false);
        for (const ForwardKernel& k : columns) add_kernel(k, out.data(), Layout::kNCHW, false);
        for (size_t b = 0; b < blocked.size(); ++b) add_kernel(blocked[b], out_b.data(), kBlockedLayouts[b], true);
        add_conversions(true);
        // The transforms do not depend on the ISA the kernels were selected for: timed once, with the first, f32.
        const bool time_transforms = t == targets[0] && dtype == DType::kF32;
        for (size_t k = 0; time_transforms && k < 3; ++k) {
          paths.push_back(
              TransformPath(Layout::kNCHW, kBandwidthLayouts[k], DType::kF32, shape, nchw_maps, &scratch, nt));
          if (ti == 0) CheckTransformOrExit(w.name(), paths.back(), scratch, kBandwidthLayouts[k], shape, nchw_maps);
        }
        // The comparison's kernels, in the same rounds, after the transforms (the rows stay the named paths'). Angle
        // 0 is the axis-aligned box up to the rounding of its corners (DESIGN.md section 5).
        const size_t compare_at = paths.size();
        for (const ForwardKernel& k : comparison) paths.push_back([&k, &out, nt] { return k.run(out.data(), nt); });
        if (check && !comparison.empty()) {
          RunOrExit([&] { return comparison[1].run(out_b.data(), nt); });
          CheckOrExit(what + comparison[0].name, paths[compare_at], out.data(), Layout::kNHWC, out_b.data(), K, C, P,
                      Layout::kNHWC, 1e-3);
        }
        const Group g = MeasureGroup(stability, a, w.name(), t->isa, ToString(dtype), nt, repeats, meters[di].get(),
                                     time_transforms ? &copy_meter : nullptr, paths, names,
                                     Bytes(a.distinct_input_bytes, dtype), Bytes(a.output_bytes, dtype),
                                     Bytes(a.loaded_bytes, dtype));
        PrintLimit(g.limit, repeats, false);
        ReportForward(g, w.Last(g.rows), a.bin_lines, report);
        if (!comparison.empty()) {
          report->comparisons.push_back(SummarizeRotated(g, compare_at, stability));
          PrintRotated(report->comparisons.back());
        }
        if (time_transforms) ReportTransforms(g, names.size(), w.name(), nt, shape, stability, report);
        if (!backward_kernels.empty()) {
          std::fprintf(stderr, "  %s %s %s %d thread(s) backward...\n", w.name().c_str(), t->isa, ToString(dtype),
                       nt);
          std::vector<std::function<Status()>> backward_paths;
          std::vector<std::string> backward_names;
          for (size_t b = 0; b < backward_kernels.size(); ++b) {
            const BackwardCall& kernel = backward_kernels[b];
            const Layout layout = backward_layouts[b];
            const void* grad = dy->Get(layout, dtype);
            void* const* d = dx_levels.data();
            backward_paths.push_back([&kernel, grad, d, nt] { return kernel.run(grad, d, nt); });
            backward_names.push_back(ToString(layout));
            if (check) {
              CheckBackwardOrExit(what + "backward " + backward_names.back(), backward_paths.back(), layout, dx_read,
                                  ref_dx_read, C, shape.heights, shape.widths);
            }
          }
          MeasureBackward(stability, a.backward, w.name(), t->isa, dtype, nt, repeats, backward_meters[di].get(),
                          backward_paths, backward_names, report);
        }
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

}  // namespace

int Main(int argc, char** argv) {
  ReportFlags flags;
  const int parsed = ParseFlags(argc, argv, &flags);
  if (parsed >= 0) return parsed;
  std::vector<WorkloadSpec> specs;
  if (!SelectWorkloads(flags, &specs)) return 2;
  const std::vector<const internal::IsaTarget*> targets = SelectTargets(flags);
  if (targets.empty()) return 2;

  Report report;
  std::string header;  // the third column of the last header printed: each kind of workload has its own
  auto run = [&](const ReportWorkload& w) {
    if (header != w.columns()[0]) PrintHeader(w.columns()[0], w.columns()[1], w.columns()[2]);
    header = w.columns()[0];
    return RunWorkload(w, flags, targets, &report);
  };
  for (const WorkloadSpec& spec : specs) {
    if (run(*MakeReportWorkload(spec)) != 0) return 1;
  }
  if (flags.RunsPyramid() && run(*MakeReportPyramid()) != 0) return 1;
  std::fputs(Verdict(report.rows).c_str(), stdout);
  if (!report.backward_rows.empty()) {
    std::fputs(Verdict(report.backward_rows, "backward verdict, dX from dY").c_str(), stdout);
  }
  if (!flags.json_path.empty()) {
    WriteReportJson(flags.json_path, report, flags);
    std::fprintf(stderr, "wrote %s\n", flags.json_path.c_str());
  }
  if (!report.violations.empty()) {
    std::fprintf(stderr, "error: measured faster than the limit, which is meant to be a lower bound "
                         "(docs/performance-model.md):\n");
    for (const std::string& v : report.violations) std::fprintf(stderr, "  %s\n", v.c_str());
    return 3;
  }
  return 0;
}

}  // namespace bench
}  // namespace roialign

int main(int argc, char** argv) { return roialign::bench::Main(argc, argv); }
