// Per-target transpose of a strided float matrix in 4x4 tiles held in 128-bit registers (two interleave
// stages). Shared by the layout transform and the planar kernel, which turns its channels-last bins planar.
// Included once per Highway target (toggle guard).
#if defined(ROIALIGN_KERNELS_TRANSPOSE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ROIALIGN_KERNELS_TRANSPOSE_INL_H_
#undef ROIALIGN_KERNELS_TRANSPOSE_INL_H_
#else
#define ROIALIGN_KERNELS_TRANSPOSE_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>

HWY_BEFORE_NAMESPACE();
namespace roialign {
namespace internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// dst[j * dst_stride + i] = src[i * src_stride + j] for i in [i0, i1), j in [j0, j1).
HWY_INLINE void TransposeTile(const float* src, int64_t src_stride, int64_t dst_stride, int64_t i0, int64_t i1,
                              int64_t j0, int64_t j1, float* dst) {
  int64_t i = i0;
#if HWY_TARGET != HWY_SCALAR
  const hn::FixedTag<float, 4> d;
  const hn::Repartition<uint64_t, decltype(d)> d64;
  for (; i + 4 <= i1; i += 4) {
    int64_t j = j0;
    for (; j + 4 <= j1; j += 4) {
      const float* s = src + i * src_stride + j;
      const auto r0 = hn::LoadU(d, s), r1 = hn::LoadU(d, s + src_stride);
      const auto r2 = hn::LoadU(d, s + 2 * src_stride), r3 = hn::LoadU(d, s + 3 * src_stride);
      // (a0 b0 a1 b1), (c0 d0 c1 d1), (a2 b2 a3 b3), (c2 d2 c3 d3)
      const auto t0 = hn::BitCast(d64, hn::InterleaveLower(d, r0, r1));
      const auto t1 = hn::BitCast(d64, hn::InterleaveLower(d, r2, r3));
      const auto t2 = hn::BitCast(d64, hn::InterleaveUpper(d, r0, r1));
      const auto t3 = hn::BitCast(d64, hn::InterleaveUpper(d, r2, r3));
      float* o = dst + j * dst_stride + i;
      hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, t0, t1)), d, o);
      hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, t0, t1)), d, o + dst_stride);
      hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, t2, t3)), d, o + 2 * dst_stride);
      hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, t2, t3)), d, o + 3 * dst_stride);
    }
    for (; j < j1; ++j) {
      for (int64_t ii = i; ii < i + 4; ++ii) dst[j * dst_stride + ii] = src[ii * src_stride + j];
    }
  }
#endif
  for (; i < i1; ++i) {
    for (int64_t j = j0; j < j1; ++j) dst[j * dst_stride + i] = src[i * src_stride + j];
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace internal
}  // namespace roialign
HWY_AFTER_NAMESPACE();

#endif  // ROIALIGN_KERNELS_TRANSPOSE_INL_H_
