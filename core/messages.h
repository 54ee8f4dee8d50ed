// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Small helpers for the messages every refusal carries.
#ifndef ROIALIGN_CORE_MESSAGES_H_
#define ROIALIGN_CORE_MESSAGES_H_

#include <cstdio>
#include <new>
#include <string>
#include <utility>

#include "roialign/roialign.hpp"

namespace roialign {
namespace internal {

inline Status Invalid(const std::string& message) { return Status(StatusCode::kInvalidArgument, message); }

// OUT_OF_MEMORY naming what ran out ("out of memory allocating working memory for roi_align_nhwc.avx2"), or the
// bare "out of memory" (short enough to need no allocation) when even the message cannot be allocated. The
// arguments are not copied before the try: building them could fail too.
inline Status OutOfMemory(const char* what, const std::string& implementation = std::string()) noexcept {
  try {
    std::string message = std::string("out of memory allocating ") + what;
    if (!implementation.empty()) message += " for " + implementation;
    return Status(StatusCode::kOutOfMemory, std::move(message));
  } catch (...) {
    return Status(StatusCode::kOutOfMemory, "out of memory");
  }
}

// f()'s status, or OUT_OF_MEMORY if it throws std::bad_alloc: what the public calls return instead of throwing.
template <typename F>
Status StatusOrOutOfMemory(F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return OutOfMemory("the call's validation and plan state");
  }
}

// A float or double as a message shows it ("0.25", "inf", "nan"); a double with the digits that tell it apart.
inline std::string FloatText(float v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", static_cast<double>(v));
  return buf;
}
inline std::string FloatText(double v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_CORE_MESSAGES_H_
