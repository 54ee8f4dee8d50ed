// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// How a kernel file describes itself to the registry: its name, one static fact, and its entry points for every
// Highway target the file compiled. The registry builds implementations from these descriptors alone; the planner
// reads the fact and the layout table (core/enums.h), never the kernel.
#ifndef ROIALIGN_KERNELS_KERNEL_DESCRIPTOR_H_
#define ROIALIGN_KERNELS_KERNEL_DESCRIPTOR_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <hwy/base.h>

#include "core/enums.h"
#include "kernels/merged_taps.h"
#include "kernels/problem.h"

namespace roialign {
namespace internal {

// The element type of each DType, from which every per-dtype table is generated in the enum's order.
template <DType D>
struct ElementOf;
template <>
struct ElementOf<DType::kF32> { using type = float; };
template <>
struct ElementOf<DType::kF16> { using type = hwy::float16_t; };
template <>
struct ElementOf<DType::kBF16> { using type = hwy::bfloat16_t; };
template <>
struct ElementOf<DType::kF64> { using type = double; };

// {make((T*)nullptr) for the element type T of every DType}, indexed by DType.
template <typename Fn, class Make, size_t... I>
constexpr std::array<Fn, sizeof...(I)> PerDTypeTable(Make make, std::index_sequence<I...>) {
  return {make(static_cast<typename ElementOf<static_cast<DType>(I)>::type*>(nullptr))...};
}
template <typename Fn, class Make>
constexpr std::array<Fn, EnumTraits<DType>::kNames.size()> PerDTypeTable(Make make) {
  return PerDTypeTable<Fn>(make, std::make_index_sequence<EnumTraits<DType>::kNames.size()>());
}

// A bin's run of contiguous channels: pixels of the map's element type (channel 0 of the run at offset 0 of every
// tap, no load reaching `end`), and where the run goes: f32 partial state between pieces of the bin, and the
// finished values in the map's type. partial and out may be the same memory.
struct ChannelRun {
  const void* in;
  const void* end;
  int64_t channels;
  float* partial;
  void* out;
  bool stream;  // finished full vectors may bypass the cache; the caller calls hwy::FlushStream
  // Blocked maps read in place (NCHW4c/8c/16c): channels in blocks of `block` (a power of two; 0: contiguous),
  // consecutive blocks in_block_stride (map) and out_block_stride (partial state and output) elements apart.
  int64_t block = 0, in_block_stride = 0, out_block_stride = 0;
};
// The microkernel: pools one bin (or a piece of it, BinTaps) over a run of channels, finishing it in the map's
// type (pool_bin) or in f32 (pool_bin_f32, for bins of copied pixels that are transposed afterwards).
using PoolBinFn = void (*)(PoolMode mode, const BinTaps& bin, const ChannelRun& run);
// Channels [0, n) of `count` channels-last f32 bins (bin_stride floats apart) into n planes of the map's type,
// plane_stride elements apart.
using BinsToPlanesFn = void (*)(const float* bins, int64_t count, int64_t bin_stride, int64_t n, void* planes,
                                int64_t plane_stride);
// dst[j * dst_stride + i] = src[i * src_stride + j] for i in [i0, i1), j in [j0, j1), elements of one dtype.
using TransposeBlockFn = void (*)(const void* src, int64_t src_stride, int64_t dst_stride, int64_t i0, int64_t i1,
                                  int64_t j0, int64_t j1, void* dst);
// Whole RoIs [roi_begin, roi_end), channels [c_begin, c_end), straight from the problem (the scalar reference).
using WholeRoisFn = void (*)(const Problem& problem, int64_t roi_begin, int64_t roi_end, int64_t c_begin,
                             int64_t c_end);
// The part of dX one backward task owns and overwrites: image `image`, channels [c_begin, c_end), map rows
// [y_begin, y_end), every column; when it holds the last channel, also the padded lanes of a blocked layout's
// last block in those rows. Disjoint ranges write disjoint elements, and an element's bits do not depend on how
// dX is split (docs/semantics.md#backward).
// `stream`: write the range with non-temporal stores where its lines allow (the plan's choice, for a dX larger than
// the last-level cache).
struct GradientRange {
  int64_t image = 0, c_begin = 0, c_end = 0, y_begin = 0, y_end = 0;
  bool stream = false;
};
// Working memory of one backward task, `floats` f32 of kArenaAlignment-aligned room that the kernel lays out as it
// needs (BackwardScratchFn says how much); {nullptr, 0} for a kernel that needs none.
struct BackwardScratch {
  float* data = nullptr;
  int64_t floats = 0;
};
// The backward of every RoI the problem runs, for one range of dX: reads the map (MAX modes) and dY, writes the
// range of dX, every element of it.
using WholeRoisBackwardFn = void (*)(const Problem& problem, const GradientRange& range,
                                     const BackwardScratch& scratch);
// The scratch floats whole_rois_backward needs for `range`.
using BackwardScratchFn = int64_t (*)(const Problem& problem, const GradientRange& range);
// A dtype's backward: the entry point and its scratch size.
struct BackwardEntry {
  WholeRoisBackwardFn run = nullptr;
  BackwardScratchFn scratch = nullptr;
};
using BackwardEntries = std::array<BackwardEntry, EnumTraits<DType>::kNames.size()>;

// What one target provides for one dtype (all null where the dtype is not served): the microkernel and the
// writers around it, or whole RoIs (forward and backward).
struct KernelFns {
  PoolBinFn pool_bin = nullptr, pool_bin_f32 = nullptr;
  BinsToPlanesFn bins_to_planes = nullptr;
  TransposeBlockFn transpose = nullptr;
  void (*stream_copy)(const void* src, int64_t bytes, void* dst) = nullptr;  // non-temporal where aligned
  int64_t (*lanes)() = nullptr;  // f32 lanes of the target's vectors: copied channel runs are padded to them
  WholeRoisFn whole_rois = nullptr;
  WholeRoisBackwardFn whole_rois_backward = nullptr;
  BackwardScratchFn backward_scratch = nullptr;  // null: whole_rois_backward needs no scratch
};
using PerDType = std::array<KernelFns, EnumTraits<DType>::kNames.size()>;
struct TargetKernel {
  int64_t hwy_target;  // HWY_AVX2, HWY_NEON, ...; 0: plain C++ that runs on any CPU
  PerDType fns;
};

// One kernel file: the registry makes one implementation "<name>_<layout>.<isa>" (e.g. "roi_align_nhwc.avx2")
// per compiled target and layout.
struct KernelDescriptor {
  const char* name;
  const TargetKernel* targets;
  size_t num_targets;
};

// Every kernel file defines its descriptor as KernelDescriptorOf_<file name>(); the build lists them
// (CMakeLists.txt ROIALIGN_KERNEL_FILES), so a new file registers itself.
#define ROIALIGN_KERNEL_DESCRIPTOR(file) const KernelDescriptor& KernelDescriptorOf_##file()

// The functions of the best target this CPU runs (the public whole-tensor layout transforms' block transposers).
PerDType BestTargetFns();

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_KERNELS_KERNEL_DESCRIPTOR_H_
