// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The run path: every level's shape and every RoI on its level validated first, then (multi-level) the RoIs grouped
// by level with a counting sort and each level's group planned on that level's map. Kernels write each RoI's output
// in its own slot, so results are in input order with no scatter and no extra pass.
#include "execution/run.h"

#include <array>
#include <cstring>
#include <memory_resource>
#include <new>
#include <optional>
#include <string>
#include <type_traits>

#include "core/enums.h"
#include "core/messages.h"
#include "execution/execute.h"
#include "execution/execute_backward.h"
#include "execution/plan.h"
#include "execution/pyramid_levels.h"
#include "execution/validate_data.h"
#include "kernels/roi_geometry.h"

namespace roialign {
namespace internal {
namespace {

// Each level's T, constructed only for the levels a call has (most calls have one), so that a call does not
// construct ROIALIGN_MAX_LEVELS of each.
template <typename T>
class PerLevel {
  static_assert(std::is_trivially_destructible_v<T>, "the levels are never destroyed");

 public:
  T& Add(const T& value) { return *::new (static_cast<void*>(&slots_[size_++])) T(value); }
  T& Add() { return *::new (static_cast<void*>(&slots_[size_++])) T(); }
  T& operator[](size_t level) { return *std::launder(reinterpret_cast<T*>(&slots_[level])); }

 private:
  struct alignas(T) Slot {
    unsigned char bytes[sizeof(T)];
  };
  Slot slots_[ROIALIGN_MAX_LEVELS];
  size_t size_ = 0;
};

// The call as a registered implementation receives it (C types; data already validated).
Status RunCustom(const SelectedKernel& selected, const Params& params, const Inputs& inputs, void* output,
                 const Threading& threading) {
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
  rp.rois_f64 = inputs.rois_f64;
  p.spatial_scale_f64 = params.dtype == DType::kF64 ? ScaleOf<double>(params) : 0.0;
  rp.batch_indices = inputs.batch_indices;
  rp.num_rois = inputs.num_rois;
  rp.output = output;
  rp.num_threads = threading.pool != nullptr ? threading.pool->num_threads : threading.num_threads;
  rp.threadpool = threading.pool;
  return selected.custom(rp);
}

// The level attributes a multi-level call's data must agree with: the map count and the given levels.
Status CheckPyramidInputs(const MultiLevelParams& mp, const CallInputs& in) {
  const size_t L = mp.scales.size();
  if (in.num_maps != static_cast<int32_t>(L)) {
    return Invalid("got " + std::to_string(in.num_maps) + " maps; the kernel has " + std::to_string(L) + " levels");
  }
  if (in.maps == nullptr) return Invalid("maps is null");
  if (mp.level_rule == LevelRule::kGiven && in.num_rois > 0 && in.levels == nullptr) {
    return Invalid("level rule GIVEN needs levels (one int32 per RoI), but levels is null");
  }
  if (mp.level_rule != LevelRule::kGiven && in.levels != nullptr) {
    return Invalid(std::string("levels are given, but the level rule is ") + EnumName(mp.level_rule) +
                   " (levels are read with the rule GIVEN only)");
  }
  return Status::Ok();
}

// The RoIs' levels (kNotPooled for those no level pools), or why the call is invalid.
Status AssignLevels(const MultiLevelParams& mp, RoiKind kind, const CallInputs& in,
                    std::pmr::vector<int32_t>* levels) {
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
    // The box only: the batch index is not validated yet (CheckRois comes after), and converting a NaN one to an
    // integer would be undefined.
    // A rotated box (cx, cy, w, h, angle) has the level of an upright box of its size.
    const bool rotated = kind == RoiKind::kRotated;
    const int64_t at = RoiColumns(kind, in.batch_indices != nullptr) * k + (in.batch_indices != nullptr ? 0 : 1);
    auto level = [&](const auto* box) {
      using R = std::remove_cv_t<std::remove_pointer_t<decltype(box)>>;
      return rotated ? LevelOfBox(mp, k_min, R(0), R(0), box[2], box[3])
                     : LevelOfBox(mp, k_min, box[0], box[1], box[2], box[3]);
    };
    // F64: the level in double, as torchvision computes a float64 box's.
    (*levels)[static_cast<size_t>(k)] = in.rois_f64 != nullptr ? level(in.rois_f64 + at) : level(in.rois + at);
  }
  return Status::Ok();
}

// Whether byte ranges [a, a + a_bytes) and [b, b + b_bytes) share a byte.
bool Overlap(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes) {
  if (a == nullptr || b == nullptr || a_bytes <= 0 || b_bytes <= 0) return false;
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + static_cast<uintptr_t>(b_bytes) && y < x + static_cast<uintptr_t>(a_bytes);
}

// A backward call's dY and dX pointers, after the shapes are checked: every dX with elements given, and no dX
// sharing memory with dY, a map (which the MAX modes read while dX is written) or another dX.
Status CheckGradients(const Params& params, const CallInputs& in, const Gradients& g, bool multi_level) {
  const int64_t bytes = BytesOf(params.dtype), stored = StoredChannels(params.layout, in.channels);
  const int64_t dy_bytes = in.num_rois * stored * params.pooled_height * params.pooled_width * bytes;
  if (dy_bytes > 0 && g.output == nullptr) return Invalid("grad_output (dY) is null");
  if (g.inputs == nullptr) return Invalid(multi_level ? "grad_inputs is null" : "grad_input (dX) is null");
  for (int32_t l = 0; l < in.num_maps; ++l) {
    const std::string dx = multi_level ? "grad_inputs[" + std::to_string(l) + "]" : std::string("grad_input (dX)");
    const int64_t dx_bytes = in.batch * stored * in.maps[l].height * in.maps[l].width * bytes;
    if (dx_bytes > 0 && g.inputs[l] == nullptr) return Invalid(dx + " is null");
    if (Overlap(g.inputs[l], dx_bytes, g.output, dy_bytes)) return Invalid(dx + " overlaps grad_output");
    for (int32_t m = 0; m < in.num_maps; ++m) {
      const int64_t map_bytes = in.batch * stored * in.maps[m].height * in.maps[m].width * bytes;
      if (Overlap(g.inputs[l], dx_bytes, in.maps[m].input, map_bytes)) {
        return Invalid(dx + " overlaps " + (multi_level ? "map " + std::to_string(m) : std::string("the map")));
      }
      if (m != l && Overlap(g.inputs[l], dx_bytes, g.inputs[m], map_bytes)) {
        return Invalid(dx + " overlaps grad_inputs[" + std::to_string(m) + "]");
      }
    }
  }
  return Status::Ok();
}

// Why the kernel cannot run this backward, or OK.
Status BackwardServed(const SelectedKernel& selected, const Params& params) {
  if (!selected.custom && selected.fns[static_cast<size_t>(params.dtype)].whole_rois_backward != nullptr) {
    return Status::Ok();
  }
  return Status(StatusCode::kUnsupported, "kernel " + selected.name + " has no backward for dtype " +
                                              EnumName(params.dtype) +
                                              ": select the kernel with ROIALIGN_PARAMS_BACKWARD");
}

}  // namespace

Status RunCall(const Operator& op, const CallInputs& in, void* output, const Threading& threading, Arena* arena,
               bool measure_only, const Gradients* gradients) {
  Status s = ValidateThreading(threading);
  if (!s.ok()) return s;
  const SelectedKernel* const selected = op.selected;
  const MultiLevelParams* const pyramid = op.pyramid;
  if (selected == nullptr) {
    return Invalid(pyramid != nullptr ? "multi-level kernel is empty (not obtained from a successful SelectMultiLevel)"
                                      : "kernel is empty (not obtained from a successful Select)");
  }
  if (gradients != nullptr) {
    s = BackwardServed(*selected, op.params);
    if (!s.ok()) return s;
  }
  if (pyramid != nullptr) {
    s = CheckPyramidInputs(*pyramid, in);
    if (!s.ok()) return s;
  }
  std::pmr::memory_resource* const heap = arena != nullptr ? arena : std::pmr::new_delete_resource();
  const size_t L = static_cast<size_t>(in.num_maps);
  const int64_t K = in.num_rois;

  // Each level's attributes and call, and its shape checked.
  PerLevel<Params> params;
  PerLevel<Inputs> inputs;
  for (size_t l = 0; l < L; ++l) {
    params.Add(op.params);
    if (pyramid != nullptr) {
      params[l].spatial_scale = pyramid->scales[l];
      params[l].spatial_scale_f64 = params[l].dtype == DType::kF64 ? pyramid->scales[l] : 0.0;
    }
    inputs.Add({in.maps[l].input, in.batch, in.channels, in.maps[l].height, in.maps[l].width, in.rois,
                in.batch_indices, K, in.rois_f64});
    // A backward's dY is checked with its dX, below (CheckGradients), and named as such.
    s = CheckShape(params[l], inputs[l], gradients != nullptr ? static_cast<const void*>(gradients) : output);
    if (!s.ok()) return pyramid != nullptr ? Invalid("level " + std::to_string(l) + ": " + s.message()) : s;
  }
  if (gradients != nullptr && !measure_only) {  // a query takes no gradients
    s = CheckGradients(op.params, in, *gradients, pyramid != nullptr);
    if (!s.ok()) return s;
  }

  // A single-level call pools every RoI from its one map; a multi-level one from the map its rule picks.
  std::pmr::vector<int32_t> levels(heap);
  if (pyramid != nullptr) {
    s = AssignLevels(*pyramid, op.params.roi_kind, in, &levels);
    if (!s.ok()) return s;
  }
  // Every RoI checked on its own level's map and scale; one not pooled only for its batch index and coordinates.
  PerLevel<RoiTotals> totals;
  for (size_t l = 0; l < L; ++l) totals.Add();
  std::array<int64_t, ROIALIGN_MAX_LEVELS + 1> counts{};  // counts[L]: RoIs not pooled
  // Each RoI's geometry on its own level: in double for F64 (docs/semantics.md#float64), else in float.
  const bool f64 = op.params.dtype == DType::kF64;
  std::pmr::vector<RoiAxes> axes(f64 ? 0 : static_cast<size_t>(K), heap);
  std::pmr::vector<RoiAxesOf<double>> axes_f64(f64 ? static_cast<size_t>(K) : 0, heap);
  int64_t work = 0;
  if (pyramid == nullptr) {  // one level: no per-RoI level to look up
    s = f64 ? CheckRois(params[0], inputs[0], &totals[0], &work, axes_f64.data())
            : CheckRois(params[0], inputs[0], &totals[0], &work, axes.data());
    counts[0] = K;
  } else {
    std::array<const Params*, ROIALIGN_MAX_LEVELS> level_params;
    std::array<const Inputs*, ROIALIGN_MAX_LEVELS> level_inputs;
    std::array<RoiTotals*, ROIALIGN_MAX_LEVELS> level_totals;
    for (size_t l = 0; l < L; ++l) {
      level_params[l] = &params[l];
      level_inputs[l] = &inputs[l];
      level_totals[l] = &totals[l];
    }
    const RoiLevels maps{level_params.data(), level_inputs.data(), level_totals.data(), L, counts.data()};
    s = f64 ? CheckRoisOnLevels(maps, levels.data(), K, &work, axes_f64.data())
            : CheckRoisOnLevels(maps, levels.data(), K, &work, axes.data());
  }
  if (!s.ok()) return s;
  const RoiAxes* const axes_data = f64 ? nullptr : axes.data();
  const RoiAxesOf<double>* const axes_f64_data = f64 ? axes_f64.data() : nullptr;
  const char* const size_function =
      gradients != nullptr
          ? (pyramid != nullptr ? "roialign_multi_level_backward_workspace_size" : "roialign_backward_workspace_size")
          : (pyramid != nullptr ? "roialign_multi_level_workspace_size" : "roialign_workspace_size");
  // A backward writes all of dX, +0 where no RoI reaches: it runs with no RoIs too.
  if (gradients == nullptr && (K == 0 || in.channels == 0 || selected->custom)) {
    if (arena != nullptr && !measure_only && !arena->fits()) return WorkspaceTooSmall(*arena, size_function);
    if (measure_only || K == 0 || in.channels == 0) return Status::Ok();  // nothing to write
    return RunCustom(*selected, params[0], inputs[0], output, threading);
  }

  try {
    // Multi-level: RoI indices grouped by level, in input order within a level (the planner orders them for
    // locality). A single-level call computes all RoIs, with no subset.
    std::array<int64_t, ROIALIGN_MAX_LEVELS + 1> begin{};
    std::pmr::vector<int64_t> order(heap);
    if (pyramid != nullptr) {
      for (size_t l = 1; l <= L; ++l) begin[l] = begin[l - 1] + counts[l - 1];
      std::array<int64_t, ROIALIGN_MAX_LEVELS + 1> next = begin;
      order.resize(static_cast<size_t>(K));
      for (int64_t k = 0; k < K; ++k) {
        const int32_t l = levels[static_cast<size_t>(k)];
        order[static_cast<size_t>(next[l == kNotPooled ? L : static_cast<size_t>(l)]++)] = k;
      }
    }
    PerLevel<Problem> problems;
    for (size_t l = 0; l < L; ++l) problems.Add();
    if (gradients != nullptr) {  // every level, those no RoI reaches too: their dX is +0
      for (size_t l = 0; l < L; ++l) {
        FillProblem(params[l], inputs[l], nullptr, totals[l], axes_data, axes_f64_data, &problems[l]);
        if (pyramid != nullptr) {
          problems[l].roi_subset = order.data() + begin[l];
          problems[l].subset_size = counts[l];
        }
        problems[l].grad_output = gradients->output;
        problems[l].grad_input = gradients->inputs[l];
      }
      const KernelFns& f = selected->fns[static_cast<size_t>(op.params.dtype)];
      std::array<BackwardPlan, ROIALIGN_MAX_LEVELS> backward_plans;
      RunMemory memory(selected->memory, arena);
      for (size_t l = 0; l < L; ++l) {
        backward_plans[l] = PlanBackward(problems[l], f, threading);
        ReserveBackwardMemory(backward_plans[l], memory.get());
      }
      if (measure_only) return Status::Ok();
      if (arena != nullptr && !arena->fits()) return WorkspaceTooSmall(*arena, size_function);
      // Everything is allocated: from here on dX is written, and nothing can fail.
      for (size_t l = 0; l < L; ++l) ExecuteBackward(problems[l], backward_plans[l], f, threading, memory.get());
      return Status::Ok();
    }
    std::array<std::optional<Plan>, ROIALIGN_MAX_LEVELS> plans;
    RunMemory memory(selected->memory, arena);
    for (size_t l = 0; l < L; ++l) {
      if (counts[l] == 0) continue;
      FillProblem(params[l], inputs[l], output, totals[l], axes_data, axes_f64_data, &problems[l]);
      if (pyramid != nullptr) {
        problems[l].roi_subset = order.data() + begin[l];
        problems[l].subset_size = counts[l];
      }
      plans[l].emplace(MakePlan(problems[l], selected->access, threading, heap));
      ReserveWorkingMemory(problems[l], *plans[l], memory.get());
    }
    if (measure_only) return Status::Ok();
    if (arena != nullptr && !arena->fits()) return WorkspaceTooSmall(*arena, size_function);
    // Everything is allocated: from here on the output is written, and nothing can fail.
    const size_t roi_bytes = static_cast<size_t>(StoredChannels(op.params.layout, in.channels) *
                                                 op.params.pooled_height * op.params.pooled_width *
                                                 BytesOf(op.params.dtype));
    for (int64_t i = K - counts[L]; i < K; ++i) {  // zero is +0.0 in every dtype
      std::memset(static_cast<unsigned char*>(output) + static_cast<size_t>(order[static_cast<size_t>(i)]) * roi_bytes,
                  0, roi_bytes);
    }
    for (size_t l = 0; l < L; ++l) {
      if (plans[l]) Execute(problems[l], *plans[l], selected->fns, threading, memory.get());
    }
  } catch (const std::bad_alloc&) {
    return OutOfMemory("working memory", selected->name);
  }
  return Status::Ok();
}

}  // namespace internal

const std::string& KernelHandle::name() const {
  static const std::string kEmpty;
  return selected_ ? selected_->name : kEmpty;
}

void KernelHandle::ReleaseWorkingMemory() const noexcept {
  if (selected_) selected_->memory.Trim();
}

namespace {

// A single-level call as the run path reads it: one map.
internal::CallInputs OneMap(const Inputs& in, LevelMap* map) {
  *map = {in.input, in.height, in.width};
  internal::CallInputs call;
  call.maps = map;
  call.num_maps = 1;
  call.batch = in.batch;
  call.channels = in.channels;
  call.rois = in.rois;
  call.batch_indices = in.batch_indices;
  call.num_rois = in.num_rois;
  call.rois_f64 = in.rois_f64;
  return call;
}

template <typename K, typename I>
Status RunOnThreads(const K& kernel, const I& inputs, void* output, const internal::Threading& threading) {
  return internal::StatusOrOutOfMemory([&] {
    if constexpr (std::is_same_v<I, Inputs>) {
      LevelMap map;
      return internal::RunCall(internal::OperatorOf(kernel), OneMap(inputs, &map), output, threading, nullptr, false);
    } else {
      return internal::RunCall(internal::OperatorOf(kernel), inputs, output, threading, nullptr, false);
    }
  });
}

}  // namespace

Status KernelHandle::Run(const Inputs& inputs, void* output, int32_t num_threads) const {
  return RunOnThreads(*this, inputs, output, {num_threads, nullptr});
}

Status KernelHandle::Run(const Inputs& inputs, void* output, const roialign_threadpool& pool) const {
  return RunOnThreads(*this, inputs, output, {0, &pool});
}

Status PyramidKernelHandle::Run(const MultiLevelInputs& inputs, void* output, int32_t num_threads) const {
  return RunOnThreads(*this, inputs, output, {num_threads, nullptr});
}

Status PyramidKernelHandle::Run(const MultiLevelInputs& inputs, void* output, const roialign_threadpool& pool) const {
  return RunOnThreads(*this, inputs, output, {0, &pool});
}

}  // namespace roialign
