// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// A kernel's working memory, kept between calls: per-thread scratch, the channels-last band buffer and the f32
// partial state. Each Run takes one set from its kernel's pool and gives it back, so concurrent Runs of one
// kernel never share memory and repeated Runs do not allocate once the buffers have grown to the largest call.
// A Run given the caller's workspace makes a set of its own in it instead (execution/arena.h).
#ifndef ROIALIGN_EXECUTION_WORKING_MEMORY_H_
#define ROIALIGN_EXECUTION_WORKING_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <utility>
#include <vector>

#include "execution/arena.h"
#include "execution/scratch.h"

namespace roialign {
namespace internal {

// Every buffer from `resource`: the pool's from the heap, a workspace run's from the caller's arena.
struct WorkingMemory {
  explicit WorkingMemory(std::pmr::memory_resource* r = VectorAlignedResource::Get())
      : resource(r), per_thread(r), band_rows(r), partial(r) {}
  std::pmr::memory_resource* resource;
  std::pmr::vector<Scratch> per_thread;
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
