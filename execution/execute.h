// Runs a plan: per pass, the band transform (if any) and then the kernel on (channel block, RoI) tasks.
#ifndef ROIALIGN_EXECUTION_EXECUTE_H_
#define ROIALIGN_EXECUTION_EXECUTE_H_

#include "execution/plan.h"
#include "execution/working_memory.h"
#include "kernels/kernel_descriptor.h"
#include "kernels/problem.h"

namespace roialign {
namespace internal {

// Runs `plan` for `problem` with the built-in kernel `fn` on `threading` (the plan's thread count); transform passes use `transpose`, the block transposer
// of fn's ISA. All working memory is sized from `memory` before the first write to the output; throws
// std::bad_alloc (output untouched) when it cannot grow.
// Sizes `memory` for running `plan` on `problem` (never shrinking it); throws std::bad_alloc. After it has run for
// several (problem, plan) pairs, Execute of any of them allocates nothing.
void ReserveWorkingMemory(const Problem& problem, const Plan& plan, const PlannerNeeds& needs, WorkingMemory& memory);

void Execute(const Problem& problem, const Plan& plan, RoiAlignFn fn, TransposeBlockFn transpose,
             const PlannerNeeds& needs, const Threading& threading, WorkingMemory& memory);

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_EXECUTE_H_
