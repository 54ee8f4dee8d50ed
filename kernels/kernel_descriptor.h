// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// How a kernel file describes itself to the registry and the planner: its name, layout and dtypes, what the
// planner may ask of it, and its entry point for every Highway target the file compiled. The registry builds
// implementations from these descriptors alone.
#ifndef ROIALIGN_KERNELS_KERNEL_DESCRIPTOR_H_
#define ROIALIGN_KERNELS_KERNEL_DESCRIPTOR_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <hwy/base.h>

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

// The element type of each DType, from which every per-dtype table is generated in the enum's order.
template <DType D>
struct ElementOf;
template <>
struct ElementOf<DType::kF32> { using type = float; };
template <>
struct ElementOf<DType::kF16> { using type = hwy::float16_t; };
template <>
struct ElementOf<DType::kBF16> { using type = hwy::bfloat16_t; };

// {make((T*)nullptr) for the element type T of every DType}, indexed by DType.
template <typename Fn, class Make, size_t... I>
std::array<Fn, sizeof...(I)> PerDTypeTable(Make make, std::index_sequence<I...>) {
  return {make(static_cast<typename ElementOf<static_cast<DType>(I)>::type*>(nullptr))...};
}
template <typename Fn, class Make>
std::array<Fn, EnumTraits<DType>::kNames.size()> PerDTypeTable(Make make) {
  return PerDTypeTable<Fn>(make, std::make_index_sequence<EnumTraits<DType>::kNames.size()>());
}

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

// The entries of every target a foreach_target file compiled, best first, from Highway's own list of targets:
// `makers` is {HWY_CHOOSE_TARGET_LIST(FN), HWY_CHOOSE_FALLBACK(FN)}, null where a target was not compiled.
template <typename Entry, size_t N>
std::vector<Entry> CompiledTargets(Entry (*const (&makers)[N])()) {
  std::vector<Entry> entries;
  for (Entry (*make)() : makers) {
    if (make == nullptr) continue;
    const Entry e = make();
    bool seen = false;  // the fallback may be a listed target (the static one)
    for (const Entry& other : entries) seen |= other.hwy_target == e.hwy_target;
    if (!seen) entries.push_back(e);
  }
  return entries;
}
#define ROIALIGN_COMPILED_TARGETS(FN) {HWY_CHOOSE_TARGET_LIST(FN), HWY_CHOOSE_FALLBACK(FN)}

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
