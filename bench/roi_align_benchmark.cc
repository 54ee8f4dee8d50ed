// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Google Benchmark of every registered built-in implementation (the registry's list) on the embedded workloads, for
// each dtype it serves, at 1 and all threads (OpenMP, and at all threads also an engine-style worker pool of as many
// threads: <workload>/<implementation>/<dtype>/pool:<n>), with the roofline counters of docs/performance-model.md (peaks
// measured at start-up, same run). Names are <workload>/<implementation>/<dtype>/threads:<n>; filter with
// --benchmark_filter, e.g. 'default/.*avx2/f16', and choose dtypes with --dtypes=f32,f16,bf16 (default: all). The
// library's layout transforms of the default map run as transform/<from>_to_<to>/<dtype>/threads:<n>, and the
// backward of each workload as <workload>_backward/<implementation>/<dtype>/threads:<n>.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "bench/flags.h"
#include "bench/limit.h"
#include "bench/workloads.h"
#include "core/enums.h"
#include "examples/worker_pool.h"
#include "strategy/registry.h"
#include "strategy/targets.h"

namespace roialign {
namespace bench {
namespace {

const Workload& CachedWorkload(const WorkloadSpec& spec) {
  static std::map<std::string, std::unique_ptr<Workload>> cache;
  auto& w = cache[spec.name];
  if (!w) w = std::make_unique<Workload>(MakeWorkload(spec));
  return *w;
}

// The best of 5 measurements of the peaks for a workload's bytes in `dtype`, once per thread count.
const Peaks& CachedPeaks(const Workload& w, DType dtype, int threads) {
  static std::map<std::tuple<std::string, DType, int>, Peaks> cache;
  const auto key = std::make_tuple(w.spec.name, dtype, threads);
  auto it = cache.find(key);
  if (it == cache.end()) {
    PeakMeter meter(Bytes(w.distinct_input_bytes, dtype), Bytes(w.output_bytes, dtype));
    std::vector<Peaks> rounds;
    for (int r = 0; r < 5; ++r) rounds.push_back(meter.Measure(threads));
    it = cache.emplace(key, Best(rounds)).first;
  }
  return it->second;
}

// Where a benchmark runs its parallel steps: OpenMP threads, or an engine-style pool of the same size
// (examples/worker_pool.c), to compare the two.
enum class Threads { kOpenMp, kPool };

void BM_RoiAlign(benchmark::State& state, const WorkloadSpec& spec, std::string target, Layout layout, DType dtype,
                 int threads, Threads where) {
  const Workload& w = CachedWorkload(spec);
  Selection kernel = SelectKernel(target, w.ParamsFor(layout, dtype));
  if (!kernel.ok()) {
    state.SkipWithError(kernel.status().message().c_str());
    return;
  }
  AlignedBuffer out(BufferFloats(w.OutputSize(), dtype));
  const Inputs in = w.InputsFor(layout, dtype);
  std::unique_ptr<worker_pool, void (*)(worker_pool*)> workers(
      where == Threads::kPool ? worker_pool_create(threads) : nullptr, &worker_pool_destroy);
  if (where == Threads::kPool && workers == nullptr) {
    state.SkipWithError("could not start the worker pool");
    return;
  }
  const roialign_threadpool pool = workers ? worker_pool_interface(workers.get()) : roialign_threadpool{};
  for (auto _ : state) {
    const Status s = workers ? kernel->Run(in, out.data(), pool) : kernel->Run(in, out.data(), threads);
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  // Instruction counting (bench/ab_instructions.py) runs under valgrind, where measuring the peaks would take
  // minutes and mean nothing.
  if (std::getenv("ROIALIGN_BENCH_NO_ROOFLINE") != nullptr) {
    state.SetLabel(kernel->name());
    return;
  }
  const double limit = LimitOf(w, CachedPeaks(w, dtype, threads)).seconds;
  state.counters["GFMA/s"] = benchmark::Counter(w.fmas * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GB/s"] = benchmark::Counter(Bytes(w.output_bytes + w.distinct_input_bytes, dtype) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
  // Bytes the bin loops load (merged taps for AVG) over time: how far the loads are from cache bandwidth.
  state.counters["load_GB/s"] =
      benchmark::Counter(Bytes(w.loaded_bytes, dtype) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  // fraction_of_limit = T_lim / T_measured, as a rate: T_lim per iteration over the measured time.
  state.counters["fraction_of_limit"] = benchmark::Counter(limit, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(kernel->name());
}

// The best of 5 measurements of the peaks for a workload's backward bytes in `dtype` (dY, the map in the MAX modes,
// all of dX), once per thread count.
const Peaks& CachedBackwardPeaks(const Workload& w, DType dtype, int threads) {
  static std::map<std::tuple<std::string, DType, int>, Peaks> cache;
  const auto key = std::make_tuple(w.spec.name, dtype, threads);
  auto it = cache.find(key);
  if (it == cache.end()) {
    const BackwardAccounting& b = w.backward;
    PeakMeter meter(Bytes(b.dy_bytes + b.map_bytes, dtype), Bytes(b.dx_bytes, dtype));
    std::vector<Peaks> rounds;
    for (int r = 0; r < 5; ++r) rounds.push_back(meter.Measure(threads));
    it = cache.emplace(key, Best(rounds)).first;
  }
  return it->second;
}

// The backward of a workload (dX from a dY of ones, through the C API): <workload>_backward/<implementation>/... .
// Its counters are the backward's (BackwardAccounting, docs/performance-model.md "The backward's limit"): the
// forward's multiply-adds, the bytes its limit moves, what the taps' accumulation moves, and fraction_of_limit.
void BM_RoiAlignBackward(benchmark::State& state, const WorkloadSpec& spec, std::string target, Layout layout,
                         DType dtype, int threads) {
  const Workload& w = CachedWorkload(spec);
  Params backward = w.ParamsFor(layout, dtype);
  backward.backward = true;
  const SelectResult kernel = Select(target, backward);  // roialign.hpp's: the backward runs through the C API
  if (!kernel.ok()) {
    state.SkipWithError(kernel.status().message().c_str());
    return;
  }
  const Inputs in = w.InputsFor(layout, dtype);
  const Params params = w.ParamsFor(layout, dtype);
  const int64_t stored = internal::StoredChannels(layout, in.channels);
  const size_t dy_elements = static_cast<size_t>(in.num_rois * stored * params.pooled_height * params.pooled_width);
  AlignedBuffer dy(BufferFloats(dy_elements, dtype));
  AlignedBuffer dx(BufferFloats(static_cast<size_t>(in.batch * stored * in.height * in.width), dtype));
  const std::vector<unsigned char> one = [&] {  // dY of ones in the dtype: 1 is exact in every one
    std::vector<unsigned char> bytes(static_cast<size_t>(internal::BytesOf(dtype)));
    if (dtype == DType::kF32) {
      const float v = 1.0f;
      std::memcpy(bytes.data(), &v, sizeof(v));
    } else if (dtype == DType::kF64) {
      const double v = 1.0;
      std::memcpy(bytes.data(), &v, sizeof(v));
    } else {
      const uint16_t v = dtype == DType::kF16 ? 0x3C00 : 0x3F80;
      std::memcpy(bytes.data(), &v, sizeof(v));
    }
    return bytes;
  }();
  for (size_t i = 0; i < dy_elements; ++i) {
    std::memcpy(reinterpret_cast<unsigned char*>(dy.data()) + i * one.size(), one.data(), one.size());
  }
  for (auto _ : state) {
    const Status s = kernel->RunBackward(in, dy.data(), dx.data(), threads);
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(dx.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(kernel->name());
  if (std::getenv("ROIALIGN_BENCH_NO_ROOFLINE") != nullptr) return;
  const BackwardAccounting& b = w.backward;
  state.counters["GFMA/s"] = benchmark::Counter(b.fmas * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GB/s"] = benchmark::Counter(Bytes(b.dy_bytes + b.map_bytes + b.dx_bytes, dtype) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
  state.counters["load_GB/s"] =
      benchmark::Counter((b.loaded_bytes_f32 ? b.loaded_bytes : Bytes(b.loaded_bytes, dtype)) * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate);
  state.counters["fraction_of_limit"] = benchmark::Counter(LimitOf(b, CachedBackwardPeaks(w, dtype, threads)).seconds,
                                                           benchmark::Counter::kIsIterationInvariantRate);
}

const PyramidWorkload& CachedPyramid() {
  static const PyramidWorkload w = MakePyramidWorkload();
  return w;
}

// The best of 5 measurements of the peaks for the FPN workload's bytes (f32), once per thread count.
const Peaks& CachedPyramidPeaks(int threads) {
  static std::map<int, Peaks> cache;
  auto it = cache.find(threads);
  if (it == cache.end()) {
    const PyramidWorkload& w = CachedPyramid();
    PeakMeter meter(w.distinct_input_bytes, w.output_bytes);
    std::vector<Peaks> rounds;
    for (int r = 0; r < 5; ++r) rounds.push_back(meter.Measure(threads));
    it = cache.emplace(threads, Best(rounds)).first;
  }
  return it->second;
}

// The FPN workload in one multi-level call (fpn/...), or the same RoIs level by level (fpn_levels/...): per level,
// the single-level kernel on that level's RoIs, gathered before timing, into consecutive slices of the output (no
// scatter). The second is the floor a multi-level call should not fall below.
void BM_Pyramid(benchmark::State& state, std::string target, Layout layout, int threads, bool level_by_level) {
  const PyramidWorkload& w = CachedPyramid();
  AlignedBuffer out(w.OutputSize());
  const std::vector<LevelMap> maps = w.MapsFor(layout);
  LevelByLevel levels;
  const Status init = levels.Init(w, target, layout);
  const PyramidSelection multi = SelectPyramidKernel(target, w.ParamsFor(layout));
  if (!init.ok() || !multi.ok()) {
    state.SkipWithError((init.ok() ? multi.status : init).message().c_str());
    return;
  }
  const MultiLevelInputs in = w.InputsFor(maps);
  for (auto _ : state) {
    const Status s = level_by_level ? levels.Run(out.data(), threads) : multi.kernel.Run(in, out.data(), threads);
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(multi.kernel.name());
  if (std::getenv("ROIALIGN_BENCH_NO_ROOFLINE") != nullptr) return;
  state.counters["GFMA/s"] = benchmark::Counter(w.fmas * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["fraction_of_limit"] =
      benchmark::Counter(LimitOf(w, CachedPyramidPeaks(threads)).seconds, benchmark::Counter::kIsIterationInvariantRate);
}

// roialign::TransformLayout of the workload's map from one layout to another (f32 for the blocked layouts, whose
// maps the workloads build in f32 only), with the bytes it reads and writes over the time: for A/B runs of the
// transforms alone (bench/ab.py), beside the kernels they serve.
void BM_Transform(benchmark::State& state, const WorkloadSpec& spec, Layout from, Layout to, DType dtype, int threads) {
  const Workload& w = CachedWorkload(spec);
  const int64_t C = spec.channels, H = spec.height, W = spec.width;
  const int64_t in_bytes = internal::StoredChannels(from, C) * H * W * internal::BytesOf(dtype);
  const int64_t out_bytes = internal::StoredChannels(to, C) * H * W * internal::BytesOf(dtype);
  AlignedBuffer out(static_cast<size_t>(out_bytes / 4 + 1));
  for (auto _ : state) {
    const Status s = TransformLayout(dtype, from, to, w.Map(from, dtype), 1, C, H, W, out.data(), threads);
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(in_bytes + out_bytes) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}

// "f16" for DType::kF16.
std::string Lower(DType dtype) {
  std::string s = ToString(dtype);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

void RegisterAll(const std::vector<DType>& dtypes) {
  const int all = omp_get_num_procs();
  for (const WorkloadSpec& spec : StandardWorkloads()) {
    for (const auto& impl : internal::AllImplementations()) {
      if (!impl->is_builtin() || !internal::CpuSupports(impl->hwy_target)) continue;
      const Layout layout = internal::ValuesIn<Layout>(impl->layouts).front();
      for (DType dtype : dtypes) {
        if (!(impl->dtypes & internal::Bit(dtype))) continue;  // refused at selection (the portable fallback)
        if (internal::IsBlocked(layout) && dtype != DType::kF32) continue;  // workloads build f32 blocked maps only
        for (int threads : {1, all}) {
          if (threads == all && all == 1) continue;
          const std::string prefix = spec.name + "/" + impl->name + "/" + Lower(dtype);
          const std::string name = prefix + "/threads:" + std::to_string(threads);
          benchmark::RegisterBenchmark(name.c_str(), BM_RoiAlign, spec, impl->target, layout, dtype, threads,
                                       Threads::kOpenMp)
              ->UseRealTime()
              ->Unit(benchmark::kMillisecond)
              ->MinTime(0.2);
          const std::string backward_name =
              spec.name + "_backward/" + impl->name + "/" + Lower(dtype) + "/threads:" + std::to_string(threads);
          benchmark::RegisterBenchmark(backward_name.c_str(), BM_RoiAlignBackward, spec, impl->target, layout, dtype,
                                       threads)
              ->UseRealTime()
              ->Unit(benchmark::kMillisecond)
              ->MinTime(0.2);
          if (threads == 1) continue;
          const std::string pool_name = prefix + "/pool:" + std::to_string(threads);
          benchmark::RegisterBenchmark(pool_name.c_str(), BM_RoiAlign, spec, impl->target, layout, dtype, threads,
                                       Threads::kPool)
              ->UseRealTime()
              ->Unit(benchmark::kMillisecond)
              ->MinTime(0.2);
        }
      }
    }
  }
  // The map transforms of the default workload: transform/<from>_to_<to>/<dtype>/threads:<n>.
  const struct {
    Layout from, to;
  } kTransforms[] = {{Layout::kNCHW, Layout::kNHWC},    {Layout::kNHWC, Layout::kNCHW},
                     {Layout::kNCHW, Layout::kNCHW8c},  {Layout::kNCHW, Layout::kNCHW16c},
                     {Layout::kNCHW16c, Layout::kNCHW}, {Layout::kNCHW8c, Layout::kNHWC},
                     {Layout::kNHWC, Layout::kNCHW8c},  {Layout::kNCHW16c, Layout::kNHWC},
                     {Layout::kNHWC, Layout::kNCHW16c}, {Layout::kNCHW4c, Layout::kNHWC},
                     {Layout::kNHWC, Layout::kNCHW4c}};
  for (const auto& t : kTransforms) {
    for (DType dtype : dtypes) {
      if ((internal::IsBlocked(t.from) || internal::IsBlocked(t.to)) && dtype != DType::kF32) continue;
      for (int threads : {1, all}) {
        if (threads == all && all == 1) continue;
        const std::string name = std::string("transform/") + ToString(t.from) + "_to_" + ToString(t.to) + "/" +
                                 Lower(dtype) + "/threads:" + std::to_string(threads);
        benchmark::RegisterBenchmark(name.c_str(), BM_Transform, StandardWorkloads()[0], t.from, t.to, dtype, threads)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond)
            ->MinTime(0.2);
      }
    }
  }
  // The FPN workload (f32): each built-in implementation in one multi-level call and level by level.
  if (std::find(dtypes.begin(), dtypes.end(), DType::kF32) == dtypes.end()) return;
  for (const auto& impl : internal::AllImplementations()) {
    if (!impl->is_builtin() || !internal::CpuSupports(impl->hwy_target)) continue;
    const Layout layout = internal::ValuesIn<Layout>(impl->layouts).front();
    for (int threads : {1, all}) {
      if (threads == all && all == 1) continue;
      for (bool level_by_level : {false, true}) {
        const std::string name = std::string(level_by_level ? "fpn_levels/" : "fpn/") + impl->name +
                                 "/f32/threads:" + std::to_string(threads);
        benchmark::RegisterBenchmark(name.c_str(), BM_Pyramid, impl->target, layout, threads, level_by_level)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond)
            ->MinTime(0.2);
      }
    }
  }
}

// Takes --dtypes=a,b out of argv (Google Benchmark would refuse it); false on an unknown dtype.
bool ParseDtypes(int* argc, char** argv, std::vector<DType>* dtypes) {
  *dtypes = internal::AllValues<DType>();
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const char* value = FlagValue(argv[i], "--dtypes");
    if (value == nullptr) {
      argv[kept++] = argv[i];
      continue;
    }
    dtypes->clear();
    std::stringstream list(value);
    std::string item;
    while (std::getline(list, item, ',')) {  // an empty item is refused, as an unknown name
      DType dtype;
      if (!ParseDType(&item, &dtype)) return false;
      dtypes->push_back(dtype);
    }
  }
  *argc = kept;
  return true;
}

}  // namespace
}  // namespace bench
}  // namespace roialign

int main(int argc, char** argv) {
  std::vector<roialign::DType> dtypes;
  if (!roialign::bench::ParseDtypes(&argc, argv, &dtypes)) {
    std::fprintf(stderr, "--dtypes: expected a list of f32, f16, bf16\n");
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  roialign::bench::RegisterAll(dtypes);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
