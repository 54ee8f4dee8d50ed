// NCHW <-> NHWC for float32: per image, a transpose of a rows x cols matrix (C x H*W or H*W x C), in 32x32
// blocks that stay in L1, each made of 4x4 tiles transposed in 128-bit registers (two interleave stages).
// Compiled once per Highway target; dynamic dispatch picks the best for this CPU.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/layout_transform.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>

HWY_BEFORE_NAMESPACE();
namespace roialign {
namespace internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// dst[j * rows + i] = src[i * cols + j] for i in [i0, i1), j in [j0, j1).
void TransposeBlock(const float* src, int64_t rows, int64_t cols, int64_t i0, int64_t i1, int64_t j0, int64_t j1,
                    float* dst) {
  int64_t i = i0;
#if HWY_TARGET != HWY_SCALAR
  const hn::FixedTag<float, 4> d;
  const hn::Repartition<uint64_t, decltype(d)> d64;
  for (; i + 4 <= i1; i += 4) {
    int64_t j = j0;
    for (; j + 4 <= j1; j += 4) {
      const float* s = src + i * cols + j;
      const auto r0 = hn::LoadU(d, s), r1 = hn::LoadU(d, s + cols);
      const auto r2 = hn::LoadU(d, s + 2 * cols), r3 = hn::LoadU(d, s + 3 * cols);
      // (a0 b0 a1 b1), (c0 d0 c1 d1), (a2 b2 a3 b3), (c2 d2 c3 d3)
      const auto t0 = hn::BitCast(d64, hn::InterleaveLower(d, r0, r1));
      const auto t1 = hn::BitCast(d64, hn::InterleaveLower(d, r2, r3));
      const auto t2 = hn::BitCast(d64, hn::InterleaveUpper(d, r0, r1));
      const auto t3 = hn::BitCast(d64, hn::InterleaveUpper(d, r2, r3));
      float* o = dst + j * rows + i;
      hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, t0, t1)), d, o);
      hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, t0, t1)), d, o + rows);
      hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, t2, t3)), d, o + 2 * rows);
      hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, t2, t3)), d, o + 3 * rows);
    }
    for (; j < j1; ++j) {
      for (int64_t ii = i; ii < i + 4; ++ii) dst[j * rows + ii] = src[ii * cols + j];
    }
  }
#endif
  for (; i < i1; ++i) {
    for (int64_t j = j0; j < j1; ++j) dst[j * rows + i] = src[i * cols + j];
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace internal
}  // namespace roialign
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "kernels/parallel.h"
#include "roialign/roialign.hpp"

namespace roialign {
namespace internal {
HWY_EXPORT(TransposeBlock);
}  // namespace internal

namespace {

// 32x32 floats: a block of source and destination (8 KiB) stays in L1 while it is transposed.
constexpr int64_t kBlock = 32;

Status CheckShape(const float* input, int64_t n, int64_t c, int64_t h, int64_t w, const float* output,
                  int64_t* elements) {
  if (n < 0 || c < 0 || h < 0 || w < 0) {
    return Status(StatusCode::kInvalidArgument, "layout transform: shape must be non-negative");
  }
  int64_t e = 1;
  for (int64_t dim : {n, c, h, w, int64_t{4}}) {
    if (__builtin_mul_overflow(e, dim, &e)) {
      return Status(StatusCode::kInvalidArgument, "layout transform: shape overflows");
    }
  }
  *elements = e / 4;
  if (*elements > 0 && (input == nullptr || output == nullptr)) {
    return Status(StatusCode::kInvalidArgument, "layout transform: input or output is null");
  }
  if (*elements > 0 && input == output) {
    return Status(StatusCode::kInvalidArgument, "layout transform: in-place transform is not supported");
  }
  return Status::Ok();
}

// dst[j * rows + i] = src[i * cols + j] for each of `batch` matrices of rows x cols.
void Transpose(const float* src, int64_t batch, int64_t rows, int64_t cols, float* dst, int32_t num_threads) {
  const int64_t row_blocks = (rows + kBlock - 1) / kBlock, col_blocks = (cols + kBlock - 1) / kBlock;
  const int64_t tasks = batch * row_blocks * col_blocks;
  internal::ParallelFor(tasks, internal::ResolveThreadCount(num_threads, tasks), [&](int64_t t, int) {
    const int64_t b = t / (row_blocks * col_blocks), rb = (t / col_blocks) % row_blocks, cb = t % col_blocks;
    HWY_DYNAMIC_DISPATCH(internal::TransposeBlock)(src + b * rows * cols, rows, cols, rb * kBlock, std::min(rows, (rb + 1) * kBlock), cb * kBlock,
          std::min(cols, (cb + 1) * kBlock), dst + b * rows * cols);
  });
}

}  // namespace

Status NchwToNhwc(const float* input, int64_t batch, int64_t channels, int64_t height, int64_t width, float* output,
                  int32_t num_threads) {
  int64_t elements = 0;
  Status s = CheckShape(input, batch, channels, height, width, output, &elements);
  if (!s.ok() || elements == 0) return s;
  Transpose(input, batch, channels, height * width, output, num_threads);
  return Status::Ok();
}

Status NhwcToNchw(const float* input, int64_t batch, int64_t channels, int64_t height, int64_t width, float* output,
                  int32_t num_threads) {
  int64_t elements = 0;
  Status s = CheckShape(input, batch, channels, height, width, output, &elements);
  if (!s.ok() || elements == 0) return s;
  Transpose(input, batch, height * width, channels, output, num_threads);
  return Status::Ok();
}

}  // namespace roialign
#endif  // HWY_ONCE
