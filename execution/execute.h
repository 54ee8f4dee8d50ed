// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Runs a plan: per pass, the band transform (if any), then its (channel block, RoI) tasks on threads.
#ifndef ROIALIGN_EXECUTION_EXECUTE_H_
#define ROIALIGN_EXECUTION_EXECUTE_H_

#include "execution/plan.h"
#include "execution/working_memory.h"
#include "kernels/kernel_descriptor.h"
#include "kernels/problem.h"

namespace roialign {
namespace internal {

// Sizes `memory` for running `plan` on `problem`, never shrinking it; throws std::bad_alloc, after which `memory` is
// still consistent (a buffer that failed to grow is empty). A call reserves for every plan it will execute before
// it writes any output.
void ReserveWorkingMemory(const Problem& problem, const Plan& plan, WorkingMemory& memory);

// Runs `plan` for `problem` with one target's built-in functions `fns` (indexed by dtype) on `threading` (the
// plan's thread count). `memory` must have been reserved for this (problem, plan): Execute allocates nothing and
// cannot fail, so the output is either untouched (an earlier step failed) or complete.
void Execute(const Problem& problem, const Plan& plan, const PerDType& fns, const Threading& threading,
             WorkingMemory& memory) noexcept;

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_EXECUTE_H_
