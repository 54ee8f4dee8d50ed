// Selection: attribute validation, matching against the registry, and refusals that explain themselves.
#include <algorithm>
#include <string>
#include <vector>

#include "roialign/roialign.hpp"
#include "strategy/kernel_access.h"
#include "strategy/registry.h"
#include "strategy/targets.h"
#include "strategy/validation.h"

namespace roialign {
namespace {

using internal::Bit;
using internal::Implementation;
using internal::ImplementationPtr;

template <typename Enum>
std::string MaskNames(uint32_t mask, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) {
    if ((mask & (1u << i)) == 0) continue;
    if (!out.empty()) out += ", ";
    out += ToString(static_cast<Enum>(i));
  }
  return out.empty() ? "none" : out;
}

std::string KnownTargetList() {
  std::string out;
  for (const std::string& t : KnownTargets()) out += (out.empty() ? "" : ", ") + t;
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

}  // namespace

SelectResult Select(const std::string& target, const Params& params) {
  Status s = internal::ValidateParams(params);
  if (!s.ok()) return s;
  std::vector<ImplementationPtr> runnable;
  s = Runnable(target, &runnable);
  if (!s.ok()) return s;

  // Refuse on the first attribute that no implementation of the target serves, naming what it does serve.
  struct Requirement {
    const char* what;
    uint32_t Implementation::*mask;
    uint32_t bit;
    std::string value, supported;
  };
  const Requirement requirements[] = {
      {"layout", &Implementation::layouts, Bit(params.layout), ToString(params.layout),
       MaskNames<Layout>(Union(runnable, &Implementation::layouts), 2)},
      {"dtype", &Implementation::dtypes, Bit(params.dtype), ToString(params.dtype),
       MaskNames<DType>(Union(runnable, &Implementation::dtypes), 3)},
      {"pool mode", &Implementation::pool_modes, Bit(params.pool_mode), ToString(params.pool_mode),
       MaskNames<PoolMode>(Union(runnable, &Implementation::pool_modes), 3)},
      {"coordinate mode", &Implementation::coordinate_modes, Bit(params.coordinate_mode),
       ToString(params.coordinate_mode),
       MaskNames<CoordinateMode>(Union(runnable, &Implementation::coordinate_modes), 3)},
  };
  for (const Requirement& r : requirements) {
    if ((Union(runnable, r.mask) & r.bit) == 0) {
      return Status(StatusCode::kUnsupported, "target '" + target + "' has no roi_align for " + r.what + " " +
                                                  r.value + " (supported: " + r.supported + ")");
    }
  }
  for (const ImplementationPtr& impl : runnable) {
    if ((impl->layouts & Bit(params.layout)) && (impl->dtypes & Bit(params.dtype)) &&
        (impl->pool_modes & Bit(params.pool_mode)) && (impl->coordinate_modes & Bit(params.coordinate_mode))) {
      return KernelAccess::Make(impl, params);
    }
  }
  return Status(StatusCode::kUnsupported,
                "target '" + target + "' has no single roi_align implementation for layout " +
                    ToString(params.layout) + ", dtype " + ToString(params.dtype) + ", pool mode " +
                    ToString(params.pool_mode) + ", coordinate mode " + ToString(params.coordinate_mode) +
                    " (each is supported by some implementation, but not together)");
}

Status QueryTarget(const std::string& target, TargetInfo* info) {
  if (info == nullptr) return Status(StatusCode::kInvalidArgument, "info is null");
  std::vector<ImplementationPtr> runnable;
  Status s = Runnable(target, &runnable);
  if (!s.ok()) return s;
  *info = TargetInfo();
  const uint32_t layouts = Union(runnable, &Implementation::layouts);
  const uint32_t dtypes = Union(runnable, &Implementation::dtypes);
  const uint32_t pools = Union(runnable, &Implementation::pool_modes);
  const uint32_t coords = Union(runnable, &Implementation::coordinate_modes);
  for (int i = 0; i < 3; ++i) {
    if (i < 2 && (layouts & (1u << i))) info->layouts.push_back(static_cast<Layout>(i));
    if (dtypes & (1u << i)) info->dtypes.push_back(static_cast<DType>(i));
    if (pools & (1u << i)) info->pool_modes.push_back(static_cast<PoolMode>(i));
    if (coords & (1u << i)) info->coordinate_modes.push_back(static_cast<CoordinateMode>(i));
  }
  // runnable is best first: the preferred layout is the lowest one its best implementation serves.
  const uint32_t best = runnable.front()->layouts;
  info->preferred_layout = (best & Bit(Layout::kNHWC)) && !(best & Bit(Layout::kNCHW)) ? Layout::kNHWC : Layout::kNCHW;
  return Status::Ok();
}

std::vector<std::string> KnownTargets() {
  std::vector<std::string> names = {"host", "generic", "x86", "arm"};
  for (const internal::IsaTarget& t : internal::IsaTargets()) {
    if (std::find(names.begin(), names.end(), t.target) == names.end()) names.push_back(t.target);
  }
  for (const ImplementationPtr& impl : internal::AllImplementations()) {
    if (std::find(names.begin(), names.end(), impl->target) == names.end()) names.push_back(impl->target);
  }
  return names;
}

std::vector<std::string> ImplementationNames(const std::string& target) {
  std::vector<ImplementationPtr> runnable;
  std::vector<std::string> names;
  if (!Runnable(target, &runnable).ok()) return names;
  for (const ImplementationPtr& impl : runnable) names.push_back(impl->name);
  return names;
}

Status Register(CustomImplementation c) {
  Implementation impl;
  impl.target = std::move(c.target);
  impl.name = std::move(c.name);
  impl.priority = c.priority;
  for (Layout v : c.layouts) impl.layouts |= Bit(v);
  for (DType v : c.dtypes) impl.dtypes |= Bit(v);
  for (PoolMode v : c.pool_modes) impl.pool_modes |= Bit(v);
  for (CoordinateMode v : c.coordinate_modes) impl.coordinate_modes |= Bit(v);
  impl.custom = std::move(c.fn);
  return internal::RegisterImplementation(std::move(impl));
}

}  // namespace roialign
