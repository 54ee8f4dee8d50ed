// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "execution/parallel.h"

#include <algorithm>
#include <atomic>
#include <string>

#ifdef ROIALIGN_WITH_OPENMP
#include <omp.h>
#endif

namespace roialign {
namespace internal {
namespace {

// One pool task per slot; each takes the next unclaimed task until none is left. Tasks vary by orders of
// magnitude (RoI sizes), so claiming them one by one balances the load as OpenMP's dynamic schedule does,
// and the slot index gives each concurrently running task its own working memory.
struct PoolLoop {
  FunctionRef<void(int64_t, int)> body;
  int64_t num_tasks;
  std::atomic<int64_t> next{0};
};

void RunSlot(void* context, int64_t slot) {
  PoolLoop& loop = *static_cast<PoolLoop*>(context);
  for (int64_t t = loop.next.fetch_add(1, std::memory_order_relaxed); t < loop.num_tasks;
       t = loop.next.fetch_add(1, std::memory_order_relaxed)) {
    loop.body(t, static_cast<int>(slot));
  }
}

}  // namespace

Status ValidateThreading(const Threading& threading) {
  const roialign_threadpool* pool = threading.pool;
  if (pool == nullptr) return Status::Ok();
  if (pool->parallel_for == nullptr) {
    return Status(StatusCode::kInvalidArgument, "thread pool has no parallel_for function");
  }
  if (pool->num_threads < 1) {
    return Status(StatusCode::kInvalidArgument,
                  "thread pool num_threads must be >= 1 (got " + std::to_string(pool->num_threads) + ")");
  }
  return Status::Ok();
}

int ResolveThreadCount(const Threading& threading, int64_t max_useful) {
  int64_t threads = 1;  // without OpenMP, the calling thread only
  if (threading.pool != nullptr) {
    threads = threading.pool->num_threads;
  } else {
#ifdef ROIALIGN_WITH_OPENMP
    threads = threading.num_threads > 0 ? threading.num_threads : omp_get_max_threads();
#endif
  }
  threads = std::min<int64_t>(threads, std::max<int64_t>(max_useful, 1));
  return static_cast<int>(std::max<int64_t>(threads, 1));
}

void ParallelFor(int64_t num_tasks, int threads, const Threading& threading, FunctionRef<void(int64_t, int)> body) {
  if (num_tasks <= 0) return;
  if (threading.pool != nullptr) {
    PoolLoop loop{body, num_tasks};
    const int64_t slots = std::min<int64_t>(std::max(threads, 1), num_tasks);
    threading.pool->parallel_for(threading.pool->pool_context, slots, &RunSlot, &loop);
    return;
  }
#ifdef ROIALIGN_WITH_OPENMP
  if (threads > 1 && num_tasks > 1) {
    // Dynamic scheduling: RoI sizes vary by orders of magnitude, so equal task counts are not equal work.
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (int64_t t = 0; t < num_tasks; ++t) body(t, omp_get_thread_num());
    return;
  }
#endif
  for (int64_t t = 0; t < num_tasks; ++t) body(t, 0);
}

}  // namespace internal
}  // namespace roialign
