// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// ab_libraries: the wall time of two builds of libroialign, alternated in one process on the same data, through
// the C API. bench/ab.py compares benchmark binaries, and a benchmark built from an older tree brings that tree's
// harness: its workloads allocate other buffers (float64 copies of the maps, say), so the map lands elsewhere and
// the same kernel can time differently. Here both libraries read one map, one set of RoIs and one output buffer.
// Run with --help.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/flags.h"
#include "bench/workloads.h"

namespace roialign {
namespace bench {
namespace {

const char kHelp[] = R"(ab_libraries: two builds of libroialign alternated on the same data, through the C API.

Usage:
  ab_libraries OLD_LIBRARY NEW_LIBRARY [--workloads=a,b] [--layouts=nchw,nhwc] [--target=T] [--threads=N]
               [--rounds=N] [--calls=N]

  --workloads  single-level standard workloads (default: default,pooled14,adaptive,rois100,rois20,l3), float32
  --layouts    nchw, nhwc, nchw4c, nchw8c, nchw16c (default: nchw,nhwc)
  --target     a roialign_select target both libraries know (default: host)
  --threads    roialign_options.num_threads (default 1)
  --rounds     rounds (default 8): each times OLD and NEW once, in an order that alternates from round to round
  --calls      calls per library and round, after one untimed call; the round keeps the fastest (default 10)

Prints per workload and layout each library's minimum and median over the rounds, and NEW's speed-up over OLD
(OLD's time / NEW's) of the minima and of the medians. Only the C API of 1.0 is used, so any two builds compare.
)";

// The C entry points of one loaded library.
struct Library {
  const char* path;
  decltype(&roialign_select) select;
  decltype(&roialign_run) run;
  decltype(&roialign_kernel_free) kernel_free;
  decltype(&roialign_last_error) last_error;
};

template <typename F>
void Bind(void* handle, const char* path, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(dlsym(handle, name));
  if (*fn == nullptr) {
    std::fprintf(stderr, "%s: no %s\n", path, name);
    std::exit(2);
  }
}

Library Load(const char* path) {
  // RTLD_LOCAL: both libraries export the same names, and each call must reach its own.
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::fprintf(stderr, "cannot load %s: %s\n", path, dlerror());
    std::exit(2);
  }
  Library l{path, nullptr, nullptr, nullptr, nullptr};
  Bind(handle, path, "roialign_select", &l.select);
  Bind(handle, path, "roialign_run", &l.run);
  Bind(handle, path, "roialign_kernel_free", &l.kernel_free);
  Bind(handle, path, "roialign_last_error", &l.last_error);
  return l;
}

bool ParseLayout(const std::string& name, Layout* layout) {
  static const std::pair<const char*, Layout> kNames[] = {{"nchw", Layout::kNCHW},
                                                          {"nhwc", Layout::kNHWC},
                                                          {"nchw4c", Layout::kNCHW4c},
                                                          {"nchw8c", Layout::kNCHW8c},
                                                          {"nchw16c", Layout::kNCHW16c}};
  for (const auto& [n, l] : kNames) {
    if (name == n) {
      *layout = l;
      return true;
    }
  }
  return false;
}

struct Flags {
  std::vector<std::string> workloads = {"default", "pooled14", "adaptive", "rois100", "rois20", "l3"};
  std::vector<std::string> layouts = {"nchw", "nhwc"};
  std::string target = "host";
  int threads = 1, rounds = 8, calls = 10;
};

// The fastest of `calls` calls, after an untimed one; negative if the library refused the call.
double FastestCall(const Library& lib, roialign_kernel* kernel, const roialign_inputs& in, void* out,
                   const roialign_options& options, int calls) {
  if (lib.run(kernel, &in, out, &options) != ROIALIGN_OK) return -1;
  double best = 1e300;
  for (int i = 0; i < calls; ++i) {
    const auto start = std::chrono::steady_clock::now();
    lib.run(kernel, &in, out, &options);
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int Compare(const Library (&libs)[2], const Flags& flags) {
  for (const std::string& name : flags.workloads) {
    const WorkloadSpec* spec = FindWorkload(name);
    if (spec == nullptr || spec->roi_kind != RoiKind::kAxisAligned) {
      std::fprintf(stderr, "unknown or rotated workload '%s' (see --help)\n", name.c_str());
      return 2;
    }
    const Workload w = MakeWorkload(*spec);
    for (const std::string& layout_name : flags.layouts) {
      Layout layout;
      if (!ParseLayout(layout_name, &layout)) {
        std::fprintf(stderr, "unknown layout '%s' (see --help)\n", layout_name.c_str());
        return 2;
      }
      const Params p = w.ParamsFor(layout);
      // A blocked layout's output pads each RoI's channels to whole blocks.
      std::vector<float> out(static_cast<size_t>(spec->num_rois * internal::StoredChannels(layout, spec->channels) *
                                                 spec->pooled * spec->pooled));
      roialign_params params;
      roialign_params_init(&params);
      params.pooled_height = params.pooled_width = p.pooled_height;
      params.spatial_scale = p.spatial_scale;
      params.sampling_ratio = p.sampling_ratio;
      params.coordinate_mode = static_cast<roialign_coordinate_mode>(p.coordinate_mode);
      params.pool_mode = static_cast<roialign_pool_mode>(p.pool_mode);
      params.layout = static_cast<roialign_layout>(layout);
      roialign_inputs in;
      roialign_inputs_init(&in);
      in.batch = 1;
      in.channels = spec->channels;
      in.maps[0].data = w.Map(layout, DType::kF32);
      in.maps[0].height = spec->height;
      in.maps[0].width = spec->width;
      in.rois = w.rois.data();
      in.num_rois = spec->num_rois;
      roialign_options options;
      roialign_options_init(&options);
      options.num_threads = flags.threads;
      roialign_kernel* kernels[2] = {nullptr, nullptr};
      for (int i = 0; i < 2; ++i) {
        if (libs[i].select(flags.target.c_str(), &params, &kernels[i]) != ROIALIGN_OK) {
          std::fprintf(stderr, "%s: %s\n", libs[i].path, libs[i].last_error());
          return 1;
        }
      }
      std::vector<double> times[2];
      for (int r = 0; r < flags.rounds; ++r) {
        for (int j = 0; j < 2; ++j) {
          const int i = r % 2 == 0 ? j : 1 - j;
          const double ms = FastestCall(libs[i], kernels[i], in, out.data(), options, flags.calls);
          if (ms < 0) {
            std::fprintf(stderr, "%s: %s\n", libs[i].path, libs[i].last_error());
            return 1;
          }
          times[i].push_back(ms);
        }
      }
      for (int i = 0; i < 2; ++i) libs[i].kernel_free(kernels[i]);
      const double min0 = *std::min_element(times[0].begin(), times[0].end());
      const double min1 = *std::min_element(times[1].begin(), times[1].end());
      std::printf("%s %s: OLD min %.3f med %.3f ms | NEW min %.3f med %.3f ms | NEW speed-up %.3fx (min) %.3fx (median)\n",
                  name.c_str(), layout_name.c_str(), min0, Median(times[0]), min1, Median(times[1]), min0 / min1,
                  Median(times[0]) / Median(times[1]));
      std::fflush(stdout);
    }
  }
  return 0;
}

int Main(int argc, char** argv) {
  Flags flags;
  std::vector<const char*> paths;
  const int status = ReadFlags(argc, argv, kHelp, [&](const char* arg) {
    const char* v = nullptr;
    if ((v = FlagValue(arg, "--workloads"))) {
      flags.workloads = SplitList(v, ',');
    } else if ((v = FlagValue(arg, "--layouts"))) {
      flags.layouts = SplitList(v, ',');
    } else if ((v = FlagValue(arg, "--target"))) {
      flags.target = v;
    } else if ((v = FlagValue(arg, "--threads"))) {
      flags.threads = std::atoi(v);
    } else if ((v = FlagValue(arg, "--rounds"))) {
      flags.rounds = std::atoi(v);
    } else if ((v = FlagValue(arg, "--calls"))) {
      flags.calls = std::atoi(v);
    } else if (arg[0] != '-') {
      paths.push_back(arg);
    } else {
      return FlagResult::kUnknown;
    }
    return FlagResult::kTaken;
  });
  if (status >= 0) return status;
  if (paths.size() != 2 || flags.rounds < 1 || flags.calls < 1 || flags.threads < 0) {
    std::fprintf(stderr, "give OLD_LIBRARY and NEW_LIBRARY, and positive --rounds and --calls (see --help)\n");
    return 2;
  }
  const Library libs[2] = {Load(paths[0]), Load(paths[1])};
  return Compare(libs, flags);
}

}  // namespace
}  // namespace bench
}  // namespace roialign

int main(int argc, char** argv) { return roialign::bench::Main(argc, argv); }
