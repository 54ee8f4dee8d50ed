// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Selection: attribute validation, matching against the registry, and refusals that explain themselves.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/enums.h"
#include "execution/plan.h"
#include "execution/selected_kernel.h"
#include "core/library.h"
#include "strategy/registry.h"
#include "strategy/targets.h"
#include "strategy/validate_params.h"

namespace roialign {
namespace {

using internal::Bit;
using internal::Implementation;
using internal::ImplementationPtr;
using internal::MaskNames;

std::string KnownTargetList() {
  std::string out;
  for (const std::string& t : TargetNames()) out += (out.empty() ? "" : ", ") + t;
  return out;
}

// Implementations registered for a target name, whether or not this CPU can run them.
std::vector<ImplementationPtr> ForTarget(const std::string& target) {
  std::vector<ImplementationPtr> out;
  for (const ImplementationPtr& impl : internal::AllImplementations()) {
    if (internal::TargetServes(target, impl->target)) out.push_back(impl);
  }
  return out;
}

// The built-in targets this build compiled and this CPU runs, e.g. "x86-avx2 (avx2), x86-sse4 (sse4)".
std::string RunnableHere() {
  std::string out;
  for (const internal::IsaTarget& t : internal::IsaTargets()) {
    if (!internal::CpuSupports(t.hwy_target)) continue;
    bool compiled = false;
    for (const ImplementationPtr& impl : internal::AllImplementations()) compiled |= impl->hwy_target == t.hwy_target;
    if (!compiled) continue;
    out += (out.empty() ? "" : ", ") + std::string(t.target) + " (" + t.isa + ")";
  }
  return out.empty() ? "generic only" : out;
}

// Why `target` has nothing runnable here, or OK with `runnable` filled (best first).
Status Runnable(const std::string& target, std::vector<ImplementationPtr>* runnable) {
  const std::vector<ImplementationPtr> all = ForTarget(target);
  for (const ImplementationPtr& impl : all) {
    if (internal::CpuSupports(impl->hwy_target)) runnable->push_back(impl);
  }
  if (!runnable->empty()) return Status::Ok();
  if (!internal::IsBuiltinTargetName(target) && all.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "unknown target '" + target + "' (known targets: " + KnownTargetList() + ")");
  }
  if (all.empty()) {
    return Status(StatusCode::kUnsupported, "target '" + target + "' was not compiled into this build (" +
                                                std::string(internal::BuildArchitecture()) +
                                                "); available here: " + RunnableHere());
  }
  const internal::IsaTarget* isa = internal::IsaTargetOf(all[0]->hwy_target);
  return Status(StatusCode::kUnsupported, "target '" + target + "' needs an ISA this CPU lacks (" +
                                              (isa ? isa->isa : all[0]->name.c_str()) +
                                              "); available here: " + RunnableHere());
}

uint32_t Union(const std::vector<ImplementationPtr>& impls, uint32_t Implementation::*mask) {
  uint32_t u = 0;
  for (const ImplementationPtr& impl : impls) u |= (*impl).*mask;
  return u;
}

// UNSUPPORTED, naming what the target does serve, when none of `runnable` serves `value`.
template <typename Enum>
Status Serves(const std::string& target, const std::vector<ImplementationPtr>& runnable,
              uint32_t Implementation::*mask, Enum value) {
  const uint32_t served = Union(runnable, mask);
  if (served & Bit(value)) return Status::Ok();
  return Status(StatusCode::kUnsupported, "target '" + target + "' has no roi_align for " +
                                              internal::EnumTraits<Enum>::kWhat + " " + internal::EnumName(value) +
                                              " (supported: " + MaskNames<Enum>(served) + ")");
}

// Keeps the implementations of `runnable` that run the backward of `dtype`, or refuses, naming the targets whose
// implementations do.
Status WithBackward(const std::string& target, DType dtype, std::vector<ImplementationPtr>* runnable) {
  runnable->erase(std::remove_if(runnable->begin(), runnable->end(),
                                 [&](const ImplementationPtr& impl) { return !(impl->backward_dtypes & Bit(dtype)); }),
                  runnable->end());
  if (!runnable->empty()) return Status::Ok();
  std::string with;
  for (const ImplementationPtr& impl : internal::AllImplementations()) {
    if ((impl->backward_dtypes & Bit(dtype)) && internal::CpuSupports(impl->hwy_target) &&
        with.find("'" + impl->target + "'") == std::string::npos) {
      with += (with.empty() ? "'" : ", '") + impl->target + "'";
    }
  }
  return Status(StatusCode::kUnsupported, "target '" + target + "' has no roi_align backward for dtype " +
                                              internal::EnumName(dtype) + " (targets with one here: " +
                                              (with.empty() ? std::string("none") : with) + ")");
}

// Everything Run will execute, resolved now: the functions of the implementation's ISA and how they reach the
// pixels.
std::shared_ptr<const internal::SelectedKernel> Bind(const Implementation& impl, const Params& params) {
  auto selected = std::make_shared<internal::SelectedKernel>();
  selected->name = impl.name;
  selected->fns = impl.builtin;
  selected->access = internal::AccessOf(impl.builtin[static_cast<size_t>(params.dtype)], params.layout);
  selected->custom = impl.custom;
  return selected;
}

}  // namespace

Selection SelectKernel(const std::string& target, const Params& params) {
  Status s = internal::ValidateParams(params);
  if (!s.ok()) return s;
  std::vector<ImplementationPtr> runnable;
  s = Runnable(target, &runnable);
  if (!s.ok()) return s;

  // Refuse on the first attribute that no implementation of the target serves, naming what it does serve.
  for (const Status& refusal :
       {Serves(target, runnable, &Implementation::layouts, params.layout),
        Serves(target, runnable, &Implementation::dtypes, params.dtype),
        Serves(target, runnable, &Implementation::pool_modes, params.pool_mode),
        Serves(target, runnable, &Implementation::coordinate_modes, params.coordinate_mode),
        Serves(target, runnable, &Implementation::roi_kinds, params.roi_kind)}) {
    if (!refusal.ok()) return refusal;
  }
  if (params.backward) {
    s = WithBackward(target, params.dtype, &runnable);
    if (!s.ok()) return s;
  }
  for (const ImplementationPtr& impl : runnable) {
    if ((impl->layouts & Bit(params.layout)) && (impl->dtypes & Bit(params.dtype)) &&
        (impl->pool_modes & Bit(params.pool_mode)) && (impl->coordinate_modes & Bit(params.coordinate_mode)) &&
        (impl->roi_kinds & Bit(params.roi_kind))) {
      return KernelAccess::Make(Bind(*impl, params), params);
    }
  }
  return Status(StatusCode::kUnsupported,
                "target '" + target + "' has no single roi_align implementation for layout " +
                    internal::EnumName(params.layout) + ", dtype " + internal::EnumName(params.dtype) +
                    ", pool mode " + internal::EnumName(params.pool_mode) + ", coordinate mode " +
                    internal::EnumName(params.coordinate_mode) +
                    " (each is supported by some implementation, but not together)");
}

Status DescribeTarget(const std::string& target, TargetInfo* info) {
  if (info == nullptr) return Status(StatusCode::kInvalidArgument, "info is null");
  std::vector<ImplementationPtr> runnable;
  Status s = Runnable(target, &runnable);
  if (!s.ok()) return s;
  *info = TargetInfo();
  info->layouts = internal::ValuesIn<Layout>(Union(runnable, &Implementation::layouts));
  info->dtypes = internal::ValuesIn<DType>(Union(runnable, &Implementation::dtypes));
  info->pool_modes = internal::ValuesIn<PoolMode>(Union(runnable, &Implementation::pool_modes));
  info->coordinate_modes = internal::ValuesIn<CoordinateMode>(Union(runnable, &Implementation::coordinate_modes));
  info->roi_kinds = internal::ValuesIn<RoiKind>(Union(runnable, &Implementation::roi_kinds));
  // runnable is best first: the preferred layout is the lowest one its best implementation serves.
  info->preferred_layout = internal::ValuesIn<Layout>(runnable.front()->layouts).front();
  // The largest block (4, 8 or 16) no wider than its f32 vectors: one vector per block's pixel.
  const auto lanes = runnable.front()->builtin[static_cast<size_t>(DType::kF32)].lanes;
  if (lanes != nullptr) {
    const int64_t n = lanes();
    info->preferred_block = n >= 16 ? 16 : n >= 8 ? 8 : 4;
  }
  return Status::Ok();
}

std::vector<std::string> TargetNames() {
  std::vector<std::string> names = {"host", "generic", "x86", "arm"};
  for (const internal::IsaTarget& t : internal::IsaTargets()) {
    if (std::find(names.begin(), names.end(), t.target) == names.end()) names.push_back(t.target);
  }
  for (const ImplementationPtr& impl : internal::AllImplementations()) {
    if (std::find(names.begin(), names.end(), impl->target) == names.end()) names.push_back(impl->target);
  }
  return names;
}

std::vector<std::string> ImplementationsOf(const std::string& target) {
  std::vector<ImplementationPtr> runnable;
  std::vector<std::string> names;
  if (!Runnable(target, &runnable).ok()) return names;
  for (const ImplementationPtr& impl : runnable) names.push_back(impl->name);
  return names;
}

Status RegisterCustomImplementation(CustomImplementation c) {
  Implementation impl;
  impl.target = std::move(c.target);
  impl.name = std::move(c.name);
  impl.priority = c.priority;
  impl.layouts = internal::MaskOf(c.layouts);
  impl.dtypes = internal::MaskOf(c.dtypes);
  impl.pool_modes = internal::MaskOf(c.pool_modes);
  impl.coordinate_modes = internal::MaskOf(c.coordinate_modes);
  impl.custom = std::move(c.fn);
  return internal::RegisterImplementation(std::move(impl));
}

}  // namespace roialign
