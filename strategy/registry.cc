// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "strategy/registry.h"

#include <algorithm>
#include <mutex>
#include <shared_mutex>

#include "strategy/targets.h"

namespace roialign {
namespace internal {
namespace {

// One implementation per compiled target of a kernel file's descriptor.
void AddDescriptor(const KernelDescriptor& d, std::vector<ImplementationPtr>* out) {
  for (size_t i = 0; i < d.num_targets; ++i) {
    const TargetKernel& entry = d.targets[i];
    Implementation impl;
    if (entry.hwy_target == 0) {  // plain C++: the scalar reference
      impl.target = "generic";
      impl.name = std::string(d.name) + ".reference";
    } else {
      const IsaTarget* isa = IsaTargetOf(entry.hwy_target);
      if (isa == nullptr) continue;  // a Highway target roialign does not name (not compiled by our CMake)
      impl.target = isa->target;
      impl.name = std::string(d.name) + "." + isa->isa;
      impl.priority = isa->priority;
      impl.hwy_target = entry.hwy_target;
    }
    impl.priority += d.rank;
    impl.layouts = Bit(d.layout);
    for (DType dtype : AllValues<DType>()) {
      if (entry.run[static_cast<size_t>(dtype)] != nullptr) impl.dtypes |= Bit(dtype);
    }
    impl.pool_modes = AllMask<PoolMode>();
    impl.coordinate_modes = AllMask<CoordinateMode>();
    impl.builtin = entry.run;
    if (d.needs.band_transform) impl.transpose = TransposeBlockFor(entry.hwy_target);
    impl.needs = d.needs;
    out->push_back(std::make_shared<const Implementation>(std::move(impl)));
  }
}

std::vector<ImplementationPtr> BuiltinImplementations() {
  std::vector<ImplementationPtr> list;
  for (const KernelDescriptor* d : {&RoiAlignNhwcReferenceDescriptor(), &RoiAlignNchwReferenceDescriptor(),
                                    &RoiAlignNhwcDescriptor(), &RoiAlignNchwDescriptor()}) {
    AddDescriptor(*d, &list);
  }
  return list;
}

struct Registry {
  std::shared_mutex mutex;
  std::vector<ImplementationPtr> implementations = BuiltinImplementations();
};

Registry& GlobalRegistry() {
  static Registry* registry = new Registry();  // never destroyed: kernels may outlive static destructors
  return *registry;
}

void SortBestFirst(std::vector<ImplementationPtr>* list) {
  std::stable_sort(list->begin(), list->end(),
                   [](const ImplementationPtr& a, const ImplementationPtr& b) { return a->priority > b->priority; });
}

}  // namespace

std::vector<ImplementationPtr> AllImplementations() {
  Registry& r = GlobalRegistry();
  std::vector<ImplementationPtr> copy;
  {
    std::shared_lock<std::shared_mutex> lock(r.mutex);
    copy = r.implementations;
  }
  SortBestFirst(&copy);
  return copy;
}

Status RegisterImplementation(Implementation impl) {
  if (impl.target.empty() || impl.name.empty()) {
    return Status(StatusCode::kInvalidArgument, "register: target and name must be non-empty");
  }
  if (IsBuiltinTargetName(impl.target)) {
    return Status(StatusCode::kInvalidArgument,
                  "register: target '" + impl.target + "' is built in; register under a name of your own");
  }
  if (!impl.custom) return Status(StatusCode::kInvalidArgument, "register: '" + impl.name + "' has no function");
  auto known = [](uint32_t mask, uint32_t all) { return mask != 0 && (mask & ~all) == 0; };
  if (!known(impl.layouts, AllMask<Layout>()) || !known(impl.dtypes, AllMask<DType>()) ||
      !known(impl.pool_modes, AllMask<PoolMode>()) || !known(impl.coordinate_modes, AllMask<CoordinateMode>())) {
    return Status(StatusCode::kInvalidArgument,
                  "register: '" + impl.name +
                      "' must support at least one known layout, dtype, pool mode and coordinate mode, and only "
                      "known ones");
  }
  Registry& r = GlobalRegistry();
  std::unique_lock<std::shared_mutex> lock(r.mutex);
  for (const ImplementationPtr& existing : r.implementations) {
    if (existing->name == impl.name) {
      return Status(StatusCode::kInvalidArgument, "register: an implementation named '" + impl.name +
                                                      "' already exists");
    }
  }
  impl.builtin = {};
  impl.transpose = {};
  impl.needs = PlannerNeeds();
  impl.hwy_target = 0;
  r.implementations.push_back(std::make_shared<const Implementation>(std::move(impl)));
  return Status::Ok();
}

}  // namespace internal
}  // namespace roialign
