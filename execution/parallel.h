// The one threading helper: OpenMP over independent tasks.
#ifndef ROIALIGN_EXECUTION_PARALLEL_H_
#define ROIALIGN_EXECUTION_PARALLEL_H_

#include <cstdint>
#include <functional>

namespace roialign {
namespace internal {

// Threads a call will use: num_threads <= 0 means OpenMP's default; never more than `max_useful`.
int ResolveThreadCount(int32_t num_threads, int64_t max_useful);

// Runs body(task, thread_index) for every task in [0, num_tasks) on `threads` threads (thread_index <
// threads). Tasks must write disjoint memory; which thread runs a task never changes a result.
void ParallelFor(int64_t num_tasks, int threads, const std::function<void(int64_t, int)>& body);

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_PARALLEL_H_
