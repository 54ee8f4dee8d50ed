// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "strategy/validate_params.h"

#include <cmath>
#include <string>

#include "core/enums.h"
#include "core/messages.h"

namespace roialign {
namespace internal {
namespace {

// "unknown pool mode value 7 (AVG=0, MAX=1, MAX_ONNX=2)", or OK for a known value.
template <typename Enum>
Status CheckKnown(Enum value) {
  if (IsKnown(value)) return Status::Ok();
  return Invalid("unknown " + std::string(EnumTraits<Enum>::kWhat) + " value " +
                 std::to_string(static_cast<int>(value)) + " (" + ValueList<Enum>() + ")");
}

}  // namespace

Status ValidateParams(const Params& p) {
  if (p.pooled_height < 1 || p.pooled_width < 1) {
    return Invalid("pooled_height and pooled_width must be >= 1 (got " + std::to_string(p.pooled_height) + " x " +
                   std::to_string(p.pooled_width) + ")");
  }
  if (p.pooled_height > ROIALIGN_MAX_POOLED_SIZE || p.pooled_width > ROIALIGN_MAX_POOLED_SIZE) {
    return Invalid("pooled size " + std::to_string(p.pooled_height) + " x " + std::to_string(p.pooled_width) +
                   " exceeds the limit " + std::to_string(ROIALIGN_MAX_POOLED_SIZE));
  }
  if (!std::isfinite(p.spatial_scale) || !(p.spatial_scale > 0.0f)) {
    return Invalid("spatial_scale must be finite and > 0 (got " + FloatText(p.spatial_scale) + ")");
  }
  if (p.sampling_ratio > ROIALIGN_MAX_SAMPLING_GRID) {
    return Invalid("sampling_ratio " + std::to_string(p.sampling_ratio) + " exceeds the limit " +
                   std::to_string(ROIALIGN_MAX_SAMPLING_GRID));
  }
  for (const Status& s : {CheckKnown(p.layout), CheckKnown(p.dtype), CheckKnown(p.pool_mode),
                          CheckKnown(p.coordinate_mode), CheckKnown(p.roi_kind), CheckKnown(p.angle_unit),
                          CheckKnown(p.rotation)}) {
    if (!s.ok()) return s;
  }
  // Rotated RoIs (docs/semantics.md#rotated-rois): `aligned` is the coordinate mode, HALF_PIXEL or LEGACY; the angle's
  // unit and direction mean nothing to an axis-aligned box.
  if (p.roi_kind == RoiKind::kRotated && p.coordinate_mode != CoordinateMode::kHalfPixel &&
      p.coordinate_mode != CoordinateMode::kLegacy) {
    return Invalid(std::string("rotated RoIs take coordinate mode HALF_PIXEL (aligned) or LEGACY (mmcv's "
                               "aligned=False), not ") + EnumName(p.coordinate_mode));
  }
  if (p.roi_kind == RoiKind::kAxisAligned &&
      (p.angle_unit != AngleUnit::kRadians || p.rotation != Rotation::kCounterClockwise)) {
    return Invalid(std::string("angle unit ") + EnumName(p.angle_unit) + " and rotation " +
                   EnumName(p.rotation) +
                   " are read for rotated RoIs only (roi kind ROTATED); leave them RADIANS and COUNTER_CLOCKWISE");
  }
  // F64 reads its scale in double (0 takes spatial_scale); the other dtypes have no use for one.
  if (p.spatial_scale_f64 != 0.0 && p.dtype != DType::kF64) {
    return Invalid("spatial_scale_f64 is " + FloatText(p.spatial_scale_f64) + ", but it is read for dtype F64 only "
                   "(dtype " + EnumName(p.dtype) + " reads spatial_scale); leave it 0");
  }
  if (p.spatial_scale_f64 != 0.0 && (!std::isfinite(p.spatial_scale_f64) || !(p.spatial_scale_f64 > 0.0))) {
    return Invalid("spatial_scale_f64 must be finite and > 0, or 0 to take spatial_scale (got " +
                   FloatText(p.spatial_scale_f64) + ")");
  }
  return Status::Ok();
}

Status ValidateMultiLevelParams(const MultiLevelParams& p) {
  const size_t L = p.scales.size();
  if (L < 1 || L > ROIALIGN_MAX_LEVELS) {
    return Invalid("the number of levels must be 1 to " + std::to_string(ROIALIGN_MAX_LEVELS) + " (got " +
                   std::to_string(L) + ")");
  }
  for (size_t i = 0; i < L; ++i) {
    const float s = p.scales[i];
    if (!std::isfinite(s) || !(s > 0.0f)) {
      return Invalid("scale of level " + std::to_string(i) + " must be finite and > 0 (got " + FloatText(s) + ")");
    }
  }
  Status s = CheckKnown(p.level_rule);
  if (!s.ok()) return s;
  switch (p.level_rule) {
    case LevelRule::kGiven:
      return Status::Ok();
    case LevelRule::kScale:
      // The rule yields integer levels k = -log2(scale), mapped to maps by k - k_min with k_min and k_max of the
      // first and last scales (torchvision's LevelMapper): any powers of two, repeated ones included.
      for (size_t i = 0; i < L; ++i) {
        int exponent = 0;
        if (std::frexp(p.scales[i], &exponent) != 0.5f) {
          return Invalid("level rule SCALE needs power-of-two scales; level " + std::to_string(i) + " has " +
                         FloatText(p.scales[i]));
        }
      }
      break;
    case LevelRule::kOpenVino:
      break;
  }
  if (!std::isfinite(p.canonical_size) || !(p.canonical_size > 0.0f)) {
    return Invalid("canonical_size must be finite and > 0 (got " + FloatText(p.canonical_size) + ")");
  }
  if (p.canonical_level < -64 || p.canonical_level > 64) {
    return Invalid("canonical_level must be in [-64, 64] (got " + std::to_string(p.canonical_level) + ")");
  }
  return Status::Ok();
}

}  // namespace internal
}  // namespace roialign
