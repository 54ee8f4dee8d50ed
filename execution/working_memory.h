// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// A kernel's working memory, kept between calls: per-thread scratch, the channels-last band buffer and the f32
// partial state. Each Run takes one set from its kernel's pool and gives it back, so concurrent Runs of one
// kernel never share memory and repeated Runs do not allocate once the buffers have grown to the largest call.
#ifndef ROIALIGN_EXECUTION_WORKING_MEMORY_H_
#define ROIALIGN_EXECUTION_WORKING_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "kernels/aligned_memory.h"
#include "execution/scratch.h"

namespace roialign {
namespace internal {

// A buffer that only grows; its contents are not kept when it does. Vector-aligned (kernels/aligned_memory.h):
// the kernels read and write it a vector at a time.
template <typename T>
class GrowingBuffer {
 public:
  // Room for n elements; throws std::bad_alloc. The old block is freed first (so that peak memory is the new
  // block alone), and a failure leaves the buffer empty with size 0, never a size without a block.
  void Reserve(size_t n) {
    if (n <= size_) return;
    data_.reset();
    size_ = 0;
    data_ = AllocateVectorAligned<T>(n);
    size_ = n;
  }
  // The block of the last successful Reserve(n): at least n elements.
  T* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  hwy::AlignedFreeUniquePtr<T[]> data_;
  size_t size_ = 0;
};

struct WorkingMemory {
  std::vector<Scratch> per_thread;
  GrowingBuffer<unsigned char> band_rows;  // one band of map rows, channels-last (planar band transform)
  GrowingBuffer<float> partial;            // f32 partial state of bins when the output is not f32
};

// Thread-safe: Runs of one kernel from many threads each get their own WorkingMemory.
class WorkingMemoryPool {
 public:
  std::unique_ptr<WorkingMemory> Acquire();
  void Release(std::unique_ptr<WorkingMemory> memory);
  // Frees every set no Run holds.
  void Trim() noexcept;

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<WorkingMemory>> free_;
};

// One Run's working memory, given back to its kernel's pool however the Run ends.
class BorrowedMemory {
 public:
  explicit BorrowedMemory(WorkingMemoryPool& pool) : pool_(pool), memory_(pool.Acquire()) {}
  ~BorrowedMemory() { pool_.Release(std::move(memory_)); }
  BorrowedMemory(const BorrowedMemory&) = delete;
  BorrowedMemory& operator=(const BorrowedMemory&) = delete;
  WorkingMemory& get() { return *memory_; }

 private:
  WorkingMemoryPool& pool_;
  std::unique_ptr<WorkingMemory> memory_;
};

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_WORKING_MEMORY_H_
