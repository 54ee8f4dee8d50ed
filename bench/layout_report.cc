// The layout report (the project's main job): is NCHW or NHWC roi_align faster on this CPU, and what does a
// layout transform around the kernel cost? Times, per workload, ISA and thread count:
//   NCHW kernel | NHWC kernel | NHWC data -> NCHW -> NCHW kernel -> NHWC | NCHW data -> NHWC -> NHWC kernel -> NCHW
// per dtype (f32 by default, f16 and bf16 on request), and prints a table with fraction_of_limit
// (docs/performance-model.md), writes JSON, and optionally dumps the workloads for bench/peers.py. Run with --help.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "bench/workloads.h"
#include "core/enums.h"
#include "strategy/registry.h"
#include "strategy/targets.h"

namespace roialign {
namespace bench {
namespace {

const char kHelp[] = R"(layout_report: NCHW vs NHWC roi_align on this CPU, with layout transforms, per ISA.

Usage: layout_report [options]
  --workloads=a,b     standard workloads to run (default: all): default, pooled14, adaptive, rois100, l3, fpn
                        default  = 256x200x272 map, 1000 RoIs (16-512 px, log-uniform), 7x7, ratio 2, scale 1/4
                        pooled14 = default with 14x14 output
                        adaptive = default with adaptive sampling and HALF_PIXEL (Detectron2)
                        rois100  = default with 100 RoIs
                        l3       = a 256x50x68 map (fits in L3), 1000 RoIs of 16-128 px
                        fpn      = P2-P5 of a 1088x800 image (200x272 .. 25x34), C=256, 1000 RoIs 16-512 px,
                                   7x7, ratio 2, f32: one multi-level call vs the same RoIs level by level
  --custom=SPEC       a custom workload instead, SPEC = key=value pairs separated by ':' e.g.
                        C=64:H=100:W=100:K=500:pooled=7:ratio=2:coord=HALF_PIXEL:pool=MAX:scale=0.25
                        (keys: C H W K pooled ratio coord{LEGACY,HALF_PIXEL,HALF_PIXEL_CENTERED}
                         pool{AVG,MAX,MAX_ONNX} scale; unspecified keys keep the default workload's values)
  --isas=a,b          ISAs to time (default: every one this CPU runs), e.g. avx2,sse4,emu128
  --threads=a,b       thread counts (default: 1 and all cores)
  --dtypes=a,b        feature-map and output dtypes (default: f32): f32, f16, bf16 (16-bit maps are the f32
                        map rounded to nearest even; an ISA that does not serve a dtype is skipped)
  --repeats=N         timed runs per measurement; the median is reported (default 5)
  --json=FILE         write the results as JSON (schema in docs/layouts.md)
  --dump-dir=DIR      write each workload's map, RoIs and our NCHW result there, for bench/peers.py
  --help              this text

Columns: ms = median wall time; "lim%" = fraction_of_limit = roofline time / measured time, where the roofline
uses the FMA rate and memory bandwidths measured at the start of this run. Progress goes to stderr.
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

// Median seconds of `repeats` runs after one warm-up run; a failing run aborts with its message.
double TimeMedian(int repeats, const std::function<Status()>& run) {
  Status s = run();
  if (!s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    std::exit(1);
  }
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const double t0 = Now();
    run();
    times.push_back(Now() - t0);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

bool ParseCustom(const std::string& spec, WorkloadSpec* w) {
  *w = StandardWorkloads()[0];
  w->name = "custom";
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
    else if (k == "coord") {
      if (!internal::ParseEnum(v, &w->coordinate_mode)) return false;
    } else if (k == "pool") {
      if (!internal::ParseEnum(v, &w->pool_mode)) return false;
    } else {
      return false;
    }
  }
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

struct Row {
  std::string workload, isa, dtype, path;
  int threads;
  double ms, fraction, gfma, load_gb;
};

// The FPN rows: one multi-level call per layout, and the same RoIs level by level (f32).
void RunPyramid(const std::vector<const internal::IsaTarget*>& targets, const std::vector<int>& threads,
                const std::vector<Peaks>& peaks, int repeats, const std::string& dump_dir, std::vector<Row>* rows) {
  std::fprintf(stderr, "building workload fpn...\n");
  const PyramidWorkload w = MakePyramidWorkload();
  AlignedBuffer out(w.OutputSize());
  if (!dump_dir.empty()) {  // for bench/peers.py: the maps, the RoIs and our result
    const std::string base = dump_dir + "/fpn";
    const MultiLevelSelectResult ref = SelectMultiLevel(targets[0]->target, w.ParamsFor(Layout::kNCHW));
    const std::vector<LevelMap> maps = w.MapsFor(Layout::kNCHW);
    MultiLevelInputs in;
    in.maps = maps.data();
    in.num_maps = static_cast<int32_t>(maps.size());
    in.batch = 1;
    in.channels = w.channels;
    in.rois = w.rois.data();
    in.num_rois = w.num_rois;
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
  std::printf("%-9s %-7s %-5s %3s | %16s | %16s | %20s | %20s | %s\n", "workload", "isa", "dtype", "thr",
              "NCHW ms (lim%)", "NHWC ms (lim%)", "NCHW by level ms", "NHWC by level ms", "one call vs by level");
  for (const internal::IsaTarget* t : targets) {
    double s[4] = {0, 0, 0, 0};
    for (size_t ti = 0; ti < threads.size(); ++ti) {
      const int nt = threads[ti];
      int i = 0;
      for (Layout layout : {Layout::kNCHW, Layout::kNHWC}) {
        const MultiLevelSelectResult multi = SelectMultiLevel(t->target, w.ParamsFor(layout));
        LevelByLevel levels;
        Status init = levels.Init(w, t->target, layout);
        if (!multi.ok() || !init.ok()) {
          std::fprintf(stderr, "fpn %s: %s\n", t->isa, (multi.ok() ? init : multi.status).message().c_str());
          std::exit(1);
        }
        const std::vector<LevelMap> maps = w.MapsFor(layout);
        MultiLevelInputs in;
        in.maps = maps.data();
        in.num_maps = static_cast<int32_t>(maps.size());
        in.batch = 1;
        in.channels = w.channels;
        in.rois = w.rois.data();
        in.num_rois = w.num_rois;
        s[i] = TimeMedian(repeats, [&] { return multi.kernel.Run(in, out.data(), nt); });
        s[i + 2] = TimeMedian(repeats, [&] { return levels.Run(out.data(), nt); });
        ++i;
      }
      const double lim = LimitSeconds(w, peaks[ti]);
      const char* paths[4] = {"NCHW", "NHWC", "NCHW level by level", "NHWC level by level"};
      for (int r = 0; r < 4; ++r) {
        rows->push_back({"fpn", t->isa, "F32", paths[r], nt, s[r] * 1e3, lim / s[r], w.fmas / s[r] / 1e9,
                         w.loaded_bytes / s[r] / 1e9});
      }
      std::printf("%-9s %-7s %-5s %3d | %8.2f (%4.1f%%) | %8.2f (%4.1f%%) | %20.2f | %20.2f | NCHW %.2fx, NHWC %.2fx\n",
                  "fpn", t->isa, "F32", nt, s[0] * 1e3, 100 * lim / s[0], s[1] * 1e3, 100 * lim / s[1], s[2] * 1e3,
                  s[3] * 1e3, s[2] / s[0], s[3] / s[1]);
      std::fflush(stdout);
    }
  }
}

}  // namespace

int Main(int argc, char** argv) {
  std::vector<std::string> workload_names, isas;
  std::vector<DType> dtypes = {DType::kF32};
  std::vector<int> threads = {1, omp_get_num_procs()};
  int repeats = 5;
  std::string json_path, dump_dir, custom;
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
  if (targets.empty()) {
    std::fprintf(stderr, "no ISA to run (this CPU: %s)\n", internal::CpuTargetsDescription().c_str());
    return 2;
  }

  std::vector<Peaks> peaks;
  for (int t : threads) {
    std::fprintf(stderr, "measuring machine peaks with %d thread(s)...\n", t);
    peaks.push_back(MeasurePeaks(t));
    std::fprintf(stderr, "  %.1f GFMA/s, write %.1f GB/s, read %.1f GB/s\n", peaks.back().gfma_per_s,
                 peaks.back().write_gb_per_s, peaks.back().read_gb_per_s);
  }

  std::vector<Row> rows;
  if (!specs.empty()) std::printf("%-9s %-7s %-5s %3s | %16s | %16s | %20s | %20s | %s\n", "workload", "isa", "dtype", "thr",
              "NCHW ms (lim%)", "NHWC ms (lim%)", "NHWC->NCHW->NHWC ms", "NCHW->NHWC->NCHW ms", "winner");
  for (const WorkloadSpec& spec : specs) {
    std::fprintf(stderr, "building workload %s...\n", spec.name.c_str());
    const Workload w = MakeWorkload(spec);
    AlignedBuffer out(w.OutputSize()), out_t(w.OutputSize()), map_t(w.nchw.size());
    if (!dump_dir.empty()) {
      const std::string base = dump_dir + "/" + spec.name;
      SelectResult ref = Select(targets[0]->target, w.ParamsFor(Layout::kNCHW));
      ref->Run(w.InputsFor(Layout::kNCHW), out.data(), 0);
      WriteFile(base + ".map.f32", w.nchw.data(), w.nchw.size() * 4);
      WriteFile(base + ".rois.f32", w.rois.data(), w.rois.size() * 4);
      WriteFile(base + ".ref.f32", out.data(), out.size() * 4);
      std::ofstream j(base + ".json");
      j << "{\"name\": \"" << spec.name << "\", \"batch\": 1, \"channels\": " << spec.channels
        << ", \"height\": " << spec.height << ", \"width\": " << spec.width << ", \"num_rois\": " << spec.num_rois
        << ", \"pooled_height\": " << spec.pooled << ", \"pooled_width\": " << spec.pooled
        << ", \"spatial_scale\": " << spec.spatial_scale << ", \"sampling_ratio\": " << spec.sampling_ratio
        << ", \"coordinate_mode\": \"" << ToString(spec.coordinate_mode) << "\", \"pool_mode\": \""
        << ToString(spec.pool_mode) << "\", \"threads\": [";
      for (size_t i = 0; i < threads.size(); ++i) j << (i ? ", " : "") << threads[i];
      j << "]}\n";
    }
    const int64_t C = spec.channels, H = spec.height, W = spec.width, K = spec.num_rois, P = spec.pooled;
    for (const internal::IsaTarget* t : targets) {
      for (DType dtype : dtypes) {
        const SelectResult nchw = Select(t->target, w.ParamsFor(Layout::kNCHW, dtype));
        const SelectResult nhwc = Select(t->target, w.ParamsFor(Layout::kNHWC, dtype));
        if (!nchw.ok() || !nhwc.ok()) {
          std::fprintf(stderr, "  %s %s %s: skipped (%s)\n", spec.name.c_str(), t->isa, ToString(dtype),
                       (nchw.ok() ? nhwc : nchw).status().message().c_str());
          continue;
        }
        for (size_t ti = 0; ti < threads.size(); ++ti) {
          const int nt = threads[ti];
          std::fprintf(stderr, "  %s %s %s %d thread(s)...\n", spec.name.c_str(), t->isa, ToString(dtype), nt);
          const Inputs in_nchw = w.InputsFor(Layout::kNCHW, dtype), in_nhwc = w.InputsFor(Layout::kNHWC, dtype);
          Inputs in_nchw_t = in_nchw, in_nhwc_t = in_nhwc;
          in_nchw_t.input = map_t.data();
          in_nhwc_t.input = map_t.data();
          const double s_nchw = TimeMedian(repeats, [&] { return nchw->Run(in_nchw, out.data(), nt); });
          const double s_nhwc = TimeMedian(repeats, [&] { return nhwc->Run(in_nhwc, out.data(), nt); });
          const double s_via_nchw = TimeMedian(repeats, [&] {
            Status s = NhwcToNchw(dtype, in_nhwc.input, 1, C, H, W, map_t.data(), nt);
            if (s.ok()) s = nchw->Run(in_nchw_t, out_t.data(), nt);
            if (s.ok()) s = NchwToNhwc(dtype, out_t.data(), K, C, P, P, out.data(), nt);
            return s;
          });
          const double s_via_nhwc = TimeMedian(repeats, [&] {
            Status s = NchwToNhwc(dtype, in_nchw.input, 1, C, H, W, map_t.data(), nt);
            if (s.ok()) s = nhwc->Run(in_nhwc_t, out_t.data(), nt);
            if (s.ok()) s = NhwcToNchw(dtype, out_t.data(), K, C, P, P, out.data(), nt);
            return s;
          });
          const double lim = LimitSeconds(w, peaks[ti], dtype);
          const struct {
            const char* path;
            double s;
          } results[] = {{"NCHW", s_nchw},
                         {"NHWC", s_nhwc},
                         {"NHWC->NCHW kernel->NHWC", s_via_nchw},
                         {"NCHW->NHWC kernel->NCHW", s_via_nhwc}};
          for (const auto& r : results) {
            rows.push_back({spec.name, t->isa, ToString(dtype), r.path, nt, r.s * 1e3, lim / r.s, w.fmas / r.s / 1e9,
                            Bytes(w.loaded_bytes, dtype) / r.s / 1e9});
          }
          const bool nhwc_wins = s_nhwc < s_nchw;
          char winner[96];
          std::snprintf(winner, sizeof(winner), "%s %.2fx faster", nhwc_wins ? "NHWC" : "NCHW",
                        nhwc_wins ? s_nchw / s_nhwc : s_nhwc / s_nchw);
          std::printf("%-9s %-7s %-5s %3d | %8.2f (%4.1f%%) | %8.2f (%4.1f%%) | %20.2f | %20.2f | %s\n",
                      spec.name.c_str(), t->isa, ToString(dtype), nt, s_nchw * 1e3, 100 * lim / s_nchw, s_nhwc * 1e3,
                      100 * lim / s_nhwc, s_via_nchw * 1e3, s_via_nhwc * 1e3, winner);
          std::fflush(stdout);
        }
      }
    }
  }
  const bool run_fpn = custom.empty() && (workload_names.empty() ||
                                          std::find(workload_names.begin(), workload_names.end(), "fpn") !=
                                              workload_names.end());
  if (run_fpn) RunPyramid(targets, threads, peaks, repeats, dump_dir, &rows);
  if (!json_path.empty()) {
    std::ofstream j(json_path);
    j << "{\n  \"machine\": {\"cpu\": \"" << internal::BuildArchitecture() << " (" << internal::CpuTargetsDescription()
      << ")\", \"threads\": " << omp_get_num_procs() << ", \"peak_gfma_per_s\": " << peaks.back().gfma_per_s
      << ", \"write_gb_per_s\": " << peaks.back().write_gb_per_s << ", \"read_gb_per_s\": " << peaks.back().read_gb_per_s
      << ", \"peaks_by_threads\": [";
    for (size_t i = 0; i < threads.size(); ++i) {
      j << (i ? ", " : "") << "{\"threads\": " << threads[i] << ", \"peak_gfma_per_s\": " << peaks[i].gfma_per_s
        << ", \"write_gb_per_s\": " << peaks[i].write_gb_per_s << ", \"read_gb_per_s\": " << peaks[i].read_gb_per_s << "}";
    }
    j << "]},\n  \"results\": [\n";
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      j << "    {\"workload\": \"" << r.workload << "\", \"isa\": \"" << r.isa << "\", \"dtype\": \"" << r.dtype
        << "\", \"threads\": " << r.threads
        << ", \"path\": \"" << r.path << "\", \"ms\": " << r.ms << ", \"fraction_of_limit\": " << r.fraction
        << ", \"gfma_per_s\": " << r.gfma << ", \"load_gb_per_s\": " << r.load_gb << "}"
        << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    j << "  ]\n}\n";
    std::fprintf(stderr, "wrote %s\n", json_path.c_str());
  }
  return 0;
}

}  // namespace bench
}  // namespace roialign

int main(int argc, char** argv) { return roialign::bench::Main(argc, argv); }
