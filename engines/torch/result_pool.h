// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// New results for the torch operators. A large result from torch's CPU allocator is fresh memory every call (glibc
// maps allocations of tens of MB anew and unmaps them on free), and faulting it in costs about as much as pooling
// into it. So the blocks of large results go back to a small pool when their tensors die, and the next call with
// a result of about the same size writes pages that are already there (docs/torch.md, "Results").
#ifndef ROIALIGN_ENGINES_TORCH_RESULT_POOL_H_
#define ROIALIGN_ENGINES_TORCH_RESULT_POOL_H_

#include <ATen/ATen.h>

namespace roialign_torch {

// An uninitialized [K, C, PH, PW] tensor of `options` in `format` (Contiguous or ChannelsLast). CPU results of at
// least kPooledResultBytes reuse a freed block of the pool when one fits (its capacity at most twice the request),
// else take a new block, advised MADV_HUGEPAGE; others, and other devices, come from at::empty.
at::Tensor NewResult(at::IntArrayRef sizes, const at::TensorOptions& options, c10::MemoryFormat format);

// Returns every free block of the pool to torch's allocator (torch.ops.roialign.empty_cache); results still alive
// return theirs when they die, then are freed.
void EmptyResultPool();

// Also the threshold of the package's one huge-page policy (docs/python.md, "New results"), which
// python/roialign/__init__.py (_HUGE_PAGE_RESULT_BYTES) applies to the extension's torch results.
constexpr size_t kPooledResultBytes = size_t{4} << 20;

}  // namespace roialign_torch

#endif  // ROIALIGN_ENGINES_TORCH_RESULT_POOL_H_
