// Small helpers for the messages every refusal carries.
#ifndef ROIALIGN_CORE_MESSAGES_H_
#define ROIALIGN_CORE_MESSAGES_H_

#include <cstdio>
#include <string>

#include "roialign/roialign.hpp"

namespace roialign {
namespace internal {

inline Status Invalid(const std::string& message) { return Status(StatusCode::kInvalidArgument, message); }

// A float as a message shows it ("0.25", "inf", "nan").
inline std::string FloatText(float v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", static_cast<double>(v));
  return buf;
}

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_CORE_MESSAGES_H_
