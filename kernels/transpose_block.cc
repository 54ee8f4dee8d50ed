// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Block transposer for the layout transforms: dst[j * dst_stride + i] = src[i * src_stride + j] over one block,
// in register tiles (transpose-inl.h): 8x8 for f32 where 256-bit registers exist, else 4x4, and 8x8 for the
// 16-bit types, which move as their bit patterns. Compiled once per Highway target; the execution layer
// threads it over blocks, with the transposer of the selected kernel's own ISA inside Run.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/transpose_block.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include <cstdint>
#include <type_traits>

#include "kernels/kernel_descriptor.h"
#include "kernels/transpose-inl.h"

HWY_BEFORE_NAMESPACE();
namespace roialign {
namespace internal {
namespace HWY_NAMESPACE {

template <typename T>  // float, or uint16_t for every 16-bit type
void TransposeBlock(const void* src, int64_t src_stride, int64_t dst_stride, int64_t i0, int64_t i1, int64_t j0,
                    int64_t j1, void* dst) {
  TransposeTile(static_cast<const T*>(src), src_stride, dst_stride, i0, i1, j0, j1, static_cast<T*>(dst));
}

TargetTranspose ThisTargetTranspose() {
  return {HWY_TARGET, PerDTypeTable<TransposeBlockFn>([](auto* t) {
            return &TransposeBlock<std::conditional_t<sizeof(*t) == 4, float, uint16_t>>;
          })};
}

}  // namespace HWY_NAMESPACE
}  // namespace internal
}  // namespace roialign
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace roialign {
namespace internal {

HWY_EXPORT(ThisTargetTranspose);

TransposePerDType TransposeBlockFor(int64_t hwy_target) {
  static TargetTranspose (*const kMakers[])() = ROIALIGN_COMPILED_TARGETS(ThisTargetTranspose);
  static const std::vector<TargetTranspose> kTargets = CompiledTargets(kMakers);
  for (const TargetTranspose& t : kTargets) {
    if (t.hwy_target == hwy_target) return t.fn;
  }
  return {};
}

TransposePerDType BestTransposeBlock() { return HWY_DYNAMIC_DISPATCH(ThisTargetTranspose)().fn; }

}  // namespace internal
}  // namespace roialign
#endif  // HWY_ONCE
