// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Per-target transpose of a strided matrix in register tiles, all made of one 4x4 transpose of 32-bit lanes: f32 in
// 8x8 tiles of 256-bit registers on x86 AVX2 and up, else 4x4 tiles of 128-bit ones, optionally narrowed to the
// output's element type as it is stored, and 16-bit elements in 8x8 tiles of 128-bit registers (8x4 and 4x8 where
// a side is a 4-wide group). Shared by the layout transforms and the planar maps' drivers, which turn channels-last f32
// bins planar; f64 in 2x2 tiles of 128-bit registers. Included once per Highway target (toggle guard).
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

#if HWY_TARGET != HWY_SCALAR
// The one register transpose every tile below is made of: within each 128-bit block of four 32-bit lanes, lane j
// of v_i becomes lane i of v_j (pairs of rows interleaved, then pairs of pairs).
template <class D, class V>
HWY_INLINE void Transpose4x4(D d, V& v0, V& v1, V& v2, V& v3) {
  const hn::Repartition<uint64_t, D> d64;
  // Each pair of rows is used up before the next is read: GCC otherwise reloads rows it ran out of registers for.
  const auto t0 = hn::BitCast(d64, hn::InterleaveLower(d, v0, v1));
  const auto t2 = hn::BitCast(d64, hn::InterleaveUpper(d, v0, v1));
  const auto t1 = hn::BitCast(d64, hn::InterleaveLower(d, v2, v3));
  const auto t3 = hn::BitCast(d64, hn::InterleaveUpper(d, v2, v3));
  v0 = hn::BitCast(d, hn::InterleaveLower(d64, t0, t1));
  v1 = hn::BitCast(d, hn::InterleaveUpper(d64, t0, t1));
  v2 = hn::BitCast(d, hn::InterleaveLower(d64, t2, t3));
  v3 = hn::BitCast(d, hn::InterleaveUpper(d64, t2, t3));
}
#endif

// dst[j * dst_stride + i] = src[i * src_stride + j] for i in [i, i + 4), j in [j0, j1), rounded to TOut: 4x4
// tiles in 128-bit registers, then single elements.
template <typename TOut>
HWY_INLINE void TransposeFourRows(const float* src, int64_t src_stride, int64_t dst_stride, int64_t i, int64_t j0,
                                  int64_t j1, TOut* dst) {
  int64_t j = j0;
#if HWY_TARGET != HWY_SCALAR
  const hn::FixedTag<float, 4> d;
  for (; j + 4 <= j1; j += 4) {
    const float* s = src + i * src_stride + j;
    auto r0 = hn::LoadU(d, s), r1 = hn::LoadU(d, s + src_stride);
    auto r2 = hn::LoadU(d, s + 2 * src_stride), r3 = hn::LoadU(d, s + 3 * src_stride);
    Transpose4x4(d, r0, r1, r2, r3);
    TOut* o = dst + j * dst_stride + i;
    StoreNarrow(d, r0, o);
    StoreNarrow(d, r1, o + dst_stride);
    StoreNarrow(d, r2, o + 2 * dst_stride);
    StoreNarrow(d, r3, o + 3 * dst_stride);
  }
#endif
  for (; j < j1; ++j) {
    for (int64_t ii = i; ii < i + 4; ++ii) StoreF32As(src[ii * src_stride + j], dst + j * dst_stride + ii);
  }
}

#if ROIALIGN_TRANSPOSE_F32_8X8
// One 8x8 tile at src (rows src_stride apart) into dst (rows dst_stride apart), in 256-bit registers: the 4x4
// transposes of both halves of the rows, then the 128-bit halves swapped across registers. A third of the
// shuffles and half the stores per element of 4x4 tiles.
template <typename TOut>
HWY_INLINE void Transpose8x8(const float* s, int64_t src_stride, int64_t dst_stride, TOut* o) {
  const hn::FixedTag<float, 8> d;
  auto r0 = hn::LoadU(d, s), r1 = hn::LoadU(d, s + src_stride);
  auto r2 = hn::LoadU(d, s + 2 * src_stride), r3 = hn::LoadU(d, s + 3 * src_stride);
  auto r4 = hn::LoadU(d, s + 4 * src_stride), r5 = hn::LoadU(d, s + 5 * src_stride);
  auto r6 = hn::LoadU(d, s + 6 * src_stride), r7 = hn::LoadU(d, s + 7 * src_stride);
  Transpose4x4(d, r0, r1, r2, r3);  // r_j: column j | j + 4 of rows 0-3
  Transpose4x4(d, r4, r5, r6, r7);  // r_(4+j): the same of rows 4-7
  StoreNarrow(d, hn::ConcatLowerLower(d, r4, r0), o);
  StoreNarrow(d, hn::ConcatLowerLower(d, r5, r1), o + dst_stride);
  StoreNarrow(d, hn::ConcatLowerLower(d, r6, r2), o + 2 * dst_stride);
  StoreNarrow(d, hn::ConcatLowerLower(d, r7, r3), o + 3 * dst_stride);
  StoreNarrow(d, hn::ConcatUpperUpper(d, r4, r0), o + 4 * dst_stride);
  StoreNarrow(d, hn::ConcatUpperUpper(d, r5, r1), o + 5 * dst_stride);
  StoreNarrow(d, hn::ConcatUpperUpper(d, r6, r2), o + 6 * dst_stride);
  StoreNarrow(d, hn::ConcatUpperUpper(d, r7, r3), o + 7 * dst_stride);
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

// The same for 16-bit elements (moved, not converted), in 8x8 tiles: pairs of rows interleaved into 32-bit lanes
// (a: columns 0-3, b: 4-7), then each half transposed as 4x4 32-bit lanes.
HWY_INLINE void TransposeTile(const uint16_t* src, int64_t src_stride, int64_t dst_stride, int64_t i0, int64_t i1,
                              int64_t j0, int64_t j1, uint16_t* dst) {
  int64_t i = i0;
#if HWY_TARGET != HWY_SCALAR
  const hn::FixedTag<uint16_t, 8> d;
  const hn::Repartition<uint32_t, decltype(d)> d32;
  const hn::Half<decltype(d)> dh;
  using V32 = hn::Vec<decltype(d32)>;
  // Four transposed vectors as four consecutive output rows from o.
  auto store_rows = [&](uint16_t* o, V32 v0, V32 v1, V32 v2, V32 v3) {
    hn::StoreU(hn::BitCast(d, v0), d, o);
    hn::StoreU(hn::BitCast(d, v1), d, o + dst_stride);
    hn::StoreU(hn::BitCast(d, v2), d, o + 2 * dst_stride);
    hn::StoreU(hn::BitCast(d, v3), d, o + 3 * dst_stride);
  };
  for (; i + 8 <= i1; i += 8) {
    int64_t j = j0;
    for (; j + 8 <= j1; j += 8) {
      const uint16_t* s = src + i * src_stride + j;
      auto pair = [&](int64_t r, bool upper) {
        const auto a = hn::LoadU(d, s + r * src_stride), b = hn::LoadU(d, s + (r + 1) * src_stride);
        if (upper) return hn::BitCast(d32, hn::InterleaveUpper(d, a, b));
        return hn::BitCast(d32, hn::InterleaveLower(d, a, b));
      };
      auto a0 = pair(0, false), a1 = pair(2, false), a2 = pair(4, false), a3 = pair(6, false);
      auto b0 = pair(0, true), b1 = pair(2, true), b2 = pair(4, true), b3 = pair(6, true);
      Transpose4x4(d32, a0, a1, a2, a3);
      Transpose4x4(d32, b0, b1, b2, b3);
      uint16_t* o = dst + j * dst_stride + i;
      store_rows(o, a0, a1, a2, a3);
      store_rows(o + 4 * dst_stride, b0, b1, b2, b3);
    }
    // 8 rows by 4 columns (a 4-wide group's pixels to planes): the first half of the tile above, each row's four
    // elements loaded into the lower half of a register.
    for (; j + 4 <= j1; j += 4) {
      const uint16_t* s = src + i * src_stride + j;
      auto pair = [&](int64_t r) {
        const auto a = hn::ZeroExtendVector(d, hn::LoadU(dh, s + r * src_stride));
        const auto b = hn::ZeroExtendVector(d, hn::LoadU(dh, s + (r + 1) * src_stride));
        return hn::BitCast(d32, hn::InterleaveLower(d, a, b));
      };
      auto a0 = pair(0), a1 = pair(2), a2 = pair(4), a3 = pair(6);
      Transpose4x4(d32, a0, a1, a2, a3);
      store_rows(dst + j * dst_stride + i, a0, a1, a2, a3);
    }
    for (; j < j1; ++j) {
      for (int64_t ii = i; ii < i + 8; ++ii) dst[j * dst_stride + ii] = src[ii * src_stride + j];
    }
  }
  // 4 rows by 8 columns (planes to a 4-wide group): pairs of rows interleaved into 32-bit lanes, then pairs of those
  // into 64-bit lanes, one column of four rows each, stored a half register at a time.
  for (; i + 4 <= i1; i += 4) {
    int64_t j = j0;
    for (; j + 8 <= j1; j += 8) {
      const uint16_t* s = src + i * src_stride + j;
      const auto r0 = hn::LoadU(d, s), r1 = hn::LoadU(d, s + src_stride);
      const auto r2 = hn::LoadU(d, s + 2 * src_stride), r3 = hn::LoadU(d, s + 3 * src_stride);
      const auto lo01 = hn::BitCast(d32, hn::InterleaveLower(d, r0, r1));
      const auto hi01 = hn::BitCast(d32, hn::InterleaveUpper(d, r0, r1));
      const auto lo23 = hn::BitCast(d32, hn::InterleaveLower(d, r2, r3));
      const auto hi23 = hn::BitCast(d32, hn::InterleaveUpper(d, r2, r3));
      uint16_t* o = dst + j * dst_stride + i;
      // Columns (k, k + 1) of the four rows; separate values, as SVE vectors cannot be array elements.
      auto store = [&](int64_t k, V32 cols) {
        hn::StoreU(hn::LowerHalf(dh, hn::BitCast(d, cols)), dh, o + k * dst_stride);
        hn::StoreU(hn::UpperHalf(dh, hn::BitCast(d, cols)), dh, o + (k + 1) * dst_stride);
      };
      store(0, hn::InterleaveLower(d32, lo01, lo23));
      store(2, hn::InterleaveUpper(d32, lo01, lo23));
      store(4, hn::InterleaveLower(d32, hi01, hi23));
      store(6, hn::InterleaveUpper(d32, hi01, hi23));
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

// The same for 64-bit elements (f64, moved as bit patterns), in 2x2 tiles of 128-bit registers: the lower halves
// of a pair of rows interleaved are the first column, the upper halves the second.
HWY_INLINE void TransposeTile(const uint64_t* src, int64_t src_stride, int64_t dst_stride, int64_t i0, int64_t i1,
                              int64_t j0, int64_t j1, uint64_t* dst) {
  int64_t i = i0;
#if HWY_TARGET != HWY_SCALAR
  const hn::FixedTag<uint64_t, 2> d;
  for (; i + 2 <= i1; i += 2) {
    int64_t j = j0;
    for (; j + 2 <= j1; j += 2) {
      const uint64_t* s = src + i * src_stride + j;
      const auto a = hn::LoadU(d, s), b = hn::LoadU(d, s + src_stride);
      uint64_t* o = dst + j * dst_stride + i;
      hn::StoreU(hn::InterleaveLower(d, a, b), d, o);
      hn::StoreU(hn::InterleaveUpper(d, a, b), d, o + dst_stride);
    }
    for (; j < j1; ++j) {
      dst[j * dst_stride + i] = src[i * src_stride + j];
      dst[j * dst_stride + i + 1] = src[(i + 1) * src_stride + j];
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
