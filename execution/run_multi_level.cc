// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// MultiLevelKernel::Run: every level's shape and every RoI on its level validated first, then the RoIs grouped
// by level (a counting sort) and each level's group run as one single-level plan on that level's map. Kernels
// write each RoI's output in its own slot, so results are in input order with no scatter and no extra pass.
#include <cstring>
#include <memory>
#include <memory_resource>
#include <new>
#include <string>
#include <vector>

#include "core/enums.h"
#include "core/messages.h"
#include "execution/arena.h"
#include "execution/execute.h"
#include "execution/parallel.h"
#include "execution/plan.h"
#include "execution/pyramid_levels.h"
#include "execution/selected_kernel.h"
#include "execution/validate_data.h"
#include "kernels/roi_geometry.h"
#include "core/library.h"

namespace roialign {
namespace internal {
namespace {

std::string LevelPrefix(size_t l) { return "level " + std::to_string(l) + ": "; }

// The RoIs' levels (kNotPooled for those no level pools), or why the call is invalid.
Status AssignLevels(const MultiLevelParams& mp, const MultiLevelInputs& in, std::pmr::vector<int32_t>* levels) {
  const int64_t K = in.num_rois;
  const int32_t L = static_cast<int32_t>(mp.scales.size());
  levels->resize(static_cast<size_t>(K));
  if (mp.level_rule == LevelRule::kGiven) {
    for (int64_t k = 0; k < K; ++k) {
      const int32_t l = in.levels[k];
      if (l < 0 || l >= L) {
        return Invalid("roi " + std::to_string(k) + ": level " + std::to_string(l) + " is outside [0, " +
                       std::to_string(L) + ")");
      }
      (*levels)[static_cast<size_t>(k)] = l;
    }
    return Status::Ok();
  }
  const int32_t k_min = mp.level_rule == LevelRule::kScale ? FinestLevel(mp) : 0;
  for (int64_t k = 0; k < K; ++k) {
    // The box only: the batch index is not validated yet (CheckRoi comes after), and converting a NaN one to an
    // integer would be undefined.
    const float* box = in.rois + (in.batch_indices != nullptr ? 4 * k : 5 * k + 1);
    (*levels)[static_cast<size_t>(k)] = LevelOfBox(mp, k_min, box[0], box[1], box[2], box[3]);
  }
  return Status::Ok();
}

}  // namespace

// Every multi-level Run; its memory as in RunOn (run.cc): the heap and the kernel's pool, or all from `arena`.
Status RunMultiLevelOn(const MultiLevelKernel& kernel, const MultiLevelInputs& in, void* output,
                       const Threading& threading, Arena* arena, bool measure_only) {
  std::pmr::memory_resource* const heap = arena != nullptr ? arena : std::pmr::new_delete_resource();
  Status s = ValidateThreading(threading);
  if (!s.ok()) return s;
  const SelectedKernel* selected = KernelAccess::Selected(KernelAccess::Inner(kernel));
  if (selected == nullptr) {
    return Invalid("multi-level kernel is empty (not obtained from a successful SelectMultiLevel)");
  }
  const MultiLevelParams& mp = kernel.params();
  const size_t L = mp.scales.size();
  if (in.num_maps != static_cast<int32_t>(L)) {
    return Invalid("got " + std::to_string(in.num_maps) + " maps; the kernel has " + std::to_string(L) + " levels");
  }
  if (in.maps == nullptr) return Invalid("maps is null");
  const int64_t K = in.num_rois;
  if (mp.level_rule == LevelRule::kGiven && K > 0 && in.levels == nullptr) {
    return Invalid("level rule GIVEN needs levels (one int32 per RoI), but levels is null");
  }
  if (mp.level_rule != LevelRule::kGiven && in.levels != nullptr) {
    return Invalid(std::string("levels are given, but the level rule is ") + ToString(mp.level_rule) +
                   " (levels are read with the rule GIVEN only)");
  }

  // Each level's attributes and call, and its shape checked.
  std::pmr::vector<Params> params(L, mp.params, heap);
  std::pmr::vector<Inputs> inputs(L, heap);
  for (size_t l = 0; l < L; ++l) {
    params[l].spatial_scale = mp.scales[l];
    inputs[l] = {in.maps[l].input, in.batch, in.channels, in.maps[l].height, in.maps[l].width, in.rois,
                 in.batch_indices, K};
    s = CheckShape(params[l], inputs[l], output);
    if (!s.ok()) return Invalid(LevelPrefix(l) + s.message());
  }

  std::pmr::vector<int32_t> levels(heap);
  s = AssignLevels(mp, in, &levels);
  if (!s.ok()) return s;
  // Every RoI checked on its own level's map and scale; one not pooled only for its batch index and coordinates.
  std::pmr::vector<RoiTotals> totals(L, heap);
  std::pmr::vector<RoiAxes> axes(static_cast<size_t>(K), heap);  // each RoI's geometry on its own level
  std::pmr::vector<int64_t> counts(L + 1, 0, heap);  // counts[L]: RoIs not pooled
  int64_t work = 0;
  for (int64_t k = 0; k < K; ++k) {
    const int32_t l = levels[static_cast<size_t>(k)];
    if (l == kNotPooled) {
      RoiTotals unused;
      int64_t no_work = 0;
      s = CheckRoi(params[0], inputs[0], k, &unused, &no_work, &axes[static_cast<size_t>(k)]);
      ++counts[L];
    } else {
      s = CheckRoi(params[static_cast<size_t>(l)], inputs[static_cast<size_t>(l)], k,
                   &totals[static_cast<size_t>(l)], &work, &axes[static_cast<size_t>(k)]);
      ++counts[static_cast<size_t>(l)];
    }
    if (!s.ok()) return s;
  }
  const char* const size_function = "roialign_multi_level_workspace_size";
  if (K == 0 || in.channels == 0) {  // nothing to write
    if (arena != nullptr && !measure_only && !arena->fits()) return WorkspaceTooSmall(*arena, size_function);
    return Status::Ok();
  }

  try {
    // RoI indices grouped by level, in input order within a level (the planner orders them for locality).
    std::pmr::vector<int64_t> begin(L + 1, 0, heap), order(static_cast<size_t>(K), heap);
    for (size_t l = 1; l <= L; ++l) begin[l] = begin[l - 1] + counts[l - 1];
    std::pmr::vector<int64_t> next(begin, heap);
    for (int64_t k = 0; k < K; ++k) {
      const int32_t l = levels[static_cast<size_t>(k)];
      order[static_cast<size_t>(next[l == kNotPooled ? L : static_cast<size_t>(l)]++)] = k;
    }
    std::pmr::vector<Problem> problems(L, heap);
    std::pmr::vector<Plan> plans(heap);
    plans.reserve(L);
    RunMemory memory(selected->memory, arena);
    for (size_t l = 0; l < L; ++l) {
      if (counts[l] == 0) {
        plans.emplace_back(heap);
        continue;
      }
      FillProblem(params[l], inputs[l], output, totals[l], axes.data(), &problems[l]);
      problems[l].roi_subset = order.data() + begin[l];
      problems[l].subset_size = counts[l];
      plans.push_back(MakePlan(problems[l], selected->access, threading, heap));
      ReserveWorkingMemory(problems[l], plans[l], memory.get());
    }
    if (measure_only) return Status::Ok();
    if (arena != nullptr && !arena->fits()) return WorkspaceTooSmall(*arena, size_function);
    // Everything is allocated: from here on the output is written.
    const size_t roi_bytes = static_cast<size_t>(StoredChannels(mp.params.layout, in.channels) *
                                                 mp.params.pooled_height * mp.params.pooled_width *
                                                 BytesOf(mp.params.dtype));
    for (int64_t i = begin[L]; i < K; ++i) {  // zero is +0.0 in every dtype
      std::memset(static_cast<unsigned char*>(output) + static_cast<size_t>(order[static_cast<size_t>(i)]) * roi_bytes,
                  0, roi_bytes);
    }
    for (size_t l = 0; l < L; ++l) {
      if (counts[l] == 0) continue;
      Execute(problems[l], plans[l], selected->fns, threading, memory.get());
    }
  } catch (const std::bad_alloc&) {
    return OutOfMemory("working memory", selected->name);
  }
  return Status::Ok();
}

Status RunMultiLevelInArena(const MultiLevelKernel& kernel, const MultiLevelInputs& inputs, void* output,
                            int32_t num_threads, const ThreadPool* pool, Arena& arena, bool measure_only) {
  return StatusOrOutOfMemory([&] {
    return RunMultiLevelOn(kernel, inputs, output, {pool != nullptr ? 0 : num_threads, pool}, &arena, measure_only);
  });
}

}  // namespace internal

Status MultiLevelKernel::Run(const MultiLevelInputs& inputs, void* output, int32_t num_threads) const {
  return internal::StatusOrOutOfMemory(
      [&] { return internal::RunMultiLevelOn(*this, inputs, output, {num_threads, nullptr}, nullptr, false); });
}

Status MultiLevelKernel::Run(const MultiLevelInputs& inputs, void* output, const ThreadPool& pool) const {
  return internal::StatusOrOutOfMemory(
      [&] { return internal::RunMultiLevelOn(*this, inputs, output, {0, &pool}, nullptr, false); });
}

}  // namespace roialign
