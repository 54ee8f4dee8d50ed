// NCHW <-> NHWC for float32: per image, a transpose of a C x (H*W) matrix, in cache-sized square blocks.
#include <algorithm>
#include <cstdint>

#include "kernels/parallel.h"
#include "roialign/roialign.hpp"

namespace roialign {
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
    const float* s = src + b * rows * cols;
    float* d = dst + b * rows * cols;
    const int64_t i1 = std::min(rows, (rb + 1) * kBlock), j1 = std::min(cols, (cb + 1) * kBlock);
    for (int64_t j = cb * kBlock; j < j1; ++j) {
      for (int64_t i = rb * kBlock; i < i1; ++i) d[j * rows + i] = s[i * cols + j];
    }
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
