// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The layout report's backward inputs: dY in every layout and dtype a backward row runs, and which layouts those are.
#ifndef ROIALIGN_BENCH_BACKWARD_DY_H_
#define ROIALIGN_BENCH_BACKWARD_DY_H_

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "bench/workloads.h"
#include "core/enums.h"

namespace roialign {
namespace bench {

// dY for the backward rows: one logical K x C x P x P tensor of values in [-1, 1) (the map's first values,
// repeated), in each layout and dtype a row runs, built when first asked for (16-bit: rounded to nearest even;
// f64: widened).
class BackwardDy {
 public:
  BackwardDy(const AlignedVector<float>& values, int64_t num_rois, int64_t channels, int64_t pooled);
  const void* Get(Layout layout, DType dtype);

 private:
  const AlignedBuffer& F32(Layout layout);
  int64_t K_, C_, P_;
  AlignedBuffer nchw_;
  std::map<Layout, AlignedBuffer> f32_;
  std::map<std::pair<Layout, DType>, AlignedVector<uint16_t>> half_;
  std::map<Layout, AlignedVector<double>> f64_;
};

// The kernel layouts whose backward is timed in `dtype`: NCHW and NHWC, and the blocked ones in f32 (whose maps the
// workloads build in f32 only).
std::vector<Layout> BackwardLayouts(DType dtype);

}  // namespace bench
}  // namespace roialign

#endif  // ROIALIGN_BENCH_BACKWARD_DY_H_
