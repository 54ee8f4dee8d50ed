// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "execution/execute.h"

#include <hwy/cache_control.h>

#include <algorithm>
#include <cassert>

#include "core/enums.h"
#include "execution/layout_transforms.h"
#include "execution/parallel.h"
#include "execution/pool_roi.h"
#include "execution/rotated_table.h"

namespace roialign {
namespace internal {

void ReserveWorkingMemory(const Problem& problem, const Plan& plan, WorkingMemory& memory) {
  // Never shrinks the thread count: a multi-level call reserves for every level before running the first.
  const size_t threads = static_cast<size_t>(plan.threads);
  memory.per_thread.reserve(threads);
  while (memory.per_thread.size() < threads) memory.per_thread.emplace_back(memory.resource);
  const bool tiles = plan.access == PixelAccess::kCopied;
  const size_t staged_bytes = static_cast<size_t>(plan.staged_channels * problem.params.pooled_height *
                                                  problem.params.pooled_width * BytesOf(problem.params.dtype));
  for (size_t t = 0; t < threads; ++t) memory.per_thread[t].Prepare(problem, tiles, staged_bytes);
  memory.band_pixels.Reserve(static_cast<size_t>(plan.transform_elements * BytesOf(problem.params.dtype)));
  memory.rotated_table.Reserve(static_cast<size_t>(plan.rotated_table_bytes));
  if (!plan.partial_in_output) {
    memory.partial.Reserve(static_cast<size_t>(OutputElements(problem)));
  }
}

void Execute(const Problem& problem, const Plan& plan, const PerDType& fns, const Threading& threading,
             WorkingMemory& memory) noexcept {
  const int64_t C = problem.channels, H = problem.height, W = problem.width;
  const int64_t element_bytes = BytesOf(problem.params.dtype);
  const KernelFns& f = fns[static_cast<size_t>(problem.params.dtype)];
  assert(memory.per_thread.size() >= static_cast<size_t>(plan.threads));
  assert(memory.band_pixels.size() >= static_cast<size_t>(plan.transform_elements * element_bytes));
  // Rotated RoIs: the drivers read each sample's taps from the call's table.
  Problem tabulated = problem;
  if (plan.rotated_table_bytes > 0) FillRotatedTable(plan.threads, threading, memory.rotated_table.data(), &tabulated);
  PassContext ctx = {&tabulated, &plan, nullptr, &f, &fns[static_cast<size_t>(DType::kF32)],
                     static_cast<float*>(problem.output), nullptr};
  if (!plan.partial_in_output) {
    assert(memory.partial.size() >= static_cast<size_t>(OutputElements(problem)));
    ctx.partial = memory.partial.data();
  }
  const int64_t block_size = plan.channels_per_task, num_blocks = plan.channel_blocks;
  const PoolRoiFn driver = plan.rotated                              ? &PoolRotated
                           : plan.access == PixelAccess::kInPlace ? &PoolInPlace
                                                                   : &PoolPlanar;
  const bool streams = plan.stream_output || plan.staged_channels > 0;
  for (const PlannedPass& pass : plan.passes) {
    ctx.pass = &pass;
    ctx.band = nullptr;
    if (pass.transform) {
      const int64_t pixels = (pass.rows_end - pass.rows_begin) * W;
      const unsigned char* planes = static_cast<const unsigned char*>(problem.input) +
                                    (pass.image * C * H + pass.rows_begin) * W * element_bytes;
      TransposeMatrix(f.transpose, planes, H * W, C, pixels, memory.band_pixels.data(), C, plan.threads, threading);
      ctx.band = memory.band_pixels.data();
    }
    const std::pmr::vector<int64_t>& rois = pass.rois;
    const int64_t n = static_cast<int64_t>(rois.size());
    ParallelFor(n * num_blocks, plan.threads, threading, [&](int64_t task, int slot) {
      const int64_t block = task / n, k = rois[static_cast<size_t>(task % n)];
      const int64_t c_begin = block * block_size, c_end = std::min(C, c_begin + block_size);
      if (c_end == C) ZeroPaddedLanes(problem, k);
      if (f.whole_rois != nullptr) return f.whole_rois(problem, k, k + 1, c_begin, c_end);
      driver(ctx, k, c_begin, c_end, memory.per_thread[static_cast<size_t>(slot)]);
      // Orders the non-temporal stores before the caller's barrier.
      if (streams) hwy::FlushStream();
    });
  }
}

}  // namespace internal
}  // namespace roialign
