// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "execution/execute_backward.h"

#include <algorithm>
#include <cassert>

namespace roialign {
namespace internal {

GradientRange GradientSplit::Range(int64_t task, int64_t channels, int64_t height) const {
  const int64_t band = task % row_bands, group = task / row_bands % channel_groups;
  GradientRange r;
  r.image = task / (row_bands * channel_groups);
  // Even splits: group g holds channels [g * C / G, (g + 1) * C / G), band b rows likewise.
  r.c_begin = group * channels / channel_groups;
  r.c_end = (group + 1) * channels / channel_groups;
  r.y_begin = band * height / row_bands;
  r.y_end = (band + 1) * height / row_bands;
  return r;
}

GradientSplit SplitGradient(int64_t batch, int64_t channels, int64_t height, int threads) {
  // Four tasks per thread even out ranges that RoIs reach unevenly. Channels split first: a range of rows repeats
  // the walk over the image's RoIs that a range of channels shares.
  constexpr int64_t kTasksPerThread = 4;
  const int64_t wanted = kTasksPerThread * std::max(threads, 1);
  const int64_t per_image = (wanted + batch - 1) / std::max<int64_t>(batch, 1);
  GradientSplit split;
  split.channel_groups = std::clamp<int64_t>(per_image, 1, std::max<int64_t>(channels, 1));
  split.row_bands =
      std::clamp<int64_t>((per_image + split.channel_groups - 1) / split.channel_groups, 1, std::max<int64_t>(height, 1));
  return split;
}

void ExecuteBackward(const Problem& problem, const KernelFns& f, const Threading& threading) noexcept {
  assert(f.whole_rois_backward != nullptr && problem.grad_input != nullptr);
  const int64_t N = problem.batch, C = problem.channels, H = problem.height;
  if (N == 0 || C == 0 || H == 0 || problem.width == 0) return;  // dX has no element
  const int threads = ResolveThreadCount(threading, N * C * H);
  const GradientSplit split = SplitGradient(N, C, H, threads);
  ParallelFor(split.tasks(N), threads, threading, [&](int64_t task, int) {
    f.whole_rois_backward(problem, split.Range(task, C, H));
  });
}

}  // namespace internal
}  // namespace roialign
