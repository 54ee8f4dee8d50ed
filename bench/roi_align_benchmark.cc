// Google Benchmark of every registered built-in implementation (the registry's list) on the embedded workloads,
// at 1 and all threads (OpenMP, and an engine-style worker pool of as many threads), with the roofline counters of docs/performance-model.md (peaks measured at start-up, same run).
// Filter with --benchmark_filter, e.g. 'default/.*avx2'.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <cstdlib>
#include <map>
#include <memory>

#include "bench/workloads.h"
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

const Peaks& CachedPeaks(int threads) {
  static std::map<int, Peaks> cache;
  auto it = cache.find(threads);
  if (it == cache.end()) it = cache.emplace(threads, MeasurePeaks(threads)).first;
  return it->second;
}

// Where a benchmark runs its parallel steps: OpenMP threads, or an engine-style pool of the same size
// (examples/worker_pool.c), to compare the two.
enum class Threads { kOpenMp, kPool };

void BM_RoiAlign(benchmark::State& state, const WorkloadSpec& spec, std::string target, Layout layout, int threads,
                 Threads where) {
  const Workload& w = CachedWorkload(spec);
  SelectResult kernel = Select(target, w.ParamsFor(layout));
  if (!kernel.ok()) {
    state.SkipWithError(kernel.status().message().c_str());
    return;
  }
  AlignedBuffer out(w.OutputSize());
  const Inputs in = w.InputsFor(layout);
  std::unique_ptr<worker_pool, void (*)(worker_pool*)> workers(
      where == Threads::kPool ? worker_pool_create(threads) : nullptr, &worker_pool_destroy);
  if (where == Threads::kPool && workers == nullptr) {
    state.SkipWithError("could not start the worker pool");
    return;
  }
  const ThreadPool pool = workers ? worker_pool_interface(workers.get()) : ThreadPool{};
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
  const Peaks& peaks = CachedPeaks(threads);
  const double limit = LimitSeconds(w, peaks);
  state.counters["GFMA/s"] = benchmark::Counter(w.fmas * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GB/s"] = benchmark::Counter((w.output_bytes + w.distinct_input_bytes) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
  // Bytes the bin loops load (merged taps for AVG) over time: how far the loads are from cache bandwidth.
  state.counters["load_GB/s"] = benchmark::Counter(w.loaded_bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  // fraction_of_limit = T_lim / T_measured, as a rate: T_lim per iteration over the measured time.
  state.counters["fraction_of_limit"] = benchmark::Counter(limit, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(kernel->name());
}

void RegisterAll() {
  const int all = omp_get_num_procs();
  for (const WorkloadSpec& spec : StandardWorkloads()) {
    for (const auto& impl : internal::AllImplementations()) {
      if (!impl->is_builtin() || !internal::CpuSupports(impl->hwy_target)) continue;
      const Layout layout = internal::ValuesIn<Layout>(impl->layouts).front();
      for (int threads : {1, all}) {
        if (threads == all && all == 1) continue;
        const std::string name = spec.name + "/" + impl->name + "/threads:" + std::to_string(threads);
        benchmark::RegisterBenchmark(name.c_str(), BM_RoiAlign, spec, impl->target, layout, threads,
                                     Threads::kOpenMp)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond)
            ->MinTime(0.2);
        if (threads == 1) continue;
        const std::string pool_name = spec.name + "/" + impl->name + "/pool:" + std::to_string(threads);
        benchmark::RegisterBenchmark(pool_name.c_str(), BM_RoiAlign, spec, impl->target, layout, threads,
                                     Threads::kPool)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond)
            ->MinTime(0.2);
      }
    }
  }
}

}  // namespace
}  // namespace bench
}  // namespace roialign

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  roialign::bench::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
