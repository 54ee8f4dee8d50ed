// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "tbb_threadpool.h"

#include <algorithm>
#include <cstdint>

#include "tbb/parallel_for.h"
#include "tbb/task_arena.h"

namespace roialign_openvino {
namespace {

void ParallelFor(void* /*pool_context*/, int64_t count, roialign_task_fn task, void* task_context) {
  // roialign hands out at most num_threads tasks, each of which claims work until none is left, so one task per
  // index with a simple partitioner is the right grain.
  tbb::parallel_for(
      tbb::blocked_range<int64_t>(0, count, 1),
      [&](const tbb::blocked_range<int64_t>& r) {
        for (int64_t i = r.begin(); i != r.end(); ++i) task(task_context, i);
      },
      tbb::simple_partitioner());
}

}  // namespace

roialign_threadpool CurrentArenaThreadpool() {
  roialign_threadpool pool;
  roialign_threadpool_init(&pool);
  pool.parallel_for = ParallelFor;
  pool.pool_context = nullptr;
  pool.num_threads = std::max(1, tbb::this_task_arena::max_concurrency());
  return pool;
}

}  // namespace roialign_openvino
