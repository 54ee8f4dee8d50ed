// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The layout report's conversion rows (a map transformed to another layout, that layout's kernel, the output
// transformed back) and transform-bandwidth rows, for a map of one level or a pyramid's levels. Every transform is
// the library's own roialign::TransformLayout, on the row's thread count.
#ifndef ROIALIGN_BENCH_CONVERSIONS_H_
#define ROIALIGN_BENCH_CONVERSIONS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/workloads.h"
#include "core/library.h"

namespace roialign {
namespace bench {

// Data held in layout `data`, run by the kernel of layout `kernel`.
struct Conversion {
  Layout data, kernel;
};
// The conversions the report times: NHWC data on the NCHW kernel and the reverse, then per blocked layout b (in
// kBlockedLayouts' order) NCHWb data on the NHWC kernel and NCHW data on the NCHWb kernel.
constexpr Conversion kConversions[8] = {
    {Layout::kNHWC, Layout::kNCHW},     {Layout::kNCHW, Layout::kNHWC},    {Layout::kNCHW4c, Layout::kNHWC},
    {Layout::kNCHW, Layout::kNCHW4c},   {Layout::kNCHW8c, Layout::kNHWC},  {Layout::kNCHW, Layout::kNCHW8c},
    {Layout::kNCHW16c, Layout::kNHWC},  {Layout::kNCHW, Layout::kNCHW16c}};
// The row's path name, "D->K kernel->D" (e.g. "NCHW16c->NHWC kernel->NCHW16c").
std::string ConversionName(const Conversion& c);

// The transforms whose bandwidth the report measures, from the NCHW map.
constexpr Layout kBandwidthLayouts[3] = {Layout::kNCHW16c, Layout::kNCHW8c, Layout::kNHWC};

// The shape of a workload's map: one level, or a pyramid's, each channels x height x width, batch 1.
struct MapShape {
  int64_t channels = 0;
  std::vector<int64_t> heights, widths;
  // Bytes of all levels in `layout` and `dtype` (blocked: padded channels included).
  double Bytes(Layout layout, DType dtype) const;
};

// Buffers for the maps in another layout and for a kernel's output before it is transformed back, each sized for
// the largest layout (NCHW16c-padded f32), so that one scratch serves every row of a workload.
class ConversionScratch {
 public:
  ConversionScratch(const MapShape& shape, int64_t num_rois, int64_t pooled);
  const std::vector<void*>& maps() const { return map_ptrs_; }
  const std::vector<const void*>& const_maps() const { return const_map_ptrs_; }
  void* out() { return out_.data(); }

 private:
  std::vector<AlignedBuffer> maps_;
  std::vector<void*> map_ptrs_;
  std::vector<const void*> const_map_ptrs_;
  AlignedBuffer out_;
};

// Runs a kernel on the maps (one per level, in the kernel's layout) into `out` on `threads` threads.
using KernelOn = std::function<Status(const std::vector<const void*>& maps, void* out, int threads)>;

// The conversion row `c` as a path: each level of `data_maps` (in c.data) transformed to c.kernel into the scratch,
// `kernel` on them, and its output (num_rois x pooled x pooled) transformed back to c.data into `out`. The scratch,
// the maps and `out` must outlive the path.
std::function<Status()> ConversionPath(const Conversion& c, DType dtype, const MapShape& shape,
                                       const std::vector<const void*>& data_maps, KernelOn kernel, int64_t num_rois,
                                       int64_t pooled, ConversionScratch* scratch, void* out, int threads);

// Each level of `maps` (in `from`) transformed to `to` into the scratch's maps, as a path.
std::function<Status()> TransformPath(Layout from, Layout to, DType dtype, const MapShape& shape,
                                      const std::vector<const void*>& maps, ConversionScratch* scratch, int threads);

// Largest |a - b| over the scratch's maps in `layout` against the NCHW f32 maps `nchw` (0 when the transform is
// right: it moves elements, it computes nothing).
double MaxAbsDiffOfMaps(const ConversionScratch& scratch, Layout layout, const MapShape& shape,
                        const std::vector<const void*>& nchw);

}  // namespace bench
}  // namespace roialign

#endif  // ROIALIGN_BENCH_CONVERSIONS_H_
