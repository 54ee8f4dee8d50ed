// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The SIMD kernel of every layout, compiled once per Highway target: the bin microkernel (pool_bin-inl.h) and
// the writers the execution layer runs around it (bins to planes, block transposes, streaming copies). It reads
// whatever channels-last pixels it is given: the map itself, a band or a tile the planner copied.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/pool_bin.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/kernel_descriptor.h"
#include "kernels/pool_bin-inl.h"
#include "kernels/transpose-inl.h"

HWY_BEFORE_NAMESPACE();
namespace roialign {
namespace internal {
namespace HWY_NAMESPACE {

// kInPlace: the run may be a blocked map read in place; bins pooled from copies (TOut f32 for every dtype) never are.
template <typename TIn, typename TOut, bool kInPlace>
void PoolBinOf(PoolMode mode, const BinTaps& bin, const ChannelRun& run) {
  const TIn* const in = static_cast<const TIn*>(run.in);
  const TIn* const end = static_cast<const TIn*>(run.end);
  TOut* const out = static_cast<TOut*>(run.out);
  const hn::ScalableTag<float> d;
  if constexpr (kInPlace) {
    if (run.block != 0) {
      auto with = [&](auto dv, auto placement) {
        PoolBin(dv, mode, in, end, bin, placement, run.channels, run.stream, run.partial, out);
      };
      const Blocked<1> one{run.in_block_stride, run.out_block_stride};
      // A block per vector where vectors reach its width (capped to it), else whole vectors, 2 or 4 to a block.
      // Only the tags and placements a target can meet are compiled: each is a large instantiation.
      const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
      constexpr size_t kMaxLanes = HWY_HAVE_SCALABLE ? 16 : hn::MaxLanes(d);
      if (lanes >= run.block) {
        if constexpr (kMaxLanes >= 16) {
          if (run.block == 16) return with(hn::CappedTag<float, 16>(), one);
        }
        if constexpr (kMaxLanes >= 8) {
          if (run.block == 8) return with(hn::CappedTag<float, 8>(), one);
        }
        if constexpr (kMaxLanes >= 4) {
          if (run.block == 4) return with(hn::CappedTag<float, 4>(), one);
        }
      } else {
        constexpr size_t kMinLanes = HWY_HAVE_SCALABLE ? 4 : hn::MaxLanes(d);
        if constexpr (kMinLanes >= 4 && 2 * kMinLanes <= 16) {
          if (run.block == 2 * lanes) return with(d, Blocked<2>{run.in_block_stride, run.out_block_stride});
        }
        if constexpr (kMinLanes >= 4 && 4 * kMinLanes <= 16) {
          if (run.block == 4 * lanes) return with(d, Blocked<4>{run.in_block_stride, run.out_block_stride});
        }
      }
      // Vectors too narrow for whole blocks per pass (the scalar fallback): one block at a time.
      for (int64_t c = 0; c < run.channels; c += run.block) {
        const int64_t j = c / run.block;
        PoolBin(d, mode, in + j * run.in_block_stride, end, bin, Contiguous(), std::min(run.block, run.channels - c),
                run.stream, run.partial + j * run.out_block_stride, out + j * run.out_block_stride);
      }
      return;
    }
  }
  PoolBin(d, mode, in, end, bin, Contiguous(), run.channels, run.stream, run.partial, out);
}

// One register tile's planes at a time: the stores then run along the planes (a RoI's output is one contiguous
// block) instead of across n lines at once.
template <typename T>
void BinsToPlanesOf(const float* bins, int64_t count, int64_t bin_stride, int64_t n, void* planes,
                    int64_t plane_stride) {
  for (int64_t j = 0; j < n; j += kTransposeTileF32) {
    TransposeTile(bins, bin_stride, plane_stride, 0, count, j, std::min(n, j + kTransposeTileF32),
                  static_cast<T*>(planes));
  }
}

template <typename T>  // float, uint64_t for f64 and uint16_t for every 16-bit type (moved as bit patterns)
void TransposeBlockOf(const void* src, int64_t src_stride, int64_t dst_stride, int64_t i0, int64_t i1, int64_t j0,
                      int64_t j1, void* dst) {
  TransposeTile(static_cast<const T*>(src), src_stride, dst_stride, i0, i1, j0, j1, static_cast<T*>(dst));
}

// Non-temporal stores for the whole vectors inside dst, ordinary ones for the edges, which may share a cache line
// with another task's output.
void StreamCopy(const void* src, int64_t count, void* dst) {
  const hn::ScalableTag<uint8_t> d8;
  const size_t lanes = hn::Lanes(d8), bytes = static_cast<size_t>(count);
  const uint8_t* from = static_cast<const uint8_t*>(src);
  uint8_t* to = static_cast<uint8_t*>(dst);
  const size_t head = std::min(bytes, (lanes - reinterpret_cast<uintptr_t>(to) % lanes) % lanes);
  std::memcpy(to, from, head);
  size_t i = head;
  for (; i + lanes <= bytes; i += lanes) hn::Stream(hn::LoadU(d8, from + i), d8, to + i);
  std::memcpy(to + i, from + i, bytes - i);
}

int64_t Lanes() { return static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>())); }

}  // namespace HWY_NAMESPACE
}  // namespace internal
}  // namespace roialign
HWY_AFTER_NAMESPACE();

namespace roialign {
namespace internal {
namespace HWY_NAMESPACE {
// The whole-RoI entry points of this target's passes over roi_align_f64.cc and roi_align_backward.cc.
extern const WholeRoisFn kF64Forward;
extern const BackwardEntries kBackward;

// The portable fallback (EMU128, SCALAR) pools f32 only, a strategy decision (docs/semantics.md#dtypes): it is
// the correctness fallback for CPUs without a SIMD target, and the generic reference serves the 16-bit dtypes.
// Outside HWY_BEFORE_NAMESPACE, so compiled for the baseline: the registry calls it for every compiled target,
// including those this CPU lacks.
TargetKernel ThisTargetKernel() {
  TargetKernel t{HWY_TARGET, PerDTypeTable<KernelFns>([](auto* type) {
            using T = std::remove_pointer_t<decltype(type)>;
            KernelFns f;
            f.transpose = &TransposeBlockOf<
                std::conditional_t<sizeof(T) == 4, float, std::conditional_t<sizeof(T) == 8, uint64_t, uint16_t>>>;
            if constexpr (std::is_same_v<T, double>) {
              f.whole_rois = kF64Forward;  // float64 pools whole RoIs in double
            } else if constexpr (!(HWY_TARGET == HWY_EMU128 || HWY_TARGET == HWY_SCALAR) ||
                                 std::is_same_v<T, float>) {
              f.pool_bin = &PoolBinOf<T, T, true>;
              f.pool_bin_f32 = &PoolBinOf<T, float, false>;
              f.bins_to_planes = &BinsToPlanesOf<T>;
              f.stream_copy = &StreamCopy;
              f.lanes = &Lanes;
            }
            return f;
          })};
  // The backward, for the dtypes whose forward the target serves.
  for (size_t d = 0; d < t.fns.size(); ++d) {
    if (t.fns[d].pool_bin == nullptr && t.fns[d].whole_rois == nullptr) continue;
    t.fns[d].whole_rois_backward = kBackward[d].run;
    t.fns[d].backward_scratch = kBackward[d].scratch;
  }
  return t;
}

}  // namespace HWY_NAMESPACE
}  // namespace internal
}  // namespace roialign

#if HWY_ONCE
namespace roialign {
namespace internal {

HWY_EXPORT(ThisTargetKernel);

// Every target this file compiled, best first, from Highway's own list (null where a target was not compiled; the
// fallback may be a listed target, the static one).
std::vector<TargetKernel> CompiledTargets() {
  static TargetKernel (*const kMakers[])() = {HWY_CHOOSE_TARGET_LIST(ThisTargetKernel),
                                              HWY_CHOOSE_FALLBACK(ThisTargetKernel)};
  std::vector<TargetKernel> targets;
  for (TargetKernel (*make)() : kMakers) {
    if (make == nullptr) continue;
    const TargetKernel t = make();
    auto same = [&](const TargetKernel& other) { return other.hwy_target == t.hwy_target; };
    if (std::none_of(targets.begin(), targets.end(), same)) targets.push_back(t);
  }
  return targets;
}

ROIALIGN_KERNEL_DESCRIPTOR(pool_bin) {
  static const std::vector<TargetKernel> kTargets = CompiledTargets();
  static const KernelDescriptor kDescriptor = {"roi_align", kTargets.data(), kTargets.size()};
  return kDescriptor;
}

PerDType BestTargetFns() { return HWY_DYNAMIC_DISPATCH(ThisTargetKernel)().fns; }

}  // namespace internal
}  // namespace roialign
#endif  // HWY_ONCE
