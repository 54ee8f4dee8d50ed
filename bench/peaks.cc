// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Machine peaks for the limit (bench/limit.h), measured beside the kernel timings: lane-operation rates of FMAs
// and of adds (independent chains, best ISA), and the time to read a workload's distinct input bytes and write
// its output bytes in one pass over buffers of those sizes.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/peaks.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "bench/limit.h"

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

// Adds (lanes x instructions) executed, as FmaLoop: some cores add on pipes of their own, beside the FMAs.
double AddLoop(int64_t iterations, float seed, float* sink) {
  const hn::ScalableTag<float> d;
  auto a0 = hn::Set(d, seed), a1 = hn::Set(d, seed + 1), a2 = hn::Set(d, seed + 2), a3 = hn::Set(d, seed + 3);
  auto a4 = hn::Set(d, seed + 4), a5 = hn::Set(d, seed + 5), a6 = hn::Set(d, seed + 6), a7 = hn::Set(d, seed + 7);
  const auto b = hn::Set(d, 1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
    a0 = hn::Add(a0, b);
    a1 = hn::Add(a1, b);
    a2 = hn::Add(a2, b);
    a3 = hn::Add(a3, b);
    a4 = hn::Add(a4, b);
    a5 = hn::Add(a5, b);
    a6 = hn::Add(a6, b);
    a7 = hn::Add(a7, b);
  }
  const auto s = hn::Add(hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)), hn::Add(hn::Add(a4, a5), hn::Add(a6, a7)));
  *sink += hn::GetLane(hn::SumOfLanes(d, s));
  return 8.0 * static_cast<double>(iterations) * static_cast<double>(hn::Lanes(d));
}

// Reads in[0, n_in) and writes out[0, n_out) (both 64-byte aligned, multiples of 16 floats) in one pass, the
// writes spread evenly over the reads as a kernel's are; `stream`: non-temporal stores; `reverse`: blocks in
// descending order, so that a pass after a forward one starts on the data the caches still hold. Returns the
// sum read.
float Move(const float* in, size_t n_in, float* out, size_t n_out, bool stream, bool reverse) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  constexpr size_t kBlock = 1024;  // floats read between two runs of writes
  const size_t blocks = std::max<size_t>(1, (n_in + kBlock - 1) / kBlock);
  const auto v = hn::Set(d, 1.0f);
  auto s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
  for (size_t k = 0; k < blocks; ++k) {
    const size_t b = reverse ? blocks - 1 - k : k;
    const size_t r_end = std::min(n_in, (b + 1) * kBlock);
    for (size_t i = b * kBlock; i + 4 * N <= r_end; i += 4 * N) {
      s0 = hn::Add(s0, hn::Load(d, in + i));
      s1 = hn::Add(s1, hn::Load(d, in + i + N));
      s2 = hn::Add(s2, hn::Load(d, in + i + 2 * N));
      s3 = hn::Add(s3, hn::Load(d, in + i + 3 * N));
    }
    const size_t w_begin = n_out * b / blocks / 16 * 16, w_end = n_out * (b + 1) / blocks / 16 * 16;
    for (size_t i = w_begin; i < w_end; i += N) {
      if (stream) {
        hn::Stream(v, d, out + i);
      } else {
        hn::Store(v, d, out + i);
      }
    }
  }
  hwy::FlushStream();
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
HWY_EXPORT(AddLoop);
HWY_EXPORT(Move);

namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Seconds each thread spends in f(thread, threads) on `threads` threads, timed inside the thread after a barrier:
// waiting for a thread to start (on a loaded machine, a scheduler time slice) is left out, which only shortens
// the times and keeps the limit a lower bound. One thread runs on the caller, as the kernels do.
template <class F>
std::vector<double> Timed(int threads, const F& f) {
  std::vector<double> seconds(static_cast<size_t>(threads));
  if (threads == 1) {
    const double t0 = Now();
    f(0, 1);
    seconds[0] = Now() - t0;
    return seconds;
  }
#pragma omp parallel num_threads(threads)
  {
#pragma omp barrier
    const double t0 = Now();
    f(omp_get_thread_num(), omp_get_num_threads());
    seconds[static_cast<size_t>(omp_get_thread_num())] = Now() - t0;
  }
  return seconds;
}

// Whole 16-float (64-byte) units, rounded down: moving fewer bytes keeps the measured time a lower bound.
size_t Floats(double bytes) { return static_cast<size_t>(std::max(0.0, bytes) / 64.0) * 16; }

// [begin, end) of thread t's share of n floats, in 16-float units.
void Share(size_t n, int t, int threads, size_t* begin, size_t* end) {
  const size_t units = n / 16, nt = static_cast<size_t>(threads), ti = static_cast<size_t>(t);
  *begin = units * ti / nt * 16;
  *end = units * (ti + 1) / nt * 16;
}

float g_sink = 0;  // keeps the loops' results observable

}  // namespace

PeakMeter::PeakMeter(double read_bytes, double write_bytes)
    : read_(Floats(read_bytes)), write_(Floats(write_bytes)) {
  std::fill(read_.data(), read_.data() + read_.size(), 0.5f);
}

Peaks PeakMeter::Measure(int threads) {
  Peaks p;
  constexpr int64_t kIterations = 4000000;  // a few ms per run
  for (int kind = 0; kind < 2; ++kind) {
    double best = 0;
    for (int rep = 0; rep < 2; ++rep) {
      std::vector<double> lanes(static_cast<size_t>(threads));
      std::vector<float> sinks(static_cast<size_t>(threads));
      const std::vector<double> s = Timed(threads, [&](int t, int) {
        const float seed = static_cast<float>(t);
        const size_t i = static_cast<size_t>(t);
        lanes[i] = kind == 0 ? HWY_DYNAMIC_DISPATCH(FmaLoop)(kIterations, seed, &sinks[i])
                             : HWY_DYNAMIC_DISPATCH(AddLoop)(kIterations, seed, &sinks[i]);
      });
      double rate = 0;  // the threads' own rates summed: at least the rate they reach together
      for (size_t i = 0; i < lanes.size(); ++i) {
        rate += lanes[i] / s[i];
        g_sink += sinks[i];
      }
      best = std::max(best, rate / 1e9);
    }
    (kind == 0 ? p.gfma_per_s : p.gadd_per_s) = best;
  }
  const Peaks move = MeasureMove(threads);
  p.move_seconds = move.move_seconds;
  p.moved_bytes = move.moved_bytes;
  return p;
}

Peaks PeakMeter::MeasureMove(int threads) {
  Peaks p;
  p.move_seconds = 1e30;
  bool reverse = false;  // alternates: each pass starts where the one before ended, on the warmest data
  for (bool stream : {true, false}) {
    for (int rep = 0; rep < 2; ++rep, reverse = !reverse) {
      std::vector<float> sinks(static_cast<size_t>(threads));
      const std::vector<double> s = Timed(threads, [&](int t, int nt) {
        size_t rb, re, wb, we;
        Share(read_.size(), t, nt, &rb, &re);
        Share(write_.size(), t, nt, &wb, &we);
        sinks[static_cast<size_t>(t)] =
            HWY_DYNAMIC_DISPATCH(Move)(read_.data() + rb, re - rb, write_.data() + wb, we - wb, stream, reverse);
      });
      for (float v : sinks) g_sink += v;
      p.move_seconds = std::min(p.move_seconds, *std::max_element(s.begin(), s.end()));  // the slowest share
    }
  }
  p.moved_bytes = 4.0 * static_cast<double>(read_.size() + write_.size());
  return p;
}

}  // namespace bench
}  // namespace roialign
#endif  // HWY_ONCE
