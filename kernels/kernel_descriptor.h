// How a kernel file describes itself to the registry and the planner: its name, layout and dtypes, what the
// planner may ask of it, and its entry point for every Highway target the file compiled. The registry builds
// implementations from these descriptors alone.
#ifndef ROIALIGN_KERNELS_KERNEL_DESCRIPTOR_H_
#define ROIALIGN_KERNELS_KERNEL_DESCRIPTOR_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "core/enums.h"
#include "kernels/problem.h"

namespace roialign {
namespace internal {

// What the execution layer's planner may do with a kernel.
struct PlannerNeeds {
  // The kernel builds per-RoI channels-last tiles in Scratch::tile and Scratch::bins (planar kernels).
  bool tiles = false;
  // The kernel reads channels-last maps in place and can run band by band of map rows (Pass::band_rows).
  bool row_bands = false;
  // The kernel can run band by band from a channels-last copy of one image's band rows
  // (Pass::channels_last_rows), which the plan makes with the transposer of the kernel's own ISA.
  bool band_transform = false;
  // > 0: on tiles, tasks are blocks of this many channels taken over all RoIs before the next block.
  int64_t channel_block = 0;
};

// One kernel per dtype (indexed by DType; null where the dtype is not served) for one Highway target.
using PerDType = std::array<RoiAlignFn, EnumTraits<DType>::kNames.size()>;
struct TargetKernel {
  int64_t hwy_target;  // HWY_AVX2, HWY_NEON, ...; 0: plain C++ that runs on any CPU
  PerDType run;
};

struct KernelDescriptor {
  const char* name;  // implementation names are "<name>.<isa>", e.g. "roi_align_nhwc.avx2"
  Layout layout;
  // Added to the ISA's priority: ranks this layout against the other on the same ISA, which QueryTarget
  // reports as the target's preferred layout.
  int32_t rank;
  PlannerNeeds needs;
  const TargetKernel* targets;
  size_t num_targets;
};

// The kernel files' descriptors (each defined beside its per-target table).
const KernelDescriptor& RoiAlignNhwcDescriptor();
const KernelDescriptor& RoiAlignNchwDescriptor();
const KernelDescriptor& RoiAlignNhwcReferenceDescriptor();
const KernelDescriptor& RoiAlignNchwReferenceDescriptor();

// dst[j * dst_stride + i] = src[i * src_stride + j] for i in [i0, i1), j in [j0, j1), elements of one dtype.
using TransposeBlockFn = void (*)(const void* src, int64_t src_stride, int64_t dst_stride, int64_t i0, int64_t i1,
                                  int64_t j0, int64_t j1, void* dst);
using TransposePerDType = std::array<TransposeBlockFn, EnumTraits<DType>::kNames.size()>;
struct TargetTranspose {
  int64_t hwy_target;
  TransposePerDType fn;
};
// The block transposer compiled for `hwy_target` (kernels/transpose_block.cc); all null if none was.
TransposePerDType TransposeBlockFor(int64_t hwy_target);
// The best block transposer this CPU runs (the public whole-tensor layout transforms).
TransposePerDType BestTransposeBlock();

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_KERNELS_KERNEL_DESCRIPTOR_H_
