// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// roi_align_nhwc: channels-last input, vectorized over channels; 16-bit maps are widened to f32 as they are loaded.
// Compiled once per Highway target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/roi_align_nhwc.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <algorithm>

#include "kernels/kernel_descriptor.h"
#include "kernels/roi_align-inl.h"
#include "kernels/row_bands.h"
#include "kernels/scratch.h"

HWY_BEFORE_NAMESPACE();
namespace roialign {
namespace internal {
namespace HWY_NAMESPACE {

// Bytes of tap pixels one pass over a bin's samples may touch before the pass is split into sample-row chunks.
// The bin loop makes one pass per 8 (AVG) or 4 (MAX) vectors of channels; when a large adaptive bin's footprint
// exceeds L2, every pass would refetch it from L3. Chunks keep it in L2 across passes.
constexpr int64_t kBinFootprintBytes = 256 * 1024;

// Per RoI, from the call's geometry: every bin straight from the input, its taps' offsets the map's own.
template <typename T>
void RoiAlignNhwc(const Problem& p, const Pass& pass, int64_t roi_begin, int64_t roi_end, int64_t c_begin,
                  int64_t c_end, Scratch& scratch) {
  const hn::ScalableTag<float> d;
  const int64_t PH = p.params.pooled_height, PW = p.params.pooled_width;
  const int64_t C = p.channels, H = p.height, W = p.width;
  const CallGeometry& g = *pass.geometry;
  const T* const input = static_cast<const T*>(p.input);
  T* const output = static_cast<T*>(p.output);
  const T* const input_end = input + p.batch * H * W * C;
  for (int64_t k = roi_begin; k < roi_end; ++k) {
    const RoiSampling& roi = g.rois[static_cast<size_t>(k)];
    if (pass.band < roi.first_band || pass.band > roi.last_band) continue;  // unbanded: whole in band 0
    const bool banded = pass.band_rows > 0 && roi.split;
    const int64_t gh = roi.gy.grid, gw = roi.gx.grid;
    const ChannelsLast<T> in = {input + roi.batch * H * W * C + c_begin, input_end, W * C, C};
    // Sample rows per chunk: each sample reads 4 pixels of C elements. Sized from C, not from this task's channel
    // range, so that chunking (which changes AVG's rounding) never depends on how threads split the channels.
    const int64_t row_bytes = std::max<int64_t>(1, gw * 4 * C * static_cast<int64_t>(sizeof(T)));
    const int64_t rows_per_chunk = std::max<int64_t>(1, kBinFootprintBytes / row_bytes);
    // AVG only: the call has no runs in the other pool modes (and an offset from their null data is undefined).
    const TapRun* runs = p.params.pool_mode == PoolMode::kAvg ? g.runs.data() + roi.runs : nullptr;
    for (int64_t ph = 0; ph < PH; ++ph) {
      // Sample rows [ib, ie) of this row of bins belong to this pass's band.
      const AxisTap* ty = g.y.data() + roi.y + ph * gh;
      int64_t ib = 0, ie = gh;
      if (banded && !SampleRowsInBand(roi.gy, ty, ph, pass.band_rows, pass.band, pass.num_bands, &ib, &ie)) continue;
      for (int64_t pw = 0; pw < PW; ++pw) {
        const int64_t offset = ((k * PH + ph) * PW + pw) * C + c_begin;
        SeparableBin bin = {nullptr, 0, nullptr, 0, ty, 0, 0, g.x.data() + roi.x + pw * gw, gw, gh * gw, false, false};
        if (p.params.pool_mode == PoolMode::kAvg) {
          bin.cols = g.merged.data() + runs[PH + pw].begin;
          bin.nx = runs[PH + pw].count;
        }
        // Partial state between chunks and bands is in pass.partial.
        for (int64_t iy0 = ib; iy0 == ib || iy0 < ie; iy0 += rows_per_chunk) {
          bin.iy0 = iy0;
          bin.iy1 = std::min(ie, iy0 + rows_per_chunk);
          bin.first = iy0 == 0;
          bin.last = bin.iy1 == gh;
          if (p.params.pool_mode == PoolMode::kAvg && bin.first && bin.last) {  // the whole bin: merged once
            bin.rows = g.merged.data() + runs[ph].begin;
            bin.ny = runs[ph].count;
          } else if (p.params.pool_mode == PoolMode::kAvg) {
            bin.rows = scratch.merged.data();
            bin.ny = MergeTaps(ty + bin.iy0, bin.iy1 - bin.iy0, W * C, scratch.merged.data());
          }
          PoolSeparableBin(d, p.params.pool_mode, in, bin, c_end - c_begin, pass.stream_output,
                           BinOutput<T>{pass.partial + offset, output + offset}, scratch.bin_taps.data());
        }
      }
    }
  }
  if (pass.stream_output) hwy::FlushStream();  // order the non-temporal stores before the caller's barrier
}

TargetKernel NhwcTargetKernel() {
  return {HWY_TARGET, KernelPerDType([](auto* t) { return &RoiAlignNhwc<std::remove_pointer_t<decltype(t)>>; })};
}

}  // namespace HWY_NAMESPACE
}  // namespace internal
}  // namespace roialign
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace roialign {
namespace internal {

const KernelDescriptor& RoiAlignNhwcDescriptor() {
  static TargetKernel (*const kMakers[])() = ROIALIGN_COMPILED_TARGETS(NhwcTargetKernel);
  static const std::vector<TargetKernel> kTargets = CompiledTargets(kMakers);
  PlannerNeeds needs;
  needs.row_bands = true;
  // NHWC ranks above NCHW on the same ISA: it vectorizes over channels directly, while NCHW first builds a
  // channels-last tile.
  static const KernelDescriptor kDescriptor = {"roi_align_nhwc", Layout::kNHWC, 1, needs, kTargets.data(),
                                               kTargets.size()};
  return kDescriptor;
}

}  // namespace internal
}  // namespace roialign
#endif  // HWY_ONCE
