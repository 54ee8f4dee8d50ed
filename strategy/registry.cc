#include "strategy/registry.h"

#include <algorithm>
#include <mutex>
#include <shared_mutex>

#include "kernels/kernel_tables.h"
#include "kernels/roi_align_reference.h"
#include "strategy/targets.h"

namespace roialign {
namespace internal {
namespace {

constexpr uint32_t kAllPoolModes = Bit(PoolMode::kAvg) | Bit(PoolMode::kMax) | Bit(PoolMode::kMaxOnnx);
constexpr uint32_t kAllCoordinateModes = Bit(CoordinateMode::kLegacy) | Bit(CoordinateMode::kHalfPixel) |
                                         Bit(CoordinateMode::kHalfPixelCentered);

Implementation Builtin(std::string target, std::string name, int64_t hwy_target, int32_t priority,
                       Layout layout, RoiAlignFn fn) {
  Implementation impl;
  impl.target = std::move(target);
  impl.name = std::move(name);
  impl.hwy_target = hwy_target;
  impl.priority = priority;
  impl.layouts = Bit(layout);
  impl.dtypes = Bit(DType::kF32);
  impl.pool_modes = kAllPoolModes;
  impl.coordinate_modes = kAllCoordinateModes;
  impl.builtin = fn;
  impl.needs_tile = layout == Layout::kNCHW && hwy_target != 0;
  impl.row_bands = layout == Layout::kNHWC && hwy_target != 0;
  // 64 channels: one 8-vector AVG pass on AVX2. Measured against 32 and 128 (issue 5): l3 1.29x, adaptive and
  // 14x14 1.10x faster than 32, default within noise; 128 lost on 14x14.
  impl.channel_block = layout == Layout::kNCHW ? 64 : 0;  // see RunBuiltin
  return impl;
}

void AddTable(KernelTable table, Layout layout, const char* prefix, std::vector<ImplementationPtr>* out) {
  for (size_t i = 0; i < table.size; ++i) {
    const IsaTarget* isa = IsaTargetOf(table.entries[i].hwy_target);
    if (isa == nullptr) continue;  // a Highway target roialign does not name (not compiled by our CMake)
    // NHWC ranks one above NCHW on the same ISA: it vectorizes over channels directly, while NCHW first builds a
    // channels-last tile. QueryTarget reports this as the preferred layout.
    const int32_t priority = isa->priority + (layout == Layout::kNHWC ? 1 : 0);
    out->push_back(std::make_shared<const Implementation>(Builtin(
        isa->target, std::string(prefix) + "." + isa->isa, isa->hwy_target, priority, layout, table.entries[i].fn)));
  }
}

std::vector<ImplementationPtr> BuiltinImplementations() {
  std::vector<ImplementationPtr> list;
  list.push_back(std::make_shared<const Implementation>(
      Builtin("generic", "roi_align_nhwc.reference", 0, 1, Layout::kNHWC, &RoiAlignReference)));
  list.push_back(std::make_shared<const Implementation>(
      Builtin("generic", "roi_align_nchw.reference", 0, 0, Layout::kNCHW, &RoiAlignReference)));
  AddTable(RoiAlignNhwcKernels(), Layout::kNHWC, "roi_align_nhwc", &list);
  AddTable(RoiAlignNchwKernels(), Layout::kNCHW, "roi_align_nchw", &list);
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
  if (impl.layouts == 0 || impl.dtypes == 0 || impl.pool_modes == 0 || impl.coordinate_modes == 0 ||
      impl.layouts >= (1u << 2) || impl.dtypes >= (1u << 3) || impl.pool_modes >= (1u << 3) ||
      impl.coordinate_modes >= (1u << 3)) {
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
  impl.builtin = nullptr;
  impl.hwy_target = 0;
  r.implementations.push_back(std::make_shared<const Implementation>(std::move(impl)));
  return Status::Ok();
}

}  // namespace internal
}  // namespace roialign
