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
                          CheckKnown(p.coordinate_mode)}) {
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace internal
}  // namespace roialign
