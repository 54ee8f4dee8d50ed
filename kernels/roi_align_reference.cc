// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The scalar reference of docs/semantics.md: the oracle every other implementation is tested against. Both
// layouts, every mode, every dtype (16-bit elements widened to f32 as they are read, each result rounded once to
// the output's type); written for clarity, not speed.
#include <algorithm>
#include <type_traits>

#include "kernels/half_float.h"
#include "kernels/kernel_descriptor.h"
#include "kernels/roi_align_reference.h"
#include "kernels/roi_geometry.h"

namespace roialign {
namespace internal {
namespace {

// Element offsets from the layout table, the same one the planner reads; each RoI's geometry from its own row
// (ReferenceSampling), axis-aligned or rotated.
template <typename T, typename R = ComputeOf<T>>
void RoiAlignReference(const Problem& p, int64_t roi_begin, int64_t roi_end, int64_t c_begin, int64_t c_end) {
  const int64_t PH = p.params.pooled_height, PW = p.params.pooled_width;
  const MapStrides map = StridesOf(p.params.layout, p.channels, p.height, p.width);
  const MapStrides output = StridesOf(p.params.layout, p.channels, PH, PW);
  const PoolMode mode = p.params.pool_mode;
  for (int64_t k = roi_begin; k < roi_end; ++k) {
    const RoiSamplingOf<R> roi = ReferenceSampling<R>(p, k);
    const AxisGeometryOf<R>& gy = roi.axes.gy;
    const AxisGeometryOf<R>& gx = roi.axes.gx;
    const int64_t count = std::max<int64_t>(gy.grid * gx.grid, 1);
    for (int64_t c = c_begin; c < c_end; ++c) {
      for (int64_t ph = 0; ph < PH; ++ph) {
        for (int64_t pw = 0; pw < PW; ++pw) {
          const PooledBinOf<R> bin = PoolBinOf<T>(p, map, c, roi, ph, pw);
          R out;
          if (gy.grid * gx.grid == 0) {
            out = 0;  // a bin with no samples is 0 in every mode
          } else if (mode == PoolMode::kAvg) {
            out = bin.sum / static_cast<R>(count);
          } else {
            out = bin.max;
          }
          Narrow(out, static_cast<T*>(p.output) + output.Offset(k, c, ph, pw));
        }
      }
    }
  }
}

// The forward and backward entry points of every dtype.
PerDType ReferenceFns() {
  PerDType fns = PerDTypeTable<KernelFns>([](auto* type) {
    KernelFns f;
    f.whole_rois = &RoiAlignReference<std::remove_pointer_t<decltype(type)>>;
    return f;
  });
  const auto backward = BackwardReferenceFns();
  for (size_t d = 0; d < fns.size(); ++d) fns[d].whole_rois_backward = backward[d];
  return fns;
}

}  // namespace

// Plain C++ on any CPU, every dtype.
ROIALIGN_KERNEL_DESCRIPTOR(roi_align_reference) {
  static const TargetKernel kReference[] = {{0, ReferenceFns()}};
  static const KernelDescriptor kDescriptor = {"roi_align", kReference, 1};
  return kDescriptor;
}

}  // namespace internal
}  // namespace roialign
