// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Attribute validation at selection (docs/errors-and-limits.md): a request with a bad attribute never gets a
// kernel.
#ifndef ROIALIGN_STRATEGY_VALIDATE_PARAMS_H_
#define ROIALIGN_STRATEGY_VALIDATE_PARAMS_H_

#include "core/library.h"

namespace roialign {
namespace internal {

// INVALID_ARGUMENT when an attribute is out of range or an enum value unknown.
Status ValidateParams(const Params& params);
// The multi-level attributes: 1 to ROIALIGN_MAX_LEVELS finite, positive scales, a known rule, and what the rule
// needs (SCALE: powers of two, in any order, repeats allowed; a finite canonical size > 0). params.params is checked
// by ValidateParams.
Status ValidateMultiLevelParams(const MultiLevelParams& params);

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_STRATEGY_VALIDATE_PARAMS_H_
