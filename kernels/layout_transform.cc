// NCHW <-> NHWC for float32: per image, a transpose of a rows x cols matrix (C x H*W or H*W x C), in 64x64
// blocks that stay in L1, each made of 4x4 tiles transposed in 128-bit registers (two interleave stages).
// Compiled once per Highway target; dynamic dispatch picks the best for this CPU.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/layout_transform.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>

#include "kernels/transpose-inl.h"

HWY_BEFORE_NAMESPACE();
namespace roialign {
namespace internal {
namespace HWY_NAMESPACE {

// Exported for dynamic dispatch (the body is in transpose-inl.h, shared with the planar kernel).
void TransposeBlock(const float* src, int64_t src_stride, int64_t dst_stride, int64_t i0, int64_t i1, int64_t j0,
                    int64_t j1, float* dst) {
  TransposeTile(src, src_stride, dst_stride, i0, i1, j0, j1, dst);
}

}  // namespace HWY_NAMESPACE
}  // namespace internal
}  // namespace roialign
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "kernels/layout_transform.h"
#include "kernels/parallel.h"
#include "roialign/roialign.hpp"

namespace roialign {
namespace internal {
HWY_EXPORT(TransposeBlock);
}  // namespace internal

namespace {

// 64x64 floats: a block of source and destination (32 KiB) stays in L1 while it is transposed, and each task
// moves enough data to amortize its dispatch. Measured on the default map's row bands (256 channels x 31x272
// pixels, 1 thread, min of 15): 64x64 took 9.5-14 ms against 20-22 ms for 32x32.
constexpr int64_t kBlock = 64;

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

// dst[b * rows * cols + j * dst_stride + i] = src[b * rows * cols + i * src_stride + j] for each of `batch`
// rows x cols matrices, i < rows, j < cols.
void Transpose(const float* src, int64_t src_stride, int64_t batch, int64_t rows, int64_t cols, float* dst,
               int64_t dst_stride, int32_t num_threads) {
  const int64_t row_blocks = (rows + kBlock - 1) / kBlock, col_blocks = (cols + kBlock - 1) / kBlock;
  const int64_t tasks = batch * row_blocks * col_blocks;
  internal::ParallelFor(tasks, internal::ResolveThreadCount(num_threads, tasks), [&](int64_t t, int) {
    const int64_t b = t / (row_blocks * col_blocks), rb = (t / col_blocks) % row_blocks, cb = t % col_blocks;
    HWY_DYNAMIC_DISPATCH(internal::TransposeBlock)(src + b * rows * cols, src_stride, dst_stride, rb * kBlock,
                                                   std::min(rows, (rb + 1) * kBlock), cb * kBlock,
                                                   std::min(cols, (cb + 1) * kBlock), dst + b * rows * cols);
  });
}

}  // namespace

namespace internal {
void PlanesToChannelsLast(const float* planes, int64_t channels, int64_t plane_stride, int64_t pixels, float* dst,
                          int32_t num_threads) {
  Transpose(planes, plane_stride, 1, channels, pixels, dst, channels, num_threads);
}
}  // namespace internal

Status NchwToNhwc(const float* input, int64_t batch, int64_t channels, int64_t height, int64_t width, float* output,
                  int32_t num_threads) {
  int64_t elements = 0;
  Status s = CheckShape(input, batch, channels, height, width, output, &elements);
  if (!s.ok() || elements == 0) return s;
  Transpose(input, height * width, batch, channels, height * width, output, channels, num_threads);
  return Status::Ok();
}

Status NhwcToNchw(const float* input, int64_t batch, int64_t channels, int64_t height, int64_t width, float* output,
                  int32_t num_threads) {
  int64_t elements = 0;
  Status s = CheckShape(input, batch, channels, height, width, output, &elements);
  if (!s.ok() || elements == 0) return s;
  Transpose(input, channels, batch, height * width, channels, output, height * width, num_threads);
  return Status::Ok();
}

}  // namespace roialign
#endif  // HWY_ONCE
