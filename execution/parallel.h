// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The one threading helper: independent tasks on OpenMP threads, or on the caller's thread pool.
#ifndef ROIALIGN_EXECUTION_PARALLEL_H_
#define ROIALIGN_EXECUTION_PARALLEL_H_

#include <cstdint>
#include "execution/function_ref.h"
#include "core/library.h"

namespace roialign {
namespace internal {

// Where a call's parallel work runs: the caller's pool when `pool` is set (validated: parallel_for non-null,
// num_threads >= 1), else OpenMP threads (num_threads <= 0: OpenMP's default; one thread in a build without
// OpenMP).
struct Threading {
  int32_t num_threads = 0;
  const roialign_threadpool* pool = nullptr;
};

// OK without a pool; else INVALID_ARGUMENT, naming the problem, for a null parallel_for or num_threads < 1.
Status ValidateThreading(const Threading& threading);

// Threads a call will use, never more than `max_useful`.
int ResolveThreadCount(const Threading& threading, int64_t max_useful);

// Runs body(task, slot) for every task in [0, num_tasks) on `threads` threads; slot < threads names the working
// memory the task may use, and no two tasks run at once with the same slot. Tasks must write disjoint memory;
// which thread or slot runs a task never changes a result. With a pool, every call goes through its
// parallel_for and no thread of roialign's own starts. Allocates nothing (but libgomp may, see
// docs/errors-and-limits.md).
void ParallelFor(int64_t num_tasks, int threads, const Threading& threading, FunctionRef<void(int64_t, int)> body);

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_PARALLEL_H_
