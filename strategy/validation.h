// The two validation passes of DESIGN.md §1.2: attributes (at selection) and data (at run, before any write).
#ifndef ROIALIGN_STRATEGY_VALIDATION_H_
#define ROIALIGN_STRATEGY_VALIDATION_H_

#include "kernels/problem.h"
#include "roialign/roialign.hpp"

namespace roialign {
namespace internal {

// INVALID_ARGUMENT when an attribute is out of range or an enum value unknown.
Status ValidateParams(const Params& params);

// Checks every data-dependent precondition in one pass and, on success, fills `problem` (including the largest
// sampling grid). Writes nothing else. Messages name the offending RoI.
Status ValidateData(const Params& params, const Inputs& inputs, void* output, Problem* problem);

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_STRATEGY_VALIDATION_H_
