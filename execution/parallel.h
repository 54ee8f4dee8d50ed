// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The one threading helper: independent tasks on OpenMP threads, or on the caller's thread pool.
#ifndef ROIALIGN_EXECUTION_PARALLEL_H_
#define ROIALIGN_EXECUTION_PARALLEL_H_

#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

#include "core/library.h"

namespace roialign {
namespace internal {

template <typename Signature>
class FunctionRef;

// A non-owning reference to a callable: unlike std::function it never allocates, so launching a call's tasks cannot
// fail once its memory is acquired. Valid only while the callable lives: pass it down the stack, never store it.
template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>>>
  FunctionRef(F&& f) noexcept  // NOLINT(google-explicit-constructor): binds lambdas at call sites
      : callable_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        invoke_([](void* c, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(c))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return invoke_(callable_, std::forward<Args>(args)...); }

 private:
  void* callable_;
  R (*invoke_)(void*, Args...);
};

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
