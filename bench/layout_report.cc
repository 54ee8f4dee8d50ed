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
// This file builds each group's paths; the flags (report_flags.h), the timing (report_measure.h), the table
// (report_table.h) and the JSON (report_json.h) are each in their own file, shared by both kinds of workload.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/backward_dy.h"
#include "bench/backward_kernel.h"
#include "bench/conversions.h"
#include "bench/limit.h"
#include "bench/report_checks.h"
#include "bench/report_flags.h"
#include "bench/report_json.h"
#include "bench/report_measure.h"
#include "bench/report_rows.h"
#include "bench/report_table.h"
#include "bench/stability.h"
#include "bench/verdict.h"
#include "bench/workload_dump.h"
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

// The rows of one single-level workload, every ISA, dtype and thread count: the kernels, the conversions, the
// transforms (the first ISA, f32), a rotated workload's comparison with the axis-aligned kernel, and the backward.
// Returns 0, or 1 after a message if a kernel the report needs is refused.
int RunWorkload(const WorkloadSpec& spec, const ReportFlags& flags,
                const std::vector<const internal::IsaTarget*>& targets, Report* report) {
  const Stability& stability = flags.stability;
  const std::vector<DType>& dtypes = flags.dtypes;
  const int repeats = flags.repeats;
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
  const bool run_backward = flags.BackwardOf(spec.name);
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
  if (!flags.dump_dir.empty()) DumpWorkload(flags.dump_dir, spec, w, targets[0]->target, flags.threads);
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
      for (size_t ti = 0; ti < flags.threads.size(); ++ti) {
        const int nt = flags.threads[ti];
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
            CheckOrExit(what + names.back(), paths.back(), out_b.data(), kBlockedLayouts[b], ref_out.data(), K, C, P);
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
        const Group g = MeasureGroup(stability, w, spec.name, t->isa, ToString(dtype), nt, repeats, meters[di].get(),
                                     time_transforms ? &copy_meter : nullptr, paths, names,
                                     Bytes(w.distinct_input_bytes, dtype), Bytes(w.output_bytes, dtype),
                                     Bytes(w.loaded_bytes, dtype));
        PrintLimit(g.limit, repeats, false);
        const std::vector<Row>& now = g.rows;
        const double s_nchw = now[0].ms_min / 1e3, s_nhwc = now[1].ms_min / 1e3;
        const bool nhwc_wins = s_nhwc < s_nchw;
        char winner[96];
        std::snprintf(winner, sizeof(winner), "%s %.2fx faster%s", nhwc_wins ? "NHWC" : "NCHW",
                      nhwc_wins ? s_nchw / s_nhwc : s_nhwc / s_nchw,
                      now[0].stable() && now[1].stable() ? "" : " (unstable)");
        ReportForward(g, winner, w.bin_lines, report);
        if (compare_axis) {
          report->comparisons.push_back(SummarizeRotated(g, names.size() + (time_transforms ? 3 : 0), stability));
          PrintRotated(report->comparisons.back());
        }
        if (time_transforms) ReportTransforms(g, names.size(), spec.name, nt, shape, stability, report);
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
          MeasureBackward(stability, w.backward, spec.name, t->isa, dtype, nt, repeats, backward_meters[di].get(),
                          backward_paths, backward_names, report);
        }
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

// The FPN rows: one multi-level call per layout, the same RoIs level by level, the conversion rows and the
// transforms of the four levels (f32), timed round robin with the peaks like the other workloads.
void RunPyramid(const ReportFlags& flags, const std::vector<const internal::IsaTarget*>& targets, Report* report) {
  const Stability& stability = flags.stability;
  const std::vector<int>& threads = flags.threads;
  const int repeats = flags.repeats;
  const bool run_backward = flags.BackwardOf("fpn");
  std::fprintf(stderr, "building workload fpn...\n");
  const PyramidWorkload w = MakePyramidWorkload();
  AlignedBuffer out(w.OutputSize());
  if (!flags.dump_dir.empty()) DumpPyramid(flags.dump_dir, w, targets[0]->target, flags.threads);
  PrintHeader("NCHW by level ms", "NHWC by level ms", "one call vs by level (min)");
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
      const std::vector<Row>& now = g.rows;
      char last[64];
      std::snprintf(last, sizeof(last), "NCHW %.2fx, NHWC %.2fx", now[2].ms_min / now[0].ms_min,
                    now[3].ms_min / now[1].ms_min);
      ReportForward(g, last, w.bin_lines, report);
      if (time_transforms) ReportTransforms(g, names.size(), "fpn", nt, shape, stability, report);
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
        MeasureBackward(stability, w.backward, "fpn", t->isa, DType::kF32, nt, repeats, backward_meter.get(),
                        backward_paths, backward_names, report);
      }
      std::fflush(stdout);
    }
  }
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
  if (!specs.empty()) PrintHeader("NHWC->NCHW->NHWC ms", "NCHW->NHWC->NCHW ms", "winner");
  for (const WorkloadSpec& spec : specs) {
    if (RunWorkload(spec, flags, targets, &report) != 0) return 1;
  }
  if (flags.RunsPyramid()) RunPyramid(flags, targets, &report);
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
