// The per-target entry points that the Highway kernel files export, for the registry.
#ifndef ROIALIGN_KERNELS_KERNEL_TABLES_H_
#define ROIALIGN_KERNELS_KERNEL_TABLES_H_

#include <cstddef>
#include <cstdint>

#include "kernels/problem.h"

namespace roialign {
namespace internal {

struct TargetKernel {
  int64_t hwy_target;  // HWY_AVX2, HWY_NEON, ...
  RoiAlignFn fn;
};

// The kernels compiled for each Highway target of this build (one entry per target).
struct KernelTable {
  const TargetKernel* entries;
  size_t size;
};
KernelTable RoiAlignNhwcKernels();
KernelTable RoiAlignNchwKernels();

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_KERNELS_KERNEL_TABLES_H_
