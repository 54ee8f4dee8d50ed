// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The public names of the enums (roialign.hpp), read from the one table in core/enums.h.
#include "core/enums.h"

namespace roialign {

const char* ToString(StatusCode code) { return internal::EnumName(code); }
const char* ToString(Layout layout) { return internal::EnumName(layout); }
const char* ToString(DType dtype) { return internal::EnumName(dtype); }
const char* ToString(PoolMode mode) { return internal::EnumName(mode); }
const char* ToString(CoordinateMode mode) { return internal::EnumName(mode); }
const char* ToString(LevelRule rule) { return internal::EnumName(rule); }
const char* ToString(RoiKind kind) { return internal::EnumName(kind); }
const char* ToString(AngleUnit unit) { return internal::EnumName(unit); }
const char* ToString(Rotation rotation) { return internal::EnumName(rotation); }

}  // namespace roialign
