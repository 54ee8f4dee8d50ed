// Machine peaks for the roofline, measured in the same run: FMA rate (best ISA, independent FMA chains),
// streaming-write bandwidth (non-temporal stores) and read bandwidth, over buffers far larger than the caches.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/peaks.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/aligned_allocator.h>
#include <hwy/highway.h>

#include <omp.h>

#include <algorithm>
#include <chrono>

#include "bench/workloads.h"

HWY_BEFORE_NAMESPACE();
namespace roialign {
namespace bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// FMAs (lanes x instructions) executed: 8 independent chains cover FMA latency x throughput on current cores.
double FmaLoop(int64_t iterations, float seed, float* sink) {
  const hn::ScalableTag<float> d;
  auto a0 = hn::Set(d, seed), a1 = hn::Set(d, seed + 1), a2 = hn::Set(d, seed + 2), a3 = hn::Set(d, seed + 3);
  auto a4 = hn::Set(d, seed + 4), a5 = hn::Set(d, seed + 5), a6 = hn::Set(d, seed + 6), a7 = hn::Set(d, seed + 7);
  const auto m = hn::Set(d, 0.999999f), b = hn::Set(d, 1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
    a0 = hn::MulAdd(a0, m, b);
    a1 = hn::MulAdd(a1, m, b);
    a2 = hn::MulAdd(a2, m, b);
    a3 = hn::MulAdd(a3, m, b);
    a4 = hn::MulAdd(a4, m, b);
    a5 = hn::MulAdd(a5, m, b);
    a6 = hn::MulAdd(a6, m, b);
    a7 = hn::MulAdd(a7, m, b);
  }
  const auto s = hn::Add(hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)), hn::Add(hn::Add(a4, a5), hn::Add(a6, a7)));
  *sink += hn::GetLane(hn::SumOfLanes(d, s));
  return 8.0 * static_cast<double>(iterations) * static_cast<double>(hn::Lanes(d));
}

void StreamWrite(float* p, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto v = hn::Set(d, 1.0f);
  for (size_t i = 0; i + N <= n; i += N) hn::Stream(v, d, p + i);
}

float ReadSum(const float* p, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  auto s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    s0 = hn::Add(s0, hn::Load(d, p + i));
    s1 = hn::Add(s1, hn::Load(d, p + i + N));
    s2 = hn::Add(s2, hn::Load(d, p + i + 2 * N));
    s3 = hn::Add(s3, hn::Load(d, p + i + 3 * N));
  }
  return hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(s0, s1), hn::Add(s2, s3))));
}

}  // namespace HWY_NAMESPACE
}  // namespace bench
}  // namespace roialign
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace roialign {
namespace bench {
HWY_EXPORT(FmaLoop);
HWY_EXPORT(StreamWrite);
HWY_EXPORT(ReadSum);

namespace {
double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

Peaks MeasurePeaks(int threads) {
  Peaks peaks;
  float sink = 0;
  // FMA: best of 3 runs of ~0.1 s.
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    double fmas = 0;
    const double t0 = Now();
#pragma omp parallel num_threads(threads) reduction(+ : fmas)
    {
      float local = 0;
      fmas += HWY_DYNAMIC_DISPATCH(FmaLoop)(20000000, static_cast<float>(omp_get_thread_num()), &local);
#pragma omp atomic
      sink += local;
    }
    best = std::max(best, fmas / (Now() - t0));
  }
  peaks.gfma_per_s = best / 1e9;

  // Bandwidth over 512 MiB, split evenly between threads; best of 3.
  const size_t n = size_t{1} << 27;
  hwy::AlignedFreeUniquePtr<float[]> buf = hwy::AllocateAligned<float>(n);
  std::fill(buf.get(), buf.get() + n, 0.5f);  // fault the pages in before timing
  double best_w = 0, best_r = 0;
  for (int rep = 0; rep < 3; ++rep) {
    double t0 = Now();
#pragma omp parallel num_threads(threads)
    {
      const size_t chunk = n / static_cast<size_t>(omp_get_num_threads()) / 64 * 64;
      const size_t begin = chunk * static_cast<size_t>(omp_get_thread_num());
      HWY_DYNAMIC_DISPATCH(StreamWrite)(buf.get() + begin, chunk);
    }
    best_w = std::max(best_w, static_cast<double>(n) * 4 / (Now() - t0));
    t0 = Now();
    float total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    {
      const size_t chunk = n / static_cast<size_t>(omp_get_num_threads()) / 64 * 64;
      const size_t begin = chunk * static_cast<size_t>(omp_get_thread_num());
      total += HWY_DYNAMIC_DISPATCH(ReadSum)(buf.get() + begin, chunk);
    }
    best_r = std::max(best_r, static_cast<double>(n) * 4 / (Now() - t0));
    sink += total;
  }
  peaks.write_gb_per_s = best_w / 1e9;
  peaks.read_gb_per_s = best_r / 1e9;
  if (sink == 12345.0f) peaks.gfma_per_s += 0;  // keep the results observable
  return peaks;
}

}  // namespace bench
}  // namespace roialign
#endif  // HWY_ONCE
