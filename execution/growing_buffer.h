// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// A vector-aligned buffer of working memory from a memory resource (the heap, or a run's arena).
#ifndef ROIALIGN_EXECUTION_GROWING_BUFFER_H_
#define ROIALIGN_EXECUTION_GROWING_BUFFER_H_

#include <cstddef>
#include <memory_resource>
#include <utility>

#include "execution/arena.h"

namespace roialign {
namespace internal {

// A buffer that only grows; its contents are not kept when it does. Vector-aligned (kArenaAlignment): the
// kernels read and write it a vector at a time.
template <typename T>
class GrowingBuffer {
 public:
  explicit GrowingBuffer(std::pmr::memory_resource* resource = VectorAlignedResource::Get()) : resource_(resource) {}
  GrowingBuffer(GrowingBuffer&& other) noexcept
      : resource_(other.resource_), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  GrowingBuffer& operator=(GrowingBuffer&&) = delete;
  ~GrowingBuffer() { Free(); }

  // Room for n elements; throws std::bad_alloc. The old block is freed first (so that peak memory is the new
  // block alone), and a failure leaves the buffer empty with size 0, never a size without a block.
  void Reserve(size_t n) {
    if (n <= size_) return;
    Free();
    data_ = static_cast<T*>(resource_->allocate(n * sizeof(T), kArenaAlignment));
    size_ = n;
  }
  // The block of the last successful Reserve(n): at least n elements.
  T* data() const { return data_; }
  T* get() const { return data_; }
  size_t size() const { return size_; }

 private:
  void Free() {
    if (data_ != nullptr) resource_->deallocate(data_, size_ * sizeof(T), kArenaAlignment);
    data_ = nullptr;
    size_ = 0;
  }
  std::pmr::memory_resource* resource_;
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_GROWING_BUFFER_H_
