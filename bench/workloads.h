// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The embedded workloads of docs/performance-model.md (no input files) and their roofline accounting.
#ifndef ROIALIGN_BENCH_WORKLOADS_H_
#define ROIALIGN_BENCH_WORKLOADS_H_

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "core/enums.h"
#include "core/library.h"

namespace roialign {
namespace bench {

struct WorkloadSpec {
  std::string name;
  int64_t channels, height, width, num_rois;
  int64_t pooled;
  int32_t sampling_ratio;
  CoordinateMode coordinate_mode;
  PoolMode pool_mode;
  float spatial_scale;
  float image_width, image_height;  // RoIs are drawn on this image
  float min_roi, max_roi;           // log-uniform RoI side lengths, image pixels
  // Rotated RoIs (docs/semantics.md#rotated-rois): the default workload's boxes (the same RNG draws), each turned
  // by an angle uniform over [-max_angle, max_angle] degrees (DEGREES, counter-clockwise, HALF_PIXEL: detectron2).
  RoiKind roi_kind = RoiKind::kAxisAligned;
  float max_angle = 0;
};

// default (256x200x272, 1000 RoIs 16-512 px, 7x7, ratio 2), pooled14, adaptive (HALF_PIXEL, Detectron2),
// rois100, rois20 (few RoIs: the NCHW kernel's per-RoI tile path), l3 (a 256x50x68 map that fits in L3), rotated
// (default's map and boxes as rotated RoIs, angles uniform over [-90, 90] degrees, detectron2's convention).
const std::vector<WorkloadSpec>& StandardWorkloads();
// Null if unknown.
const WorkloadSpec* FindWorkload(const std::string& name);

// Vectors aligned to 64 bytes, as engines allocate tensors (PyTorch, ONNX Runtime, OpenVINO and TVM all do). A
// std::vector of a few MB comes from mmap at 16 bytes past a page, where every 64-byte load of the map straddles
// two cache lines: on the AVX-512 VM the NHWC kernel took 1.08-1.13x longer on such a map (docs/layouts.md,
// "Alignment"), which no engine's caller would see.
template <typename T>
struct Align64Allocator {
  using value_type = T;
  Align64Allocator() = default;
  template <typename U>
  Align64Allocator(const Align64Allocator<U>&) {}  // NOLINT: allocators convert implicitly
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64})); }
  void deallocate(T* p, size_t) { ::operator delete(p, std::align_val_t{64}); }
  template <typename U>
  bool operator==(const Align64Allocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const Align64Allocator<U>&) const { return false; }
};
template <typename T>
using AlignedVector = std::vector<T, Align64Allocator<T>>;

// The backward's accounting (dX from dY, docs/performance-model.md "The backward's limit"), f32 bytes like
// Accounting's; Bytes() gives them for another dtype.
struct BackwardAccounting {
  double fmas = 0;       // the forward's direct count: the AVG backward spreads every sample's 4 taps, the MAX
                         // modes' argmax search computes every sample
  double ops_bound = 0;  // operations any backward needs: the forward's D - B in the MAX modes (the argmax search
                         // combines what the max does), 0 in AVG
  double dy_bytes = 0;   // the dY elements dX depends on: AVG bins with a valid sample, MAX bins whose every sample
                         // is valid (an argmax outside the map sends nothing back), times C * 4
  double dx_bytes = 0;   // every element of dX (the backward overwrites all of it): C * H * W * 4, over every level
  double map_bytes = 0;  // the map the MAX modes read to find each bin's argmax: the forward's distinct input bytes;
                         // 0 in AVG, which does not read the map
  // What the taps' accumulation moves, for the load_gb_per_s counter, not the limit (an accumulator can stay in a
  // core's caches): AVG each distinct pixel of each bin read and written once in the f32 accumulator (2x the
  // forward's loaded bytes, whatever the dtype), MAX modes the forward's loads of the argmax search.
  double loaded_bytes = 0;
  bool loaded_bytes_f32 = false;  // true in AVG: the accumulator is f32 in every dtype
};

// A workload's roofline accounting (bench/limit.h), the same for a single-level workload and for the pyramid (summed
// over its levels). Bytes are for f32 elements; Bytes() gives them for another dtype.
struct Accounting {
  double fmas = 0;       // direct method: sum over RoIs of C*PH*PW*4*grid_h*grid_w
  double ops_bound = 0;  // operations any kernel needs: C * RoiOpsLowerBound summed over RoIs (bench/limit.h)
  double output_bytes = 0;
  double distinct_input_bytes = 0;  // pixels any tap touches, times C * 4
  // What the kernels' bin loops load, times C * 4: AVG one load per distinct pixel of each bin (merged taps),
  // MAX modes 4 per valid sample. Over the measured time it is the load bandwidth the kernel sustains.
  double loaded_bytes = 0;
  // The f32 map's cache lines the bins read, each bin's counted once (RoiBinLines, bench/limit.h), summed over
  // RoIs: [0] NHWC, [1 + BlockedIndex(b)] blocked layout b.
  double bin_lines[4] = {};
  BackwardAccounting backward;  // dX of every level
};

// A workload's data: an NCHW map and its NHWC copy (values in [-1, 1]), each also stored as f16 and bf16 (rounded
// to nearest even) and f64, [K,5] RoIs (also in double, for f64), deterministic. A rotated workload's RoIs are
// [K,6] rows (batch, cx, cy, w, h, angle), and it also keeps the same boxes with every angle 0 ([K,6]) and as
// axis-aligned [K,5] rows (cx -+ w/2, cy -+ h/2), which the report times beside it (HALF_PIXEL, as rotated RoIs are
// aligned): its accounting is the rotated RoIs' only.
struct Workload : Accounting {
  WorkloadSpec spec;
  AlignedVector<float> nchw, nhwc;
  std::vector<float> rois;
  AlignedVector<uint16_t> nchw_f16, nhwc_f16, nchw_bf16, nhwc_bf16;
  AlignedVector<double> nchw_f64, nhwc_f64;
  std::vector<double> rois_f64;
  std::vector<float> rois_angle0, rois_axis;  // rotated workloads only (above)
  // The f32 map in the blocked layouts, kBlockedLayouts' order (16-bit blocked maps are not built).
  AlignedVector<float> blocked[3];
  Params ParamsFor(Layout layout, DType dtype = DType::kF32) const;
  Inputs InputsFor(Layout layout, DType dtype = DType::kF32) const;
  // A rotated workload's boxes as axis-aligned RoIs (rois_axis): ParamsFor's with roi_kind axis-aligned and HALF_PIXEL
  // (the angle's unit and direction left at their defaults), and the inputs with those RoIs (f32, f16, bf16 dtypes).
  Params AxisAlignedParamsFor(Layout layout, DType dtype = DType::kF32) const;
  Inputs AxisAlignedInputsFor(Layout layout, DType dtype = DType::kF32) const;
  // The inputs with the rotated RoIs at angle 0 (rois_angle0; f32, f16, bf16 dtypes).
  Inputs Angle0InputsFor(Layout layout, DType dtype = DType::kF32) const;
  // The map in `layout` and `dtype`; null for a blocked layout in another dtype than f32.
  const void* Map(Layout layout, DType dtype) const;
  size_t OutputSize() const { return static_cast<size_t>(spec.num_rois * spec.channels * spec.pooled * spec.pooled); }
};
Workload MakeWorkload(const WorkloadSpec& spec);

// The blocked layouts the report times beside NCHW and NHWC.
constexpr Layout kBlockedLayouts[3] = {Layout::kNCHW4c, Layout::kNCHW8c, Layout::kNCHW16c};
// Index of a blocked layout in kBlockedLayouts.
size_t BlockedIndex(Layout layout);
// An [N][C][H][W] f32 tensor copied to `to` (StridesOf): padded channels are zero.
AlignedVector<float> FromNchw(const float* nchw, int64_t n, int64_t c, int64_t h, int64_t w, Layout to);
// Largest |a - b| over the logical channels of two [N][C][H][W] tensors held in layouts `la` and `lb`.
double MaxAbsDiff(const float* a, Layout la, const float* b, Layout lb, int64_t n, int64_t c, int64_t h, int64_t w);

// The FPN workload (docs/multi-level.md): P2-P5 of a 1088x800 image (200x272, 100x136, 50x68, 25x34), C = 256,
// 1000 RoIs log-uniform 16-512 px, 7x7, ratio 2, LEGACY, AVG, f32, each RoI on its level by the SCALE rule
// (canonical 224 px at P4), deterministic; its accounting is summed over the levels.
struct PyramidWorkload : Accounting {
  std::string name = "fpn";
  int64_t channels = 256, num_rois = 1000, pooled = 7;
  int32_t sampling_ratio = 2;
  std::vector<float> scales;
  std::vector<int64_t> heights, widths;
  std::vector<AlignedVector<float>> nchw, nhwc;  // one map per level
  std::vector<AlignedVector<float>> blocked[3];   // per kBlockedLayouts entry, one map per level
  std::vector<float> rois;                     // [K,5]
  std::vector<int32_t> levels;                 // each RoI's level under the SCALE rule
  MultiLevelParams ParamsFor(Layout layout) const;
  // Single-level attributes of level l (its scale).
  Params LevelParams(Layout layout, size_t l) const;
  std::vector<LevelMap> MapsFor(Layout layout) const;
  // The call's inputs over `maps` (from MapsFor, which must outlive them): all RoIs, one image.
  MultiLevelInputs InputsFor(const std::vector<LevelMap>& maps) const;
  size_t OutputSize() const { return static_cast<size_t>(num_rois * channels * pooled * pooled); }
};
PyramidWorkload MakePyramidWorkload();

// The pyramid's RoIs level by level with single-level kernels: each level's RoIs gathered once (Init), each level's
// outputs written to consecutive slices of `out` (no scatter). The baseline a multi-level call is held to.
class LevelByLevel {
 public:
  Status Init(const PyramidWorkload& w, const std::string& target, Layout layout);
  Status Run(void* out, int32_t threads) const;

 private:
  std::vector<KernelHandle> kernels_;
  std::vector<Inputs> inputs_;
  std::vector<std::vector<float>> rois_;
  size_t per_roi_ = 0;
};

// f32 byte counts scaled to `dtype`'s element size.
double Bytes(double f32_bytes, DType dtype);
// A 64-byte aligned float buffer, as engines allocate tensors (the kernels' streaming stores need alignment),
// zeroed so that its pages are faulted in before timing.
using AlignedBuffer = AlignedVector<float>;
// Floats of an AlignedBuffer that holds `elements` of `dtype`.
inline size_t BufferFloats(size_t elements, DType dtype) {
  return (elements * static_cast<size_t>(internal::BytesOf(dtype)) + sizeof(float) - 1) / sizeof(float);
}

}  // namespace bench
}  // namespace roialign

#endif  // ROIALIGN_BENCH_WORKLOADS_H_
