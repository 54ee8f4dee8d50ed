// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// A malloc that fails on request, for the out-of-memory test. The test executable defines the C allocation
// functions (failing_allocator.cc), so every allocation of the process goes through them: the library's
// operator new, Highway's aligned allocations and libgomp's. Not for sanitizer builds, which own malloc.
#ifndef ROIALIGN_TESTS_FAILING_ALLOCATOR_H_
#define ROIALIGN_TESTS_FAILING_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>

namespace failing_allocator {

enum class Mode {
  kCount,        // fail nothing, count
  kFailNth,      // fail allocation number n (0-based) of the window only
  kFailFromNth,  // fail allocation n and every later one
  kFailAbove,    // fail every allocation of at least n bytes
};

// Starts a window in which allocations are counted (from every thread) and failed as `mode` says.
void Arm(Mode mode, int64_t n);

struct Window {
  int64_t allocations = 0;    // requests seen, failed ones included
  int64_t failed = 0;         // requests refused
  int64_t other_threads = 0;  // requests from threads other than the one that armed the window
  size_t largest = 0;         // largest request seen
};

// Ends the window; no allocation fails until the next Arm.
Window Disarm();

}  // namespace failing_allocator

#endif  // ROIALIGN_TESTS_FAILING_ALLOCATOR_H_
