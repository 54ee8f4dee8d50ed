// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The backward's driver: dX split into ranges that tasks own (docs/semantics.md#backward), so that no two tasks
// write one element and each element's sum keeps its one order, whatever the split and the thread count.
#ifndef ROIALIGN_EXECUTION_EXECUTE_BACKWARD_H_
#define ROIALIGN_EXECUTION_EXECUTE_BACKWARD_H_

#include <cstdint>

#include "execution/parallel.h"
#include "execution/working_memory.h"
#include "kernels/kernel_descriptor.h"
#include "kernels/problem.h"

namespace roialign {
namespace internal {

// How dX of one map is split: every image into `channel_groups` channel ranges by `row_bands` row ranges, run on
// `threads` threads, each task with `scratch_floats` of scratch.
struct BackwardPlan {
  int64_t channel_groups = 1, row_bands = 1;
  int threads = 1;
  int64_t scratch_floats = 0;
  bool stream_dx = false;  // each range written with non-temporal stores
  // Rotated RoIs: the bytes of the call's table of their samples' taps (Problem::rotated_taps, after each RoI's
  // offset into it), filled once before the tasks run; 0: no table, each task finds the taps of the samples it
  // visits.
  int64_t rotated_table_bytes = 0;
  int64_t tasks(int64_t batch) const { return batch * channel_groups * row_bands; }
  // The range of task `task` (in [0, tasks(batch))) of a map of `channels` x `height`.
  GradientRange Range(int64_t task, int64_t channels, int64_t height) const;
};

// A split whose tasks' f32 accumulators stay near the L2 cache and that gives every thread several tasks.
BackwardPlan PlanBackward(const Problem& problem, const KernelFns& f, const Threading& threading);

// Per-thread scratch for `plan`; throws std::bad_alloc.
void ReserveBackwardMemory(const BackwardPlan& plan, WorkingMemory& memory);

// `problem` as the plan's ranges run it: with the plan's table of rotated samples' taps filled in `memory` (on the
// plan's threads) when it has one. `memory` must have been reserved for the plan.
Problem TabulatedProblem(const Problem& problem, const BackwardPlan& plan, const Threading& threading,
                         WorkingMemory& memory) noexcept;

// Writes all of problem.grad_input (every element, padded lanes included) with f.whole_rois_backward. `memory` must
// have been reserved for the plan: allocates nothing and cannot fail.
void ExecuteBackward(const Problem& problem, const BackwardPlan& plan, const KernelFns& f, const Threading& threading,
                     WorkingMemory& memory) noexcept;

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_EXECUTE_BACKWARD_H_
