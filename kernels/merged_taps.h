// Merged taps for AVG pooling: a bin's average is separable, sum_samples sum_taps wy*wx*v = sum_r sum_c Wy[r] *
// Wx[c] * v(r, c), where Wy[r] sums the y weights all of the bin's samples give pixel row r (likewise Wx). Samples
// closer than a pixel share rows and columns, so a bin then reads each distinct pixel once instead of once per
// sample that touches it (adaptive grids: about (g+1)^2 loads instead of 4g^2).
#ifndef ROIALIGN_KERNELS_MERGED_TAPS_H_
#define ROIALIGN_KERNELS_MERGED_TAPS_H_

#include <cstdint>

#include "kernels/roi_geometry.h"

namespace roialign {
namespace internal {

// One distinct pixel row (or column) of a bin: its offset in the data and its summed weight.
struct MergedTap {
  int64_t offset;
  float weight;
};

// Merges the valid taps[0, n) of one axis into out (room for 2n entries) and returns the entry count. Taps of
// consecutive samples touching the same pixel are summed in sample order, so the weights depend only on the
// geometry (never on threads or channel blocks). Positions are monotonic in the sample index, so on the usual
// boxes each pixel appears once. A tap of weight 0 stays an entry of its own and nothing merges into it: the
// direct form multiplies it too, and 0 * Inf is NaN, which a summed weight would lose (weights are >= 0, so a
// sum of positive weights is never 0).
inline int64_t MergeTaps(const AxisTap* taps, int64_t n, int64_t stride, MergedTap* out) {
  int64_t m = 0;
  auto add = [&](int64_t index, float weight) {
    const int64_t offset = index * stride;
    if (m > 0 && out[m - 1].offset == offset && weight != 0.0f && out[m - 1].weight != 0.0f) {
      out[m - 1].weight += weight;
    } else {
      out[m++] = {offset, weight};
    }
  };
  for (int64_t i = 0; i < n; ++i) {
    if (!taps[i].valid) continue;  // an outside sample contributes exactly 0
    add(taps[i].lo, taps[i].w_lo);
    add(taps[i].hi, taps[i].w_hi);
  }
  return m;
}

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_KERNELS_MERGED_TAPS_H_
