// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// A kernel's working memory, kept between calls: per-thread scratch of the drivers around the microkernel
// (pool_roi.cc), the channels-last band buffer and the f32 partial state, all sized before the parallel region so
// that the hot path never allocates. Each Run takes one set from its kernel's pool and gives it back, so concurrent
// Runs of one kernel never share memory and repeated Runs do not allocate once the buffers have grown to the
// largest call. A Run given the caller's workspace makes a set of its own in it instead (execution/arena.h).
#ifndef ROIALIGN_EXECUTION_WORKING_MEMORY_H_
#define ROIALIGN_EXECUTION_WORKING_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "execution/arena.h"
#include "kernels/merged_taps.h"
#include "kernels/problem.h"
#include "kernels/roi_geometry.h"

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

// Pixels in a channels-last tile of a RoI's footprint (planar maps). With one vector of channels per pixel this
// is 256 KiB on AVX-512 (a quarter of a 1 MiB L2); the buffers are sized for 2048-bit SVE (64 lanes).
inline constexpr size_t kTilePixels = 4096;
inline constexpr size_t kTileFloats = kTilePixels * 64;

// One thread's buffers.
struct Scratch {
  explicit Scratch(std::pmr::memory_resource* r)
      : merged(r),
        band_samples(r),
        bin_taps(r),
        tile(r),
        bins(r),
        staged_output(r),
        gradient(r) {}
  std::pmr::vector<MergedTap> merged;                  // one bin's merged y then x taps (AVG)
  std::pmr::vector<int64_t> band_samples;              // per bin row: its sample rows [begin, end) in the band
  std::pmr::vector<PixelTap> bin_taps;                 // kBinTaps: a piece of one bin's taps for the microkernel
  // kTileFloats floats' bytes: channels-last footprint in the map's element type (not zeroed: kernels write first)
  GrowingBuffer<unsigned char> tile;
  GrowingBuffer<float> bins;  // kTileFloats: channels-last results before transposing
  GrowingBuffer<unsigned char> staged_output;  // Plan::staged_channels of a RoI's output, before streaming it out
  GrowingBuffer<float> gradient;  // a backward task's scratch (KernelFns::backward_scratch floats)

  // Sizes every buffer for `problem`; throws std::bad_alloc when memory runs out.
  void Prepare(const Problem& problem, bool needs_tile, size_t staged_output_bytes) {
    staged_output.Reserve(staged_output_bytes);
    bin_taps.resize(static_cast<size_t>(kBinTaps));
    merged.resize(static_cast<size_t>(2 * (problem.max_grid_h + problem.max_grid_w)));
    if (!needs_tile) return;
    band_samples.resize(static_cast<size_t>(2 * problem.params.pooled_height));
    tile.Reserve(kTileFloats * sizeof(float));
    bins.Reserve(kTileFloats);
  }
};

// Every buffer from `resource`: the pool's from the heap, a workspace run's from the caller's arena.
struct WorkingMemory {
  explicit WorkingMemory(std::pmr::memory_resource* r = VectorAlignedResource::Get())
      : resource(r), per_thread(r), band_pixels(r), partial(r), rotated_table(r) {}
  std::pmr::memory_resource* resource;
  std::pmr::vector<Scratch> per_thread;
  GrowingBuffer<unsigned char> band_pixels;  // one band of map rows, channels-last (planar band transform)
  GrowingBuffer<float> partial;            // f32 partial state of bins when the output is not f32
  GrowingBuffer<unsigned char> rotated_table;  // the call's table of rotated samples' taps (rotated_table.h)
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

// One Run's working memory: a set borrowed from its kernel's pool and given back however the Run ends, or, given
// the caller's workspace, a set of the Run's own in its arena.
class RunMemory {
 public:
  RunMemory(WorkingMemoryPool& pool, Arena* arena) : pool_(pool) {
    if (arena != nullptr) {
      own_.emplace(arena);
    } else {
      borrowed_ = pool.Acquire();
    }
  }
  ~RunMemory() {
    if (borrowed_ != nullptr) pool_.Release(std::move(borrowed_));
  }
  RunMemory(const RunMemory&) = delete;
  RunMemory& operator=(const RunMemory&) = delete;
  WorkingMemory& get() { return own_ ? *own_ : *borrowed_; }

 private:
  WorkingMemoryPool& pool_;
  std::unique_ptr<WorkingMemory> borrowed_;
  std::optional<WorkingMemory> own_;
};

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_WORKING_MEMORY_H_
