// Data validation at Run (docs/errors-and-limits.md): every data-dependent precondition in one pass, before any
// write, so that the kernels never re-check and the output is untouched on error.
#ifndef ROIALIGN_EXECUTION_VALIDATE_DATA_H_
#define ROIALIGN_EXECUTION_VALIDATE_DATA_H_

#include "kernels/problem.h"
#include "roialign/roialign.hpp"

namespace roialign {
namespace internal {

// Checks every data-dependent precondition of a call with attributes `params` (already validated at selection)
// and, on success, fills `problem` (including the largest sampling grid and the RoIs' footprint). Writes
// nothing else. Messages name the offending RoI.
Status ValidateData(const Params& params, const Inputs& inputs, void* output, Problem* problem);

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_VALIDATE_DATA_H_
