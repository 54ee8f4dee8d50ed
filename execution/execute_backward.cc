// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "execution/execute_backward.h"

#include <algorithm>
#include <cassert>
#include <climits>

#include "execution/plan.h"

namespace roialign {
namespace internal {

GradientRange BackwardPlan::Range(int64_t task, int64_t channels, int64_t height) const {
  const int64_t band = task % row_bands, group = task / row_bands % channel_groups;
  GradientRange r;
  r.image = task / (row_bands * channel_groups);
  // Even splits: group g holds channels [g * C / G, (g + 1) * C / G), band b rows likewise.
  r.c_begin = group * channels / channel_groups;
  r.c_end = (group + 1) * channels / channel_groups;
  r.y_begin = band * height / row_bands;
  r.y_end = (band + 1) * height / row_bands;
  r.stream = stream_dx;
  return r;
}

namespace {

constexpr int64_t kMaxRotatedTableBytes = 64 * 1024 * 1024;

// The table of rotated samples' taps in precision R: by RoI index, each RoI's offset and the rows its samples reach
// (FillRotatedSampleTaps), then every sample of the RoIs the problem runs, in run order.
int64_t ExtentsPerRoi(const Problem& problem) {
  return 1 + problem.params.pooled_height * (1 + problem.params.pooled_width);
}
template <typename R>
int64_t TableHead(const Problem& problem) {  // the offsets' and extents' bytes, rounded up to whole records
  const int64_t record = sizeof(RotatedSampleOf<R>);
  const int64_t head = problem.num_rois * (sizeof(int64_t) + ExtentsPerRoi(problem) * sizeof(RowExtent));
  return (head + record - 1) / record * record;
}
template <typename R>
double RotatedTableBytesOf(const Problem& problem) {
  const double bins = static_cast<double>(problem.params.pooled_height * problem.params.pooled_width);
  double samples = 0;
  for (int64_t i = 0; i < RunCount(problem); ++i) {
    const RoiAxesOf<R>& a = AxesOf<R>(problem, RunRoi(problem, i));
    samples += bins * static_cast<double>(a.gy.grid) * static_cast<double>(a.gx.grid);
  }
  return static_cast<double>(TableHead<R>(problem)) + samples * sizeof(RotatedSampleOf<R>);
}
double RotatedTableBytes(const Problem& problem) {
  return problem.params.dtype == DType::kF64 ? RotatedTableBytesOf<double>(problem)
                                             : RotatedTableBytesOf<float>(problem);
}

// Fills the table in `memory` (the plan's rotated_table_bytes) and points the problem at it: RoIs a chunk at a time
// on every thread.
template <typename R>
void FillRotatedTable(const BackwardPlan& plan, const Threading& threading, unsigned char* memory, Problem* problem) {
  int64_t* const first = reinterpret_cast<int64_t*>(memory);
  RowExtent* const extents = reinterpret_cast<RowExtent*>(first + problem->num_rois);
  const int64_t per_roi = ExtentsPerRoi(*problem);
  auto* const taps = reinterpret_cast<RotatedSampleOf<R>*>(memory + TableHead<R>(*problem));
  const int64_t PH = problem->params.pooled_height, PW = problem->params.pooled_width;
  const int64_t runs = RunCount(*problem);
  for (int64_t i = 0, at = 0; i < runs; ++i) {
    const int64_t k = RunRoi(*problem, i);
    const RoiAxesOf<R>& a = AxesOf<R>(*problem, k);
    first[k] = at;
    at += PH * PW * a.gy.grid * a.gx.grid;
  }
  constexpr int64_t kRoisPerTask = 16;
  const Problem& p = *problem;
  ParallelFor((runs + kRoisPerTask - 1) / kRoisPerTask, plan.threads, threading, [&](int64_t task, int) {
    for (int64_t i = task * kRoisPerTask; i < std::min(runs, (task + 1) * kRoisPerTask); ++i) {
      const int64_t k = RunRoi(p, i);
      FillRotatedSampleTaps(AxesOf<R>(p, k), PH, PW, p.height, p.width, taps + first[k], extents + k * per_roi);
    }
  });
  problem->rotated_first = first;
  problem->rotated_taps = taps;
  problem->rotated_extents = extents;
}

}  // namespace

BackwardPlan PlanBackward(const Problem& problem, const KernelFns& f, const Threading& threading) {
  // A task accumulates rows x W x channels in f32 (f64 for float64): at most 128 channels and about 2 MB, channels
  // last 256 and 4 MB, in bands of several rows (a sample's taps span two rows, and each band a bin row reaches
  // loads the bin's dY again), held in L2 and the core's share of L3 while every RoI of the image adds to it
  // (docs/measurements.md has the sizes tried). Channels last, a bin's dY is one run of C elements: one group of
  // 256 reads it in one piece and visits each RoI once, where two groups of 128 each visit every RoI. Four tasks
  // per thread even out ranges that RoIs reach unevenly.
  constexpr int64_t kTasksPerThread = 4;
  const bool channels_last = problem.params.layout == Layout::kNHWC;
  const int64_t max_channels = channels_last ? 256 : 128;
  const int64_t accumulator_limit = (channels_last ? 4 : 2) * 1024 * 1024;
  const int64_t accumulator_bytes = problem.params.dtype == DType::kF64 ? 8 : 4;  // f64 accumulates in double
  const int64_t N = std::max<int64_t>(problem.batch, 1), C = std::max<int64_t>(problem.channels, 1);
  const int64_t H = std::max<int64_t>(problem.height, 1), W = std::max<int64_t>(problem.width, 1);
  BackwardPlan plan;
  plan.threads = ResolveThreadCount(threading, N * C * H);
  plan.channel_groups = (C + max_channels - 1) / max_channels;
  const int64_t group = (C + plan.channel_groups - 1) / plan.channel_groups;
  const int64_t rows = std::max<int64_t>(accumulator_limit / (accumulator_bytes * W * group), 1);
  plan.row_bands = (H + rows - 1) / rows;
  const int64_t wanted = kTasksPerThread * plan.threads;
  if (plan.tasks(N) < wanted) plan.row_bands = std::min(H, (wanted + N * plan.channel_groups - 1) / (N * plan.channel_groups));
  if (plan.tasks(N) < wanted) plan.channel_groups = std::min(C, (wanted + N * plan.row_bands - 1) / (N * plan.row_bands));
  // dX is written once, by ranges, and read by the caller: one larger than the last-level cache goes to memory
  // without each line being read first.
  plan.stream_dx = static_cast<double>(N * StoredChannels(problem.params.layout, C) * H * W) *
                       static_cast<double>(BytesOf(problem.params.dtype)) > kStreamOutputBytes;
  // Every range a rotated bin's box reaches would find its samples' taps again, and could only bound the rows they
  // reach by the box: the call tabulates the taps once, with the exact rows each RoI, bin row and bin reaches, in a
  // table of at most kMaxRotatedTableBytes (larger ones: each range finds its own).
  if (problem.params.roi_kind == RoiKind::kRotated && f.backward_scratch != nullptr && H <= INT32_MAX &&
      W <= INT32_MAX) {  // the table holds 32-bit indices
    const double bytes = RotatedTableBytes(problem);
    if (bytes <= static_cast<double>(kMaxRotatedTableBytes)) plan.rotated_table_bytes = static_cast<int64_t>(bytes);
  }
  if (f.backward_scratch != nullptr) {
    // The largest range: the even split's ranges differ by at most one row and one channel.
    const GradientRange largest = {0, 0, (C + plan.channel_groups - 1) / plan.channel_groups, 0,
                                   (H + plan.row_bands - 1) / plan.row_bands};
    plan.scratch_floats = f.backward_scratch(problem, largest);
  }
  return plan;
}

void ReserveBackwardMemory(const BackwardPlan& plan, WorkingMemory& memory) {
  const size_t threads = static_cast<size_t>(plan.threads);
  memory.per_thread.reserve(threads);
  while (memory.per_thread.size() < threads) memory.per_thread.emplace_back(memory.resource);
  for (size_t t = 0; t < threads; ++t) memory.per_thread[t].gradient.Reserve(static_cast<size_t>(plan.scratch_floats));
  memory.rotated_table.Reserve(static_cast<size_t>(plan.rotated_table_bytes));
}

Problem TabulatedProblem(const Problem& problem, const BackwardPlan& plan, const Threading& threading,
                         WorkingMemory& memory) noexcept {
  Problem p = problem;
  if (plan.rotated_table_bytes > 0) {
    if (p.params.dtype == DType::kF64) {
      FillRotatedTable<double>(plan, threading, memory.rotated_table.data(), &p);
    } else {
      FillRotatedTable<float>(plan, threading, memory.rotated_table.data(), &p);
    }
  }
  return p;
}

void ExecuteBackward(const Problem& problem, const BackwardPlan& plan, const KernelFns& f, const Threading& threading,
                     WorkingMemory& memory) noexcept {
  assert(f.whole_rois_backward != nullptr && problem.grad_input != nullptr);
  assert(memory.per_thread.size() >= static_cast<size_t>(plan.threads));
  const int64_t N = problem.batch, C = problem.channels, H = problem.height;
  if (N == 0 || C == 0 || H == 0 || problem.width == 0) return;  // dX has no element
  const Problem p = TabulatedProblem(problem, plan, threading, memory);
  ParallelFor(plan.tasks(N), plan.threads, threading, [&](int64_t task, int slot) {
    const BackwardScratch scratch = {memory.per_thread[static_cast<size_t>(slot)].gradient.data(),
                                     plan.scratch_floats};
    f.whole_rois_backward(p, plan.Range(task, C, H), scratch);
  });
}

}  // namespace internal
}  // namespace roialign
