// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "execution/working_memory.h"

#include <new>
#include <utility>

namespace roialign {
namespace internal {

std::unique_ptr<WorkingMemory> WorkingMemoryPool::Acquire() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      std::unique_ptr<WorkingMemory> memory = std::move(free_.back());
      free_.pop_back();
      return memory;
    }
  }
  return std::make_unique<WorkingMemory>();
}

void WorkingMemoryPool::Release(std::unique_ptr<WorkingMemory> memory) {
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    free_.push_back(std::move(memory));
  } catch (const std::bad_alloc&) {
    // Out of memory for the list itself: this set is freed instead of kept.
  }
}

void WorkingMemoryPool::Trim() noexcept {
  std::vector<std::unique_ptr<WorkingMemory>> idle;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    idle.swap(free_);
  }
  // Freed here, outside the lock.
}

}  // namespace internal
}  // namespace roialign
