// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Kernel::Run: data validation, then the plan, executed with the kernel selection resolved.
#include <memory>
#include <memory_resource>
#include <new>
#include <string>
#include <utility>

#include "core/messages.h"
#include "execution/arena.h"
#include "execution/execute.h"
#include "execution/parallel.h"
#include "execution/plan.h"
#include "execution/selected_kernel.h"
#include "execution/validate_data.h"
#include "core/library.h"

namespace roialign {
namespace {

// The call as a registered implementation receives it (C types; data already validated).
Status RunCustom(const internal::SelectedKernel& selected, const Params& params, const Inputs& inputs, void* output,
                 const internal::Threading& threading) {
  roialign_params p;
  roialign_params_init(&p);
  p.pooled_height = params.pooled_height;
  p.pooled_width = params.pooled_width;
  p.spatial_scale = params.spatial_scale;
  p.sampling_ratio = params.sampling_ratio;
  p.coordinate_mode = static_cast<roialign_coordinate_mode>(params.coordinate_mode);
  p.pool_mode = static_cast<roialign_pool_mode>(params.pool_mode);
  p.layout = static_cast<roialign_layout>(params.layout);
  p.dtype = static_cast<roialign_dtype>(params.dtype);
  roialign_problem rp{};
  rp.struct_size = sizeof(rp);
  rp.params = &p;
  rp.input = inputs.input;
  rp.batch = inputs.batch;
  rp.channels = inputs.channels;
  rp.height = inputs.height;
  rp.width = inputs.width;
  rp.rois = inputs.rois;
  rp.batch_indices = inputs.batch_indices;
  rp.num_rois = inputs.num_rois;
  rp.output = output;
  rp.num_threads = threading.pool != nullptr ? threading.pool->num_threads : threading.num_threads;
  rp.threadpool = threading.pool;
  return selected.custom(rp);
}

}  // namespace

const std::string& Kernel::name() const {
  static const std::string kEmpty;
  return selected_ ? selected_->name : kEmpty;
}

void Kernel::ReleaseWorkingMemory() const noexcept {
  if (selected_) selected_->memory.Trim();
}

namespace internal {

// Every Run: validation, then the plan on `threading`, its memory from the kernel's pool or, given an arena,
// all of it (plan and working memory) from the arena; a measuring arena stops before the first write.
Status RunOn(const Kernel& kernel, const Inputs& inputs, void* output, const Threading& threading, Arena* arena,
             bool measure_only) {
  Status s = ValidateThreading(threading);
  if (!s.ok()) return s;
  const SelectedKernel* selected = KernelAccess::Selected(kernel);
  if (selected == nullptr) {
    return Status(StatusCode::kInvalidArgument, "kernel is empty (not obtained from a successful Select)");
  }
  std::pmr::memory_resource* const heap = arena != nullptr ? arena : std::pmr::new_delete_resource();
  Problem problem;
  std::pmr::vector<RoiAxes> axes(heap);
  s = ValidateData(kernel.params(), inputs, output, &axes, &problem);
  if (!s.ok()) return s;
  if (problem.num_rois == 0 || problem.channels == 0 || selected->custom) {
    if (arena != nullptr && !measure_only && !arena->fits()) {
      return WorkspaceTooSmall(*arena, "roialign_workspace_size");
    }
    if (measure_only || problem.num_rois == 0 || problem.channels == 0) return Status::Ok();  // nothing to write
    return RunCustom(*selected, kernel.params(), inputs, output, threading);
  }
  try {
    const Plan plan = MakePlan(problem, selected->access, threading, heap);
    RunMemory memory(selected->memory, arena);
    ReserveWorkingMemory(problem, plan, memory.get());
    if (measure_only) return Status::Ok();
    if (arena != nullptr && !arena->fits()) return WorkspaceTooSmall(*arena, "roialign_workspace_size");
    // Everything is allocated: from here on the output is written, and nothing can fail.
    Execute(problem, plan, selected->fns, threading, memory.get());
  } catch (const std::bad_alloc&) {
    return OutOfMemory("working memory", selected->name);
  }
  return Status::Ok();
}

Status RunInArena(const Kernel& kernel, const Inputs& inputs, void* output, int32_t num_threads,
                  const ThreadPool* pool, Arena& arena, bool measure_only) {
  return StatusOrOutOfMemory(
      [&] { return RunOn(kernel, inputs, output, {pool != nullptr ? 0 : num_threads, pool}, &arena, measure_only); });
}

}  // namespace internal

Status Kernel::Run(const Inputs& inputs, void* output, int32_t num_threads) const {
  return internal::StatusOrOutOfMemory(
      [&] { return internal::RunOn(*this, inputs, output, {num_threads, nullptr}, nullptr, false); });
}

Status Kernel::Run(const Inputs& inputs, void* output, const ThreadPool& pool) const {
  return internal::StatusOrOutOfMemory(
      [&] { return internal::RunOn(*this, inputs, output, {0, &pool}, nullptr, false); });
}

}  // namespace roialign
