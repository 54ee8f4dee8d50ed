// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The scalar reference of docs/semantics.md: the oracle every other implementation is tested against. Both
// layouts, every mode, every dtype (16-bit elements widened to f32 as they are read, each result rounded once to
// the output's type); written for clarity, not speed.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernels/half_float.h"
#include "kernels/kernel_descriptor.h"
#include "kernels/roi_geometry.h"

namespace roialign {
namespace internal {
namespace {

// One bilinear sample: the four weighted taps w*v in the order (y0,x0) (y0,x1) (y1,x0) (y1,x1). Returns false
// when the sample lies outside [-1, H] x [-1, W] (it is then 0 and nothing is read).
template <typename T>
bool SampleTaps(const Problem& p, const MapStrides& map, int64_t b, int64_t c, float y, float x, float taps[4]) {
  const int64_t H = p.height, W = p.width;
  if (!(y >= -1.0f && y <= static_cast<float>(H) && x >= -1.0f && x <= static_cast<float>(W))) return false;
  // The pixels on either side of `pos` along an axis of `size` pixels; beyond the last, pos moves onto it.
  auto neighbours = [](float& pos, int64_t size, int64_t* lo, int64_t* hi) {
    pos = std::max(pos, 0.0f);
    *lo = static_cast<int64_t>(std::floor(pos));
    if (*lo >= size - 1) {
      *lo = *hi = size - 1;
      pos = static_cast<float>(*lo);
    } else {
      *hi = *lo + 1;
    }
  };
  int64_t y0, y1, x0, x1;
  neighbours(y, H, &y0, &y1);
  neighbours(x, W, &x0, &x1);
  const float ly = y - static_cast<float>(y0), lx = x - static_cast<float>(x0);
  const float hy = 1.0f - ly, hx = 1.0f - lx;
  const T* const input = static_cast<const T*>(p.input);
  taps[0] = hy * hx * ToF32(input[map.Offset(b, c, y0, x0)]);
  taps[1] = hy * lx * ToF32(input[map.Offset(b, c, y0, x1)]);
  taps[2] = ly * hx * ToF32(input[map.Offset(b, c, y1, x0)]);
  taps[3] = ly * lx * ToF32(input[map.Offset(b, c, y1, x1)]);
  return true;
}

// Element offsets from the layout table, the same one the planner reads. As the oracle it computes each RoI's
// geometry from the RoI itself rather than reading validation's, so that a fault there cannot hide in both.
template <typename T>
void RoiAlignReference(const Problem& p, int64_t roi_begin, int64_t roi_end, int64_t c_begin, int64_t c_end) {
  const int64_t PH = p.params.pooled_height, PW = p.params.pooled_width;
  const MapStrides map = StridesOf(p.params.layout, p.channels, p.height, p.width);
  const MapStrides output = StridesOf(p.params.layout, p.channels, PH, PW);
  const PoolMode mode = p.params.pool_mode;
  for (int64_t k = roi_begin; k < roi_end; ++k) {
    const RoiRecord roi = RoiAt(p.rois, p.batch_indices, k);
    const AxisGeometry gy = AxisOf(roi.y1, roi.y2, PH, p.params);
    const AxisGeometry gx = AxisOf(roi.x1, roi.x2, PW, p.params);
    const int64_t count = std::max<int64_t>(gy.grid * gx.grid, 1);
    for (int64_t c = c_begin; c < c_end; ++c) {
      for (int64_t ph = 0; ph < PH; ++ph) {
        for (int64_t pw = 0; pw < PW; ++pw) {
          float sum = 0.0f;
          float max = -INFINITY;
          for (int64_t iy = 0; iy < gy.grid; ++iy) {
            const float y = SamplePosition(gy, ph, iy);
            for (int64_t ix = 0; ix < gx.grid; ++ix) {
              const float x = SamplePosition(gx, pw, ix);
              float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
              SampleTaps<T>(p, map, roi.batch, c, y, x, t);  // outside: all taps stay 0
              const float value = t[0] + t[1] + t[2] + t[3];
              sum += value;
              if (mode == PoolMode::kMax) max = std::max(max, value);
              if (mode == PoolMode::kMaxOnnx) max = std::max({max, t[0], t[1], t[2], t[3]});
            }
          }
          float out;
          if (gy.grid * gx.grid == 0) {
            out = 0.0f;  // a bin with no samples is 0 in every mode
          } else if (mode == PoolMode::kAvg) {
            out = sum / static_cast<float>(count);
          } else {
            out = max;
          }
          StoreF32As(out, static_cast<T*>(p.output) + output.Offset(k, c, ph, pw));
        }
      }
    }
  }
}

}  // namespace

// Plain C++ on any CPU, every dtype.
ROIALIGN_KERNEL_DESCRIPTOR(roi_align_reference) {
  static const TargetKernel kReference[] = {{0, PerDTypeTable<KernelFns>([](auto* type) {
                                               KernelFns f;
                                               f.whole_rois = &RoiAlignReference<std::remove_pointer_t<decltype(type)>>;
                                               return f;
                                             })}};
  static const KernelDescriptor kDescriptor = {"roi_align", kReference, 1};
  return kDescriptor;
}

}  // namespace internal
}  // namespace roialign
