// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Where a run's memory comes from: the caller's workspace laid out by bump allocation (roialign_options.workspace),
// or the heap. The same run measured without a workspace (roialign_workspace_size) makes the same requests in the
// same order, so the bytes it counts are exactly those a run with a workspace takes.
#ifndef ROIALIGN_EXECUTION_ARENA_H_
#define ROIALIGN_EXECUTION_ARENA_H_

#include <hwy/aligned_allocator.h>

#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <new>
#include <string>

#include "core/messages.h"

namespace roialign {
namespace internal {

// Every block of the arena starts at a multiple of this (and the caller's pointer may have any alignment: the
// first block is aligned inside, which the size counts).
inline constexpr size_t kArenaAlignment = HWY_ALIGNMENT > 64 ? HWY_ALIGNMENT : 64;

// Blocks aligned for whole-vector access, from Highway's aligned allocator: the memory a kernel's pool keeps between
// runs. (A plain new[] of a few MB comes from mmap with a 16-byte header, so every 64-byte load would straddle two
// cache lines.)
class VectorAlignedResource final : public std::pmr::memory_resource {
 public:
  static VectorAlignedResource* Get() {
    static VectorAlignedResource resource;
    return &resource;
  }

 private:
  void* do_allocate(size_t bytes, size_t) override {
    void* p = hwy::AllocateAlignedBytes(bytes, nullptr, nullptr);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  void do_deallocate(void* p, size_t, size_t) override { hwy::FreeAlignedBytes(p, nullptr, nullptr); }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }
};

// Bump allocation over [workspace, workspace + size); frees nothing until it is destroyed. Requests past its end
// still succeed, from the heap, so that a run can count what it needs: a null workspace measures only. Whoever
// runs with a workspace checks fits() before writing any output.
class Arena final : public std::pmr::memory_resource {
 public:
  Arena(void* workspace, size_t size) : size_(size) {
    if (workspace == nullptr) return;
    const uintptr_t p = reinterpret_cast<uintptr_t>(workspace);
    const uintptr_t aligned = (p + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
    if (aligned - p >= size) return;
    base_ = reinterpret_cast<unsigned char*>(aligned);
    capacity_ = size - (aligned - p);
  }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // The workspace a run with the same requests needs, whatever its alignment.
  size_t needed() const { return used_ + kArenaAlignment - 1; }
  // Whether the workspace holds them all (checked against needed(), so that the answer does not depend on where the
  // caller's block happens to start).
  bool fits() const { return size_ >= needed(); }
  size_t size() const { return size_; }

 private:
  void* do_allocate(size_t bytes, size_t alignment) override {
    const size_t align = alignment > kArenaAlignment ? alignment : kArenaAlignment;
    const size_t offset = (used_ + align - 1) / align * align;
    if (offset + bytes < offset) throw std::bad_alloc();
    used_ = offset + bytes;
    if (used_ <= capacity_) return base_ + offset;
    return std::pmr::new_delete_resource()->allocate(bytes, align);
  }
  void do_deallocate(void* p, size_t bytes, size_t alignment) override {
    const auto* b = static_cast<unsigned char*>(p);
    if (base_ != nullptr && b >= base_ && b < base_ + capacity_) return;  // released with the workspace
    const size_t align = alignment > kArenaAlignment ? alignment : kArenaAlignment;
    std::pmr::new_delete_resource()->deallocate(p, bytes, align);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }

  unsigned char* base_ = nullptr;
  size_t capacity_ = 0, size_ = 0, used_ = 0;
};

// INVALID_ARGUMENT for a workspace run that `arena` cannot hold: the bytes it needs, and the function that tells.
inline Status WorkspaceTooSmall(const Arena& arena, const char* size_function) {
  return Invalid("options->workspace_size is " + std::to_string(arena.size()) + " bytes; this run needs " +
                 std::to_string(arena.needed()) + " (" + size_function + ")");
}

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_ARENA_H_
