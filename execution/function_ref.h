// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// A non-owning reference to a callable, for the parallel loop: unlike std::function it never allocates, so
// launching a call's tasks cannot fail once its memory is acquired.
#ifndef ROIALIGN_EXECUTION_FUNCTION_REF_H_
#define ROIALIGN_EXECUTION_FUNCTION_REF_H_

#include <memory>
#include <type_traits>
#include <utility>

namespace roialign {
namespace internal {

template <typename Signature>
class FunctionRef;

// Valid only while the callable it refers to lives: pass it down the stack, never store it.
template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>>>
  FunctionRef(F&& f) noexcept  // NOLINT(google-explicit-constructor): binds lambdas at call sites
      : callable_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        invoke_([](void* c, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(c))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return invoke_(callable_, std::forward<Args>(args)...); }

 private:
  void* callable_;
  R (*invoke_)(void*, Args...);
};

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_FUNCTION_REF_H_
