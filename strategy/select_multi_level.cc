// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Selection of a multi-level (pyramid) kernel: the level attributes, then the single-level selection every level runs.
#include <string>

#include "execution/selected_kernel.h"
#include "core/library.h"
#include "strategy/validate_params.h"

namespace roialign {

PyramidSelection SelectPyramidKernel(const std::string& target, const MultiLevelParams& params) {
  PyramidSelection result;
  result.status = internal::ValidateMultiLevelParams(params);
  if (!result.status.ok()) return result;
  // Level 0's scale stands in for the attribute checks; each level runs with its own scale.
  Params single = params.params;
  single.spatial_scale = params.scales[0];
  Selection selected = SelectKernel(target, single);
  if (!selected.ok()) {
    result.status = selected.status();
    return result;
  }
  const internal::SelectedKernel* impl = KernelAccess::Selected(selected.value());
  if (impl->custom) {
    // A registered implementation sees one map and contiguous RoIs; levels would need a gather and a scatter.
    result.status = Status(StatusCode::kUnsupported, "multi-level RoIAlign runs built-in implementations only; target '" +
                                                         target + "' selected the registered implementation '" +
                                                         impl->name + "'");
    return result;
  }
  result.kernel = KernelAccess::MakePyramid(selected.value(), params);
  return result;
}

}  // namespace roialign
