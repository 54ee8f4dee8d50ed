// Lets selection construct a Kernel around an implementation without widening the public class.
#ifndef ROIALIGN_STRATEGY_KERNEL_ACCESS_H_
#define ROIALIGN_STRATEGY_KERNEL_ACCESS_H_

#include "roialign/roialign.hpp"
#include "strategy/registry.h"

namespace roialign {

struct KernelAccess {
  static Kernel Make(internal::ImplementationPtr impl, const Params& params) {
    Kernel k;
    k.impl_ = std::move(impl);
    k.params_ = params;
    return k;
  }
  static const internal::Implementation* Impl(const Kernel& k) { return k.impl_.get(); }
};

}  // namespace roialign

#endif  // ROIALIGN_STRATEGY_KERNEL_ACCESS_H_
