// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Working memory aligned for whole-vector access. A plain new[] of a few MB comes from mmap with a 16-byte header,
// so every 64-byte AVX-512 load or store into it straddles two cache lines; on the NCHW kernel's channels-last
// band that made each load two (docs/layouts.md, "Alignment").
#ifndef ROIALIGN_KERNELS_ALIGNED_MEMORY_H_
#define ROIALIGN_KERNELS_ALIGNED_MEMORY_H_

#include <hwy/aligned_allocator.h>

#include <cstddef>
#include <new>

namespace roialign {
namespace internal {

// n uninitialized elements aligned to at least 64 bytes and the largest vector (hwy::AllocateAligned); throws
// std::bad_alloc instead of returning null.
template <typename T>
hwy::AlignedFreeUniquePtr<T[]> AllocateVectorAligned(size_t n) {
  hwy::AlignedFreeUniquePtr<T[]> p = hwy::AllocateAligned<T>(n);
  if (p == nullptr && n > 0) throw std::bad_alloc();
  return p;
}

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_KERNELS_ALIGNED_MEMORY_H_
