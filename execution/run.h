// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The one run path of every call, single- or multi-level: validate the data, plan, reserve every buffer, execute.
// A single-level call is the one-level case: one map, every RoI pooled from it, no level rule.
#ifndef ROIALIGN_EXECUTION_RUN_H_
#define ROIALIGN_EXECUTION_RUN_H_

#include <cstdint>

#include "core/library.h"
#include "execution/arena.h"
#include "execution/parallel.h"
#include "execution/selected_kernel.h"

namespace roialign {
namespace internal {

// What a call runs: the selected implementation, its attributes and, for a multi-level kernel, its levels (null
// for a single-level one, whose map is pooled with params.spatial_scale).
struct Operator {
  const SelectedKernel* selected;
  const Params& params;
  const MultiLevelParams* pyramid;
};
inline Operator OperatorOf(const KernelHandle& k) { return {KernelAccess::Selected(k), k.params(), nullptr}; }
inline Operator OperatorOf(const PyramidKernelHandle& k) {
  return {KernelAccess::Selected(KernelAccess::Inner(k)), k.params().params, &k.params()};
}

// The caller's data of one call: `num_maps` maps of one batch and channel count (a single-level call: one).
using CallInputs = MultiLevelInputs;

// A backward call's gradients: dY in the output's shape, and one dX per map in the map's (num_maps pointers).
struct Gradients {
  const void* output = nullptr;
  void* const* inputs = nullptr;
};

// Validates everything the data can get wrong, then pools every RoI into its slot of `output` or, given
// `gradients` (and `output` null), writes every map's dX from dY (docs/semantics.md#backward). Its memory comes
// from the kernel's pool and the heap or, given an arena, all of it (plan and working memory) from the arena; with
// measure_only it stops before the first write, leaving in the arena the bytes a run needs. On error `output` is
// untouched. Throws std::bad_alloc only before the first write.
Status RunCall(const Operator& op, const CallInputs& inputs, void* output, const Threading& threading, Arena* arena,
               bool measure_only, const Gradients* gradients = nullptr);

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_RUN_H_
