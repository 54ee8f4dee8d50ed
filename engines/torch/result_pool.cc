// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "result_pool.h"

#include <c10/core/CPUAllocator.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace roialign_torch {
namespace {

// Block sizes are rounded up to this, so that a block serves results of nearby sizes.
constexpr size_t kBlockGranule = size_t{2} << 20;
// A model's poolers hold one to three large results per forward: a few free blocks are enough to reuse them all,
// and the cap bounds what stays allocated between forwards.
constexpr size_t kMaxFreeBlocks = 4;
constexpr size_t kMaxFreeBytes = size_t{1} << 30;

// Asks Linux to back the whole pages of [data, data + bytes) with transparent huge pages when they are first touched.
// Advice only: the memory stays torch's allocation.
void AdviseHugePages(void* data, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

// One allocation of torch's CPU allocator, `capacity` bytes.
struct Block {
  c10::DataPtr memory;
  size_t capacity = 0;
};

class ResultPool {
 public:
  // A block of at least `bytes`: a free one of at most twice that, else a new one (its pages not yet touched).
  std::unique_ptr<Block> Take(size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto best = free_.end();
      for (auto it = free_.begin(); it != free_.end(); ++it) {
        const size_t c = (*it)->capacity;
        if (c >= bytes && c / 2 <= bytes && (best == free_.end() || c < (*best)->capacity)) best = it;
      }
      if (best != free_.end()) {
        std::unique_ptr<Block> block = std::move(*best);
        free_bytes_ -= block->capacity;
        free_.erase(best);
        return block;
      }
    }
    // Advised before its first write, as every new torch result of kPooledResultBytes or more is (result_pool.h): the
    // block's first call faults it in 2 MiB at a time; its reuses do not fault at all.
    auto block = std::make_unique<Block>();
    block->capacity = (bytes + kBlockGranule - 1) / kBlockGranule * kBlockGranule;
    block->memory = c10::GetCPUAllocator()->allocate(block->capacity);
    AdviseHugePages(block->memory.get(), block->capacity);
    return block;
  }

  // Keeps a block whose result died, dropping the oldest free ones beyond the caps (outside the lock).
  void Give(std::unique_ptr<Block> block) {
    std::vector<std::unique_ptr<Block>> dropped;
    {
      std::lock_guard<std::mutex> lock(mu_);
      free_bytes_ += block->capacity;
      free_.push_back(std::move(block));
      while (free_.size() > kMaxFreeBlocks || free_bytes_ > kMaxFreeBytes) {
        free_bytes_ -= free_.front()->capacity;
        dropped.push_back(std::move(free_.front()));
        free_.erase(free_.begin());
      }
    }
  }

  void Clear() {
    std::vector<std::unique_ptr<Block>> dropped;
    std::lock_guard<std::mutex> lock(mu_);
    dropped.swap(free_);
    free_bytes_ = 0;
  }

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<Block>> free_;  // oldest first
  size_t free_bytes_ = 0;
};

// Never destroyed: results may die during the process's exit, after static destructors ran.
ResultPool& Pool() {
  static ResultPool* const pool = new ResultPool;
  return *pool;
}

void ReturnBlock(void* block) { Pool().Give(std::unique_ptr<Block>(static_cast<Block*>(block))); }

std::vector<int64_t> StridesOf(at::IntArrayRef sizes, c10::MemoryFormat format) {
  if (format == c10::MemoryFormat::ChannelsLast) return c10::get_channels_last_strides_2d(sizes);
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * std::max<int64_t>(sizes[d], 1);
  return strides;
}

}  // namespace

at::Tensor NewResult(at::IntArrayRef sizes, const at::TensorOptions& options, c10::MemoryFormat format) {
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  const size_t bytes = static_cast<size_t>(numel) * options.dtype().itemsize();
  if (options.device().type() != c10::DeviceType::CPU || bytes < kPooledResultBytes) {
    return at::empty(sizes, options.memory_format(format));
  }
  Block* const block = Pool().Take(bytes).release();  // owned by the result's storage from here on
  c10::DataPtr data(block->memory.get(), block, &ReturnBlock, c10::Device(c10::DeviceType::CPU));
  // Resizable with torch's allocator, as at::empty's storage: a resize_ beyond the block moves the data to a new
  // allocation and returns the block to the pool.
  c10::Storage storage(c10::Storage::use_byte_size_t(), bytes, std::move(data), c10::GetCPUAllocator(),
                       /*resizable=*/true);
  at::Tensor result = at::detail::make_tensor<c10::TensorImpl>(
      std::move(storage), c10::DispatchKeySet(c10::DispatchKey::CPU), options.dtype());
  result.unsafeGetTensorImpl()->set_sizes_and_strides(sizes, StridesOf(sizes, format));
  return result;
}

void EmptyResultPool() { Pool().Clear(); }

}  // namespace roialign_torch
