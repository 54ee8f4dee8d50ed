// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "tests/failing_allocator.h"

#include <atomic>
#include <cerrno>
#include <cstring>

// glibc's own allocator, which these definitions forward to.
extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* p, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void __libc_free(void* p);
}

namespace failing_allocator {
namespace {

// Plain atomics only: nothing here may allocate, and the functions run before main and on every thread.
std::atomic<bool> g_armed{false};
std::atomic<int> g_mode{0};
std::atomic<int64_t> g_n{0};
std::atomic<int64_t> g_allocations{0}, g_failed{0}, g_other_threads{0};
std::atomic<size_t> g_largest{0};
thread_local bool t_armed_here = false;

// Whether this request of `size` bytes fails; counts it when a window is open.
bool Refuse(size_t size) {
  if (!g_armed.load(std::memory_order_acquire)) return false;
  const int64_t index = g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (!t_armed_here) g_other_threads.fetch_add(1, std::memory_order_relaxed);
  size_t largest = g_largest.load(std::memory_order_relaxed);
  while (size > largest && !g_largest.compare_exchange_weak(largest, size, std::memory_order_relaxed)) {
  }
  const int64_t n = g_n.load(std::memory_order_relaxed);
  bool refuse = false;
  switch (static_cast<Mode>(g_mode.load(std::memory_order_relaxed))) {
    case Mode::kCount: break;
    case Mode::kFailNth: refuse = index == n; break;
    case Mode::kFailFromNth: refuse = index >= n; break;
    case Mode::kFailAbove: refuse = static_cast<int64_t>(size) >= n; break;
  }
  if (refuse) g_failed.fetch_add(1, std::memory_order_relaxed);
  return refuse;
}

}  // namespace

void Arm(Mode mode, int64_t n) {
  g_mode.store(static_cast<int>(mode), std::memory_order_relaxed);
  g_n.store(n, std::memory_order_relaxed);
  g_allocations.store(0, std::memory_order_relaxed);
  g_failed.store(0, std::memory_order_relaxed);
  g_other_threads.store(0, std::memory_order_relaxed);
  g_largest.store(0, std::memory_order_relaxed);
  t_armed_here = true;
  g_armed.store(true, std::memory_order_release);
}

Window Disarm() {
  g_armed.store(false, std::memory_order_release);
  t_armed_here = false;
  Window w;
  w.allocations = g_allocations.load(std::memory_order_relaxed);
  w.failed = g_failed.load(std::memory_order_relaxed);
  w.other_threads = g_other_threads.load(std::memory_order_relaxed);
  w.largest = g_largest.load(std::memory_order_relaxed);
  return w;
}

}  // namespace failing_allocator

using failing_allocator::Refuse;

extern "C" {

void* malloc(size_t size) {
  if (Refuse(size)) {
    errno = ENOMEM;
    return nullptr;
  }
  return __libc_malloc(size);
}

void* calloc(size_t count, size_t size) {
  if (Refuse(count * size)) {
    errno = ENOMEM;
    return nullptr;
  }
  return __libc_calloc(count, size);
}

void* realloc(void* p, size_t size) {
  if (Refuse(size)) {
    errno = ENOMEM;
    return nullptr;
  }
  return __libc_realloc(p, size);
}

void free(void* p) { __libc_free(p); }

void* memalign(size_t alignment, size_t size) {
  if (Refuse(size)) {
    errno = ENOMEM;
    return nullptr;
  }
  return __libc_memalign(alignment, size);
}

void* aligned_alloc(size_t alignment, size_t size) { return memalign(alignment, size); }

int posix_memalign(void** out, size_t alignment, size_t size) {
  if (Refuse(size)) return ENOMEM;
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

}  // extern "C"
