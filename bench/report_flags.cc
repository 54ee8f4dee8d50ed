// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "bench/report_flags.h"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "bench/flags.h"
#include "strategy/registry.h"

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

bool ParseCustom(const std::string& spec, WorkloadSpec* w) {
  *w = StandardWorkloads()[0];
  w->name = "custom";
  bool coord_given = false;
  for (const std::string& kv : SplitList(spec, ':')) {
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

}  // namespace

bool ReportFlags::BackwardOf(const std::string& workload) const {
  return std::find(backward.begin(), backward.end(), "all") != backward.end() ||
         std::find(backward.begin(), backward.end(), workload) != backward.end();
}

bool ReportFlags::RunsPyramid() const {
  return custom.empty() &&
         (workload_names.empty() ||
          std::find(workload_names.begin(), workload_names.end(), "fpn") != workload_names.end());
}

int ParseFlags(int argc, char** argv, ReportFlags* flags) {
  ReportFlags& f = *flags;
  f.threads = {1, omp_get_num_procs()};
  f.stability.cores = omp_get_num_procs();
  const int parsed = ReadFlags(argc, argv, kHelp, [&f](const char* a) {
    if (const char* v = FlagValue(a, "--workloads")) {
      f.workload_names = SplitList(v, ',');
    } else if (const char* v2 = FlagValue(a, "--isas")) {
      f.isas = SplitList(v2, ',');
    } else if (const char* v3 = FlagValue(a, "--threads")) {
      f.threads.clear();
      for (const std::string& t : SplitList(v3, ',')) f.threads.push_back(std::max(1, std::atoi(t.c_str())));
    } else if (const char* v4 = FlagValue(a, "--repeats")) {
      f.repeats = std::max(1, std::atoi(v4));
    } else if (const char* v5 = FlagValue(a, "--json")) {
      f.json_path = v5;
    } else if (const char* v6 = FlagValue(a, "--dump-dir")) {
      f.dump_dir = v6;
    } else if (const char* v7 = FlagValue(a, "--custom")) {
      f.custom = v7;
    } else if (const char* v9 = FlagValue(a, "--best-isas")) {
      f.best_isas = static_cast<size_t>(std::max(1, std::atoi(v9)));
    } else if (const char* v12 = FlagValue(a, "--backward")) {
      f.backward = SplitList(v12, ',');
    } else if (const char* v10 = FlagValue(a, "--settle")) {
      f.stability.settle = std::max(0, std::atoi(v10));
    } else if (const char* v11 = FlagValue(a, "--max-spread")) {
      f.stability.thresholds.max_spread = std::atof(v11);
      if (!(f.stability.thresholds.max_spread > 0)) {
        std::fprintf(stderr, "--max-spread must be above 0 (see --help)\n");
        return FlagResult::kRefused;
      }
    } else if (const char* v8 = FlagValue(a, "--dtypes")) {
      f.dtypes.clear();
      for (std::string d : SplitList(v8, ',')) {
        DType dtype;
        if (!ParseDType(&d, &dtype)) {
          std::fprintf(stderr, "unknown dtype '%s' (see --help)\n", d.c_str());
          return FlagResult::kRefused;
        }
        f.dtypes.push_back(dtype);
      }
    } else {
      return FlagResult::kUnknown;
    }
    return FlagResult::kTaken;
  });
  if (parsed >= 0) return parsed;
  std::sort(f.threads.begin(), f.threads.end());
  f.threads.erase(std::unique(f.threads.begin(), f.threads.end()), f.threads.end());
  return -1;
}

bool SelectWorkloads(const ReportFlags& flags, std::vector<WorkloadSpec>* specs) {
  if (!flags.custom.empty()) {
    WorkloadSpec w;
    if (!ParseCustom(flags.custom, &w)) {
      std::fprintf(stderr, "bad --custom spec '%s' (see --help)\n", flags.custom.c_str());
      return false;
    }
    specs->push_back(w);
  } else if (flags.workload_names.empty()) {
    *specs = StandardWorkloads();
  } else {
    for (const std::string& n : flags.workload_names) {
      if (n == "fpn") continue;  // the pyramid workload, run on its own
      const WorkloadSpec* w = FindWorkload(n);
      if (w == nullptr) {
        std::fprintf(stderr, "unknown workload '%s' (see --help)\n", n.c_str());
        return false;
      }
      specs->push_back(*w);
    }
  }
  return true;
}

std::vector<const internal::IsaTarget*> SelectTargets(const ReportFlags& flags) {
  std::vector<const internal::IsaTarget*> targets;
  for (const internal::IsaTarget& t : internal::IsaTargets()) {
    if (!internal::CpuSupports(t.hwy_target)) continue;
    // Not compiled into this build, or another ISA serves the name ("portable" is EMU128 or SCALAR).
    const Selection probe = SelectKernel(t.target, Params());
    if (!probe.ok() || probe->name() != std::string("roi_align_nchw.") + t.isa) continue;
    if (!flags.isas.empty() && std::find(flags.isas.begin(), flags.isas.end(), t.isa) == flags.isas.end()) continue;
    targets.push_back(&t);
  }
  if (flags.best_isas > 0 && targets.size() > flags.best_isas) targets.resize(flags.best_isas);  // best first
  if (targets.empty()) {
    std::fprintf(stderr, "no ISA to run (this CPU: %s)\n", internal::CpuTargetsDescription().c_str());
  }
  return targets;
}

}  // namespace bench
}  // namespace roialign
