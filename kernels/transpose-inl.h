// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Per-target transpose of a strided matrix in register tiles: f32 in 8x8 tiles of 256-bit registers on x86 AVX2
// and up, else 4x4 tiles of 128-bit ones, optionally narrowed to the output's element type as it is stored, and
// 16-bit elements in 8x8 tiles of 128-bit registers. Shared by the layout transform and the planar kernel, which
// turns its channels-last f32 bins planar. Included once per Highway target (toggle guard).
#if defined(ROIALIGN_KERNELS_TRANSPOSE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ROIALIGN_KERNELS_TRANSPOSE_INL_H_
#undef ROIALIGN_KERNELS_TRANSPOSE_INL_H_
#else
#define ROIALIGN_KERNELS_TRANSPOSE_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>

#include "kernels/convert-inl.h"
#include "kernels/half_float.h"

HWY_BEFORE_NAMESPACE();
namespace roialign {
namespace internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Rows of f32 that one register tile of TransposeTile spans: 8 where 256-bit registers exist (x86 AVX2 and up),
// else 4. Callers that transpose a few columns at a time take this many, so every tile is a full one.
#undef ROIALIGN_TRANSPOSE_F32_8X8
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
#define ROIALIGN_TRANSPOSE_F32_8X8 1
inline constexpr int64_t kTransposeTileF32 = 8;
#else
#define ROIALIGN_TRANSPOSE_F32_8X8 0
inline constexpr int64_t kTransposeTileF32 = 4;
#endif

// dst[j * dst_stride + i] = src[i * src_stride + j] for i in [i, i + 4), j in [j0, j1), rounded to TOut: 4x4
// tiles in 128-bit registers, then single elements.
template <typename TOut>
HWY_INLINE void TransposeFourRows(const float* src, int64_t src_stride, int64_t dst_stride, int64_t i, int64_t j0,
                                  int64_t j1, TOut* dst) {
  int64_t j = j0;
#if HWY_TARGET != HWY_SCALAR
  const hn::FixedTag<float, 4> d;
  const hn::Repartition<uint64_t, decltype(d)> d64;
  for (; j + 4 <= j1; j += 4) {
    const float* s = src + i * src_stride + j;
    const auto r0 = hn::LoadU(d, s), r1 = hn::LoadU(d, s + src_stride);
    const auto r2 = hn::LoadU(d, s + 2 * src_stride), r3 = hn::LoadU(d, s + 3 * src_stride);
    // (a0 b0 a1 b1), (c0 d0 c1 d1), (a2 b2 a3 b3), (c2 d2 c3 d3)
    const auto t0 = hn::BitCast(d64, hn::InterleaveLower(d, r0, r1));
    const auto t1 = hn::BitCast(d64, hn::InterleaveLower(d, r2, r3));
    const auto t2 = hn::BitCast(d64, hn::InterleaveUpper(d, r0, r1));
    const auto t3 = hn::BitCast(d64, hn::InterleaveUpper(d, r2, r3));
    TOut* o = dst + j * dst_stride + i;
    StoreNarrow(d, hn::BitCast(d, hn::InterleaveLower(d64, t0, t1)), o);
    StoreNarrow(d, hn::BitCast(d, hn::InterleaveUpper(d64, t0, t1)), o + dst_stride);
    StoreNarrow(d, hn::BitCast(d, hn::InterleaveLower(d64, t2, t3)), o + 2 * dst_stride);
    StoreNarrow(d, hn::BitCast(d, hn::InterleaveUpper(d64, t2, t3)), o + 3 * dst_stride);
  }
#endif
  for (; j < j1; ++j) {
    for (int64_t ii = i; ii < i + 4; ++ii) StoreF32As(src[ii * src_stride + j], dst + j * dst_stride + ii);
  }
}

#if ROIALIGN_TRANSPOSE_F32_8X8
// One 8x8 tile at src (rows src_stride apart) into dst (rows dst_stride apart), in 256-bit registers: two
// in-block interleave stages, then the 128-bit halves swapped across registers. A third of the shuffles and
// half the stores per element of 4x4 tiles.
template <typename TOut>
HWY_INLINE void Transpose8x8(const float* s, int64_t src_stride, int64_t dst_stride, TOut* o) {
  const hn::FixedTag<float, 8> d;
  const hn::Repartition<uint64_t, decltype(d)> d64;
  const auto r0 = hn::LoadU(d, s), r1 = hn::LoadU(d, s + src_stride);
  const auto r2 = hn::LoadU(d, s + 2 * src_stride), r3 = hn::LoadU(d, s + 3 * src_stride);
  const auto r4 = hn::LoadU(d, s + 4 * src_stride), r5 = hn::LoadU(d, s + 5 * src_stride);
  const auto r6 = hn::LoadU(d, s + 6 * src_stride), r7 = hn::LoadU(d, s + 7 * src_stride);
  // Per 128-bit block (columns 0-3 | 4-7): pairs of rows, then quads; q0 holds column 0 | 4 of rows 0-3.
  const auto a01 = hn::BitCast(d64, hn::InterleaveLower(d, r0, r1));
  const auto b01 = hn::BitCast(d64, hn::InterleaveUpper(d, r0, r1));
  const auto a23 = hn::BitCast(d64, hn::InterleaveLower(d, r2, r3));
  const auto b23 = hn::BitCast(d64, hn::InterleaveUpper(d, r2, r3));
  const auto a45 = hn::BitCast(d64, hn::InterleaveLower(d, r4, r5));
  const auto b45 = hn::BitCast(d64, hn::InterleaveUpper(d, r4, r5));
  const auto a67 = hn::BitCast(d64, hn::InterleaveLower(d, r6, r7));
  const auto b67 = hn::BitCast(d64, hn::InterleaveUpper(d, r6, r7));
  const auto q0 = hn::BitCast(d, hn::InterleaveLower(d64, a01, a23));
  const auto q1 = hn::BitCast(d, hn::InterleaveUpper(d64, a01, a23));
  const auto q2 = hn::BitCast(d, hn::InterleaveLower(d64, b01, b23));
  const auto q3 = hn::BitCast(d, hn::InterleaveUpper(d64, b01, b23));
  const auto h0 = hn::BitCast(d, hn::InterleaveLower(d64, a45, a67));
  const auto h1 = hn::BitCast(d, hn::InterleaveUpper(d64, a45, a67));
  const auto h2 = hn::BitCast(d, hn::InterleaveLower(d64, b45, b67));
  const auto h3 = hn::BitCast(d, hn::InterleaveUpper(d64, b45, b67));
  StoreNarrow(d, hn::ConcatLowerLower(d, h0, q0), o);
  StoreNarrow(d, hn::ConcatLowerLower(d, h1, q1), o + dst_stride);
  StoreNarrow(d, hn::ConcatLowerLower(d, h2, q2), o + 2 * dst_stride);
  StoreNarrow(d, hn::ConcatLowerLower(d, h3, q3), o + 3 * dst_stride);
  StoreNarrow(d, hn::ConcatUpperUpper(d, h0, q0), o + 4 * dst_stride);
  StoreNarrow(d, hn::ConcatUpperUpper(d, h1, q1), o + 5 * dst_stride);
  StoreNarrow(d, hn::ConcatUpperUpper(d, h2, q2), o + 6 * dst_stride);
  StoreNarrow(d, hn::ConcatUpperUpper(d, h3, q3), o + 7 * dst_stride);
}
#endif

// dst[j * dst_stride + i] = src[i * src_stride + j] for i in [i0, i1), j in [j0, j1), rounded to TOut.
template <typename TOut>
HWY_INLINE void TransposeTile(const float* src, int64_t src_stride, int64_t dst_stride, int64_t i0, int64_t i1,
                              int64_t j0, int64_t j1, TOut* dst) {
  int64_t i = i0;
#if ROIALIGN_TRANSPOSE_F32_8X8
  for (; i + 8 <= i1; i += 8) {
    int64_t j = j0;
    for (; j + 8 <= j1; j += 8) {
      Transpose8x8(src + i * src_stride + j, src_stride, dst_stride, dst + j * dst_stride + i);
    }
    if (j < j1) {
      TransposeFourRows(src, src_stride, dst_stride, i, j, j1, dst);
      TransposeFourRows(src, src_stride, dst_stride, i + 4, j, j1, dst);
    }
  }
#endif
#if HWY_TARGET != HWY_SCALAR
  for (; i + 4 <= i1; i += 4) TransposeFourRows(src, src_stride, dst_stride, i, j0, j1, dst);
#endif
  for (; i < i1; ++i) {
    for (int64_t j = j0; j < j1; ++j) StoreF32As(src[i * src_stride + j], dst + j * dst_stride + i);
  }
}

// The same for 16-bit elements (moved, not converted), in 8x8 tiles.
HWY_INLINE void TransposeTile(const uint16_t* src, int64_t src_stride, int64_t dst_stride, int64_t i0, int64_t i1,
                              int64_t j0, int64_t j1, uint16_t* dst) {
  int64_t i = i0;
#if HWY_TARGET != HWY_SCALAR
  const hn::FixedTag<uint16_t, 8> d;
  const hn::Repartition<uint32_t, decltype(d)> d32;
  const hn::Repartition<uint64_t, decltype(d)> d64;
  for (; i + 8 <= i1; i += 8) {
    int64_t j = j0;
    for (; j + 8 <= j1; j += 8) {
      const uint16_t* s = src + i * src_stride + j;
      const auto r0 = hn::LoadU(d, s), r1 = hn::LoadU(d, s + src_stride);
      const auto r2 = hn::LoadU(d, s + 2 * src_stride), r3 = hn::LoadU(d, s + 3 * src_stride);
      const auto r4 = hn::LoadU(d, s + 4 * src_stride), r5 = hn::LoadU(d, s + 5 * src_stride);
      const auto r6 = hn::LoadU(d, s + 6 * src_stride), r7 = hn::LoadU(d, s + 7 * src_stride);
      // Pairs of rows: 32-bit lane k holds column k of both (a: columns 0-3, b: 4-7).
      const auto a01 = hn::BitCast(d32, hn::InterleaveLower(d, r0, r1));
      const auto b01 = hn::BitCast(d32, hn::InterleaveUpper(d, r0, r1));
      const auto a23 = hn::BitCast(d32, hn::InterleaveLower(d, r2, r3));
      const auto b23 = hn::BitCast(d32, hn::InterleaveUpper(d, r2, r3));
      const auto a45 = hn::BitCast(d32, hn::InterleaveLower(d, r4, r5));
      const auto b45 = hn::BitCast(d32, hn::InterleaveUpper(d, r4, r5));
      const auto a67 = hn::BitCast(d32, hn::InterleaveLower(d, r6, r7));
      const auto b67 = hn::BitCast(d32, hn::InterleaveUpper(d, r6, r7));
      // Quads of rows: 64-bit lane k holds column k (or k + 2, ...) of rows 0-3 (q) or 4-7 (h).
      const auto q01 = hn::BitCast(d64, hn::InterleaveLower(d32, a01, a23));
      const auto q23 = hn::BitCast(d64, hn::InterleaveUpper(d32, a01, a23));
      const auto q45 = hn::BitCast(d64, hn::InterleaveLower(d32, b01, b23));
      const auto q67 = hn::BitCast(d64, hn::InterleaveUpper(d32, b01, b23));
      const auto h01 = hn::BitCast(d64, hn::InterleaveLower(d32, a45, a67));
      const auto h23 = hn::BitCast(d64, hn::InterleaveUpper(d32, a45, a67));
      const auto h45 = hn::BitCast(d64, hn::InterleaveLower(d32, b45, b67));
      const auto h67 = hn::BitCast(d64, hn::InterleaveUpper(d32, b45, b67));
      uint16_t* o = dst + j * dst_stride + i;
      hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, q01, h01)), d, o);
      hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, q01, h01)), d, o + dst_stride);
      hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, q23, h23)), d, o + 2 * dst_stride);
      hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, q23, h23)), d, o + 3 * dst_stride);
      hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, q45, h45)), d, o + 4 * dst_stride);
      hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, q45, h45)), d, o + 5 * dst_stride);
      hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, q67, h67)), d, o + 6 * dst_stride);
      hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, q67, h67)), d, o + 7 * dst_stride);
    }
    for (; j < j1; ++j) {
      for (int64_t ii = i; ii < i + 8; ++ii) dst[j * dst_stride + ii] = src[ii * src_stride + j];
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
