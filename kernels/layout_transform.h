// Internal entry to the layout transform (kernels/layout_transform.cc) for the strategy layer, which turns
// part of a planar map channels-last once for all RoIs. The public whole-map transforms are in roialign.hpp.
#ifndef ROIALIGN_KERNELS_LAYOUT_TRANSFORM_H_
#define ROIALIGN_KERNELS_LAYOUT_TRANSFORM_H_

#include <cstdint>

namespace roialign {
namespace internal {

// dst[px * channels + c] = planes[c * plane_stride + px] for c < channels, px < pixels: a run of `pixels`
// consecutive pixels of each of `channels` planes, channels-last. Threaded like NchwToNhwc.
void PlanesToChannelsLast(const float* planes, int64_t channels, int64_t plane_stride, int64_t pixels, float* dst,
                          int32_t num_threads);

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_KERNELS_LAYOUT_TRANSFORM_H_
