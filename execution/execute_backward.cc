// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "execution/execute_backward.h"

#include <algorithm>
#include <cassert>

#include "execution/plan.h"
#include "execution/rotated_table.h"

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
  // reach by the box: the call tabulates the taps once, with the exact rows each RoI, bin row and bin reaches.
  if (problem.params.roi_kind == RoiKind::kRotated && f.backward_scratch != nullptr) {
    plan.rotated_table_bytes = RotatedTableBytes(problem);
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
  if (plan.rotated_table_bytes > 0) FillRotatedTable(plan.threads, threading, memory.rotated_table.data(), &p);
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
