// The registry of roi_align implementations: one list, read by selection, the tests and the benchmarks.
#ifndef ROIALIGN_STRATEGY_REGISTRY_H_
#define ROIALIGN_STRATEGY_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/problem.h"
#include "roialign/roialign.hpp"

namespace roialign {
namespace internal {

// Bit of an enum value in the support masks; an out-of-range value maps to bit 31, which no mask accepts.
template <typename Enum>
constexpr uint32_t Bit(Enum e) {
  const int v = static_cast<int>(e);
  return (v >= 0 && v < 31) ? uint32_t{1} << v : uint32_t{1} << 31;
}

struct Implementation {
  std::string target;     // the target it serves, e.g. "x86-avx2" or a user's "npu"
  std::string name;       // e.g. "roi_align_nhwc.avx2"
  int64_t hwy_target = 0; // the ISA it needs (a Highway target bit); 0: any CPU
  int32_t priority = 0;
  uint32_t layouts = 0, dtypes = 0, pool_modes = 0, coordinate_modes = 0;
  RoiAlignFn builtin = nullptr;  // built-in kernels
  bool needs_tile = false;       // the kernel uses Scratch::tile
  int64_t channel_block = 0;     // > 0: tasks are blocks of this many channels over all RoIs (planar kernels)
  bool row_bands = false;        // the kernel can run RoIs band by band of map rows (kernels/row_bands.h)
  std::function<Status(const roialign_problem&)> custom;  // registered by a user
};

using ImplementationPtr = std::shared_ptr<const Implementation>;

// Every implementation compiled into this build plus those registered by users, best first within a target.
std::vector<ImplementationPtr> AllImplementations();
// Adds a user implementation; refuses built-in target names, duplicate names and empty masks.
Status RegisterImplementation(Implementation impl);

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_STRATEGY_REGISTRY_H_
