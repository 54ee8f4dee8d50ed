// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// kernel_calls: runs one kernel a given number of times on a scaled-down standard workload, or a loop of a known
// instruction count, inside a region that counters can find: bench/count_instructions.py counts what runs between
// the markers roialign_count_begin and roialign_count_end under qemu-user, and inside roialign_counted_region under
// callgrind. Start-up, the workload's construction, selection and a first untimed call stay outside: a whole
// process's count moves by tens of thousands of instructions from run to run (address randomization changes
// memcpy's and the loader's paths). Run with --help.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#include "bench/flags.h"
#include "bench/workloads.h"
#include "core/enums.h"

// The counted region's markers: kept out of line, so that each is a block of its own in qemu's log.
extern "C" __attribute__((noinline)) void roialign_count_begin() { __asm__ volatile("" ::: "memory"); }
extern "C" __attribute__((noinline)) void roialign_count_end() { __asm__ volatile("" ::: "memory"); }
// Everything `body` executes is counted (callgrind toggles collection on this function).
extern "C" __attribute__((noinline)) void roialign_counted_region(const std::function<void()>& body) {
  roialign_count_begin();
  body();
  roialign_count_end();
}

namespace roialign {
namespace bench {
namespace {

const char kHelp[] = R"(kernel_calls: run one roi_align kernel N times, for counting its instructions.

Usage:
  kernel_calls --workload=NAME --target=T --layout=L --dtype=D --calls=N
  kernel_calls --loop=N

  --workload  a standard workload (bench/workloads.h), scaled down: C/8, H/4, W/4, K/20 (at least 1), the RoIs'
              sizes /4 on an image /4, the same pooled size, sampling ratio and modes
  --full-channels  keep the workload's channels (only H, W, K and the RoIs scaled down)
  --target    a Select target: arm-neon, arm-sve, arm-sve2, x86-avx2, portable, generic (the scalar reference)...
  --layout    NCHW, NHWC, NCHW4c, NCHW8c, NCHW16c (blocked: f32 only)
  --dtype     F32, F16, BF16
  --calls     runs of the kernel inside the counted region, one thread each, after one untimed run (default 1)
  --loop=N    instead: N iterations of a loop of exactly 3 instructions (aarch64 and x86-64), the count a
              counter must reproduce
Prints one line: the kernel's name and the output elements of one call (or "loop N").
)";

// N iterations of add, subtract-and-set-flags, branch: 3 instructions each, whatever the compiler does around it.
long KnownLoop(long n) {
  long x = 0;
#if defined(__aarch64__)
  __asm__ volatile("1: add %0, %0, #1\n\tsubs %1, %1, #1\n\tb.ne 1b" : "+r"(x), "+r"(n) : : "cc");
#elif defined(__x86_64__)
  __asm__ volatile("1: add $1, %0\n\tsub $1, %1\n\tjnz 1b" : "+r"(x), "+r"(n) : : "cc");
#else
  (void)n;
  std::fprintf(stderr, "error: --loop has no known-count loop for this architecture\n");
  std::exit(2);
#endif
  return x;
}

// `spec` scaled down so that emulators and instrumenters finish a call in seconds; see kHelp.
WorkloadSpec ScaledDown(WorkloadSpec spec, bool full_channels) {
  if (!full_channels) spec.channels = std::max<int64_t>(1, spec.channels / 8);
  spec.height = std::max<int64_t>(1, spec.height / 4);
  spec.width = std::max<int64_t>(1, spec.width / 4);
  spec.num_rois = std::max<int64_t>(1, spec.num_rois / 20);
  spec.image_width /= 4;
  spec.image_height /= 4;
  spec.min_roi /= 4;
  spec.max_roi /= 4;
  return spec;
}

int Main(int argc, char** argv) {
  std::string workload = "default", target, layout_name = "NHWC", dtype_name = "F32";
  long calls = 1, loop = -1;
  bool full_channels = false;
  const int parsed = ReadFlags(argc, argv, kHelp, [&](const char* a) {
    if (const char* v = FlagValue(a, "--workload")) {
      workload = v;
    } else if (const char* v2 = FlagValue(a, "--target")) {
      target = v2;
    } else if (const char* v3 = FlagValue(a, "--layout")) {
      layout_name = v3;
    } else if (const char* v4 = FlagValue(a, "--dtype")) {
      dtype_name = v4;
    } else if (const char* v5 = FlagValue(a, "--calls")) {
      calls = std::atol(v5);
    } else if (std::string(a) == "--full-channels") {
      full_channels = true;
    } else if (const char* v6 = FlagValue(a, "--loop")) {
      loop = std::atol(v6);
    } else {
      return FlagResult::kUnknown;
    }
    return FlagResult::kTaken;
  });
  if (parsed >= 0) return parsed;
  if (loop >= 1) {
    long x = 0;
    roialign_counted_region([&] { x = KnownLoop(loop); });
    std::printf("loop %ld\n", x);
    return x == loop ? 0 : 1;
  }
  const WorkloadSpec* spec = FindWorkload(workload);
  Layout layout;
  DType dtype;
  if (spec == nullptr || target.empty() || !internal::ParseEnum(layout_name, &layout) ||
      !internal::ParseEnum(dtype_name, &dtype) || calls < 0) {
    std::fprintf(stderr, "bad arguments (see --help)\n");
    return 2;
  }
  const Workload w = MakeWorkload(ScaledDown(*spec, full_channels));
  const Selection k = SelectKernel(target, w.ParamsFor(layout, dtype));
  if (!k.ok()) {
    std::fprintf(stderr, "error: %s\n", k.status().message().c_str());
    return 1;
  }
  const Inputs in = w.InputsFor(layout, dtype);
  if (in.input == nullptr) {
    std::fprintf(stderr, "error: no %s map in %s\n", layout_name.c_str(), dtype_name.c_str());
    return 1;
  }
  // Room for the widest block's padded channels, in 4-byte elements whatever the dtype.
  AlignedBuffer out(static_cast<size_t>(w.spec.num_rois * ((w.spec.channels + 15) / 16 * 16) * w.spec.pooled *
                                        w.spec.pooled));
  Status status = k->Run(in, out.data(), 1);  // working memory and first-touch pages: not counted
  roialign_counted_region([&] {
    for (long c = 0; c < calls && status.ok(); ++c) status = k->Run(in, out.data(), 1);
  });
  if (!status.ok()) {
    std::fprintf(stderr, "error: %s\n", status.message().c_str());
    return 1;
  }
  std::printf("%s %lld\n", k->name().c_str(),
              static_cast<long long>(w.spec.num_rois * w.spec.channels * w.spec.pooled * w.spec.pooled));
  return 0;
}

}  // namespace
}  // namespace bench
}  // namespace roialign

int main(int argc, char** argv) { return roialign::bench::Main(argc, argv); }
