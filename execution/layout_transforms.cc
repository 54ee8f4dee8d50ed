// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "execution/layout_transforms.h"

#include <algorithm>
#include <string>

#include "core/enums.h"
#include "execution/parallel.h"
#include "core/library.h"

namespace roialign {
namespace internal {

// 64x64 elements: a block of source and destination (32 KiB in f32) stays in L1 while it is transposed, and each
// task moves enough data to amortize its dispatch; 32x32 blocks took about twice as long on the default map's
// row bands.
constexpr int64_t kBlock = 64;

void TransposeMatrices(TransposeBlockFn transpose, int64_t element_bytes, const void* src, int64_t src_stride,
                       int64_t batch, int64_t rows, int64_t cols, void* dst, int64_t dst_stride, int max_threads,
                       const Threading& threading) {
  const int64_t row_blocks = (rows + kBlock - 1) / kBlock, col_blocks = (cols + kBlock - 1) / kBlock;
  const int64_t tasks = batch * row_blocks * col_blocks;
  const int64_t matrix_bytes = rows * cols * element_bytes;
  const int threads = std::min(max_threads, ResolveThreadCount(threading, tasks));
  ParallelFor(tasks, threads, threading, [&](int64_t t, int) {
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

// NCHW -> NHWC (to_nhwc) or back, whole tensor of `dtype`, with the best block transposer this CPU runs for it;
// a caller's pool is validated first.
Status TransformLayout(bool to_nhwc, DType dtype, const void* input, int64_t batch, int64_t channels,
                       int64_t height, int64_t width, void* output, const Threading& threading) {
  int64_t elements = 0;
  Status s = threading.pool != nullptr ? ValidateThreadPool(threading.pool) : Status::Ok();
  if (s.ok()) s = CheckTransform(dtype, input, batch, channels, height, width, output, &elements);
  if (!s.ok() || elements == 0) return s;
  const int64_t pixels = height * width;
  const int64_t rows = to_nhwc ? channels : pixels, cols = to_nhwc ? pixels : channels;
  TransposeMatrices(BestTargetFns()[static_cast<size_t>(dtype)].transpose, BytesOf(dtype), input, cols, batch, rows,
                    cols, output, rows, ResolveThreadCount(threading, batch * rows * cols), threading);
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

Status NchwToNhwc(const float* input, int64_t batch, int64_t channels, int64_t height, int64_t width, float* output,
                  const ThreadPool& pool) {
  return NchwToNhwc(DType::kF32, input, batch, channels, height, width, output, pool);
}

Status NhwcToNchw(const float* input, int64_t batch, int64_t channels, int64_t height, int64_t width, float* output,
                  const ThreadPool& pool) {
  return NhwcToNchw(DType::kF32, input, batch, channels, height, width, output, pool);
}

Status NchwToNhwc(DType dtype, const void* input, int64_t batch, int64_t channels, int64_t height, int64_t width,
                  void* output, int32_t num_threads) {
  return internal::TransformLayout(true, dtype, input, batch, channels, height, width, output,
                                   {num_threads, nullptr});
}

Status NhwcToNchw(DType dtype, const void* input, int64_t batch, int64_t channels, int64_t height, int64_t width,
                  void* output, int32_t num_threads) {
  return internal::TransformLayout(false, dtype, input, batch, channels, height, width, output,
                                   {num_threads, nullptr});
}

Status NchwToNhwc(DType dtype, const void* input, int64_t batch, int64_t channels, int64_t height, int64_t width,
                  void* output, const ThreadPool& pool) {
  return internal::TransformLayout(true, dtype, input, batch, channels, height, width, output, {0, &pool});
}

Status NhwcToNchw(DType dtype, const void* input, int64_t batch, int64_t channels, int64_t height, int64_t width,
                  void* output, const ThreadPool& pool) {
  return internal::TransformLayout(false, dtype, input, batch, channels, height, width, output, {0, &pool});
}

}  // namespace roialign
