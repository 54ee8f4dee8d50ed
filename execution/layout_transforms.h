// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// A threaded transpose of a whole matrix, block by block with a kernel's block transposer (the plan's band
// transform), and the public layout transforms between any two layouts, which transpose the same way.
#ifndef ROIALIGN_EXECUTION_LAYOUT_TRANSFORMS_H_
#define ROIALIGN_EXECUTION_LAYOUT_TRANSFORMS_H_

#include <cstdint>

#include "execution/parallel.h"
#include "kernels/kernel_descriptor.h"

namespace roialign {
namespace internal {

// dst[j * dst_stride + i] = src[i * src_stride + j], i < rows, j < cols, on at most `max_threads` threads of
// `threading`.
void TransposeMatrix(TransposeBlockFn transpose, const void* src, int64_t src_stride, int64_t rows, int64_t cols,
                     void* dst, int64_t dst_stride, int max_threads, const Threading& threading);

// Outputs larger than this would not stay in a typical last-level cache (execution/plan.cc uses the same bound), so
// the transforms that can write them with non-temporal stores do.
constexpr int64_t kTransformStreamBytes = int64_t{16} << 20;

// A whole tensor from any layout to any other (roialign_transform_layout): validated first (a caller's pool
// included), nothing written on error. `stream_above`: the size above which a tensor is taken not to stay in the
// caches, so that the output may bypass them and NHWC -> NCHW takes runs of pixels (tests lower it to reach those
// paths with small tensors).
Status TransformTensorLayout(DType dtype, Layout from, Layout to, const void* input, int64_t batch, int64_t channels,
                             int64_t height, int64_t width, void* output, const Threading& threading,
                             int64_t stream_above = kTransformStreamBytes);

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_LAYOUT_TRANSFORMS_H_
