#include "execution/layout_transforms.h"

#include <algorithm>
#include <string>

#include "core/enums.h"
#include "execution/parallel.h"
#include "roialign/roialign.hpp"

namespace roialign {
namespace internal {

// 64x64 elements: a block of source and destination (32 KiB in f32) stays in L1 while it is transposed, and each
// task moves enough data to amortize its dispatch; 32x32 blocks took about twice as long on the default map's
// row bands.
constexpr int64_t kBlock = 64;

void TransposeMatrices(TransposeBlockFn transpose, int64_t element_bytes, const void* src, int64_t src_stride,
                       int64_t batch, int64_t rows, int64_t cols, void* dst, int64_t dst_stride, int32_t num_threads) {
  const int64_t row_blocks = (rows + kBlock - 1) / kBlock, col_blocks = (cols + kBlock - 1) / kBlock;
  const int64_t tasks = batch * row_blocks * col_blocks;
  const int64_t matrix_bytes = rows * cols * element_bytes;
  ParallelFor(tasks, ResolveThreadCount(num_threads, tasks), [&](int64_t t, int) {
    const int64_t b = t / (row_blocks * col_blocks), rb = (t / col_blocks) % row_blocks, cb = t % col_blocks;
    transpose(static_cast<const unsigned char*>(src) + b * matrix_bytes, src_stride, dst_stride, rb * kBlock,
              std::min(rows, (rb + 1) * kBlock), cb * kBlock, std::min(cols, (cb + 1) * kBlock),
              static_cast<unsigned char*>(dst) + b * matrix_bytes);
  });
}

namespace {

// OK with *elements set, or why the transform is refused (before anything is written).
Status CheckTransform(DType dtype, const void* input, int64_t n, int64_t c, int64_t h, int64_t w, const void* output,
                      int64_t* elements) {
  if (!IsKnown(dtype)) {
    return Status(StatusCode::kInvalidArgument, "layout transform: unknown dtype value " +
                                                    std::to_string(static_cast<int>(dtype)) + " (" +
                                                    ValueList<DType>() + ")");
  }
  if (n < 0 || c < 0 || h < 0 || w < 0) {
    return Status(StatusCode::kInvalidArgument, "layout transform: shape must be non-negative");
  }
  int64_t e = 1;
  for (int64_t dim : {n, c, h, w, BytesOf(dtype)}) {
    if (__builtin_mul_overflow(e, dim, &e)) {
      return Status(StatusCode::kInvalidArgument, "layout transform: shape overflows");
    }
  }
  *elements = e / BytesOf(dtype);
  if (*elements > 0 && (input == nullptr || output == nullptr)) {
    return Status(StatusCode::kInvalidArgument, "layout transform: input or output is null");
  }
  if (*elements > 0 && input == output) {
    return Status(StatusCode::kInvalidArgument, "layout transform: in-place transform is not supported");
  }
  return Status::Ok();
}

// Each of n matrices rows x cols -> cols x rows, with the best block transposer this CPU runs for the dtype.
Status Transpose(DType dtype, const void* input, int64_t n, int64_t rows, int64_t cols, int64_t c, int64_t h,
                 int64_t w, void* output, int32_t num_threads) {
  int64_t elements = 0;
  Status s = CheckTransform(dtype, input, n, c, h, w, output, &elements);
  if (!s.ok() || elements == 0) return s;
  TransposeMatrices(BestTransposeBlock()[static_cast<size_t>(dtype)], BytesOf(dtype), input, cols, n, rows, cols,
                    output, rows, num_threads);
  return Status::Ok();
}

}  // namespace
}  // namespace internal

Status NchwToNhwc(const float* input, int64_t batch, int64_t channels, int64_t height, int64_t width, float* output,
                  int32_t num_threads) {
  return NchwToNhwc(DType::kF32, input, batch, channels, height, width, output, num_threads);
}

Status NhwcToNchw(const float* input, int64_t batch, int64_t channels, int64_t height, int64_t width, float* output,
                  int32_t num_threads) {
  return NhwcToNchw(DType::kF32, input, batch, channels, height, width, output, num_threads);
}

Status NchwToNhwc(DType dtype, const void* input, int64_t batch, int64_t channels, int64_t height, int64_t width,
                  void* output, int32_t num_threads) {
  return internal::Transpose(dtype, input, batch, channels, height * width, channels, height, width, output,
                             num_threads);
}

Status NhwcToNchw(DType dtype, const void* input, int64_t batch, int64_t channels, int64_t height, int64_t width,
                  void* output, int32_t num_threads) {
  return internal::Transpose(dtype, input, batch, height * width, channels, channels, height, width, output,
                             num_threads);
}

}  // namespace roialign
