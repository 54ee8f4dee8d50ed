// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "bench/conversions.h"

#include <algorithm>
#include <utility>

#include "core/enums.h"

namespace roialign {
namespace bench {

std::string ConversionName(const Conversion& c) {
  return std::string(ToString(c.data)) + "->" + ToString(c.kernel) + " kernel->" + ToString(c.data);
}

double MapShape::Bytes(Layout layout, DType dtype) const {
  double bytes = 0;
  for (size_t l = 0; l < heights.size(); ++l) {
    bytes += static_cast<double>(internal::StoredChannels(layout, channels) * heights[l] * widths[l] *
                                 internal::BytesOf(dtype));
  }
  return bytes;
}

ConversionScratch::ConversionScratch(const MapShape& shape, int64_t num_rois, int64_t pooled)
    : out_(BufferFloats(static_cast<size_t>(num_rois * internal::StoredChannels(Layout::kNCHW16c, shape.channels) *
                                            pooled * pooled),
                        DType::kF64)) {  // room for the widest dtype
  const int64_t padded = internal::StoredChannels(Layout::kNCHW16c, shape.channels);
  for (size_t l = 0; l < shape.heights.size(); ++l) {
    maps_.emplace_back(BufferFloats(static_cast<size_t>(padded * shape.heights[l] * shape.widths[l]), DType::kF64));
  }
  for (AlignedBuffer& m : maps_) {
    map_ptrs_.push_back(m.data());
    const_map_ptrs_.push_back(m.data());
  }
}

namespace {

// Every level of `maps` from `from` to `to` into `dst`, one call per level.
Status TransformLevels(Layout from, Layout to, DType dtype, const MapShape& shape, const std::vector<const void*>& maps,
                       const std::vector<void*>& dst, int threads) {
  for (size_t l = 0; l < maps.size(); ++l) {
    const Status s = TransformLayout(dtype, from, to, maps[l], 1, shape.channels, shape.heights[l], shape.widths[l],
                                     dst[l], threads);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace

std::function<Status()> ConversionPath(const Conversion& c, DType dtype, const MapShape& shape,
                                       const std::vector<const void*>& data_maps, KernelOn kernel, int64_t num_rois,
                                       int64_t pooled, ConversionScratch* scratch, void* out, int threads) {
  return [c, dtype, shape, data_maps, kernel = std::move(kernel), num_rois, pooled, scratch, out, threads] {
    Status s = TransformLevels(c.data, c.kernel, dtype, shape, data_maps, scratch->maps(), threads);
    if (s.ok()) s = kernel(scratch->const_maps(), scratch->out(), threads);
    if (s.ok()) {
      s = TransformLayout(dtype, c.kernel, c.data, scratch->out(), num_rois, shape.channels, pooled, pooled, out,
                          threads);
    }
    return s;
  };
}

std::function<Status()> TransformPath(Layout from, Layout to, DType dtype, const MapShape& shape,
                                      const std::vector<const void*>& maps, ConversionScratch* scratch, int threads) {
  return [from, to, dtype, shape, maps, scratch, threads] {
    return TransformLevels(from, to, dtype, shape, maps, scratch->maps(), threads);
  };
}

double MaxAbsDiffOfMaps(const ConversionScratch& scratch, Layout layout, const MapShape& shape,
                        const std::vector<const void*>& nchw) {
  double worst = 0;
  for (size_t l = 0; l < nchw.size(); ++l) {
    worst = std::max(worst, MaxAbsDiff(static_cast<const float*>(scratch.maps()[l]), layout,
                                       static_cast<const float*>(nchw[l]), Layout::kNCHW, 1, shape.channels,
                                       shape.heights[l], shape.widths[l]));
  }
  return worst;
}

}  // namespace bench
}  // namespace roialign
