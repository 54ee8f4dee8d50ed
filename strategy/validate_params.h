// Attribute validation at selection (docs/errors-and-limits.md): a request with a bad attribute never gets a
// kernel.
#ifndef ROIALIGN_STRATEGY_VALIDATE_PARAMS_H_
#define ROIALIGN_STRATEGY_VALIDATE_PARAMS_H_

#include "roialign/roialign.hpp"

namespace roialign {
namespace internal {

// INVALID_ARGUMENT when an attribute is out of range or an enum value unknown.
Status ValidateParams(const Params& params);

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_STRATEGY_VALIDATE_PARAMS_H_
