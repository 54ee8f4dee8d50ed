// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The level rules of multi-level RoIAlign (docs/multi-level.md): which map of a feature pyramid pools a RoI.
// Computed in the RoIs' precision (float32, or float64 for F64, as torchvision computes a float64 box's level) in
// the reference systems' order of operations, so that boxes on a level boundary land where torchvision and
// OpenVINO put them.
#ifndef ROIALIGN_EXECUTION_PYRAMID_LEVELS_H_
#define ROIALIGN_EXECUTION_PYRAMID_LEVELS_H_

#include <cmath>
#include <cstdint>

#include "core/library.h"

namespace roialign {
namespace internal {

// A RoI that no level pools (OPENVINO rule, area <= 0): its output is zeros.
inline constexpr int32_t kNotPooled = -1;

// The pyramid level k = -log2(scale) of a power-of-two scale (SCALE rule).
inline int32_t LevelOfScale(float scale) {
  int exponent = 0;
  std::frexp(scale, &exponent);  // scale = 0.5 * 2^exponent
  return 1 - exponent;
}

// The index k_min = -log2(scales[0]) of the first map's level (SCALE rule), as torchvision's LevelMapper takes it.
inline int32_t FinestLevel(const MultiLevelParams& p) { return LevelOfScale(p.scales.front()); }

// Map index in [0, num_levels) of the box (x1, y1, x2, y2), or kNotPooled, under the SCALE or OPENVINO rule
// (finite coordinates). `k_min` is FinestLevel(p).
template <typename R>
inline int32_t LevelOfBox(const MultiLevelParams& p, int32_t k_min, R x1, R y1, R x2, R y2) {
  const int32_t top = static_cast<int32_t>(p.scales.size()) - 1;
  const R area = (x2 - x1) * (y2 - y1);
  const R canonical_size = p.canonical_size, eps = R(1e-6);
  switch (p.level_rule) {
    case LevelRule::kScale: {
      // torchvision's LevelMapper: floor(k0 + log2(sqrt(area) / s0) + eps), clamped to [k_min, k_max] of the first
      // and last maps' scales as torch.clamp clamps (to k_max where k_min > k_max), minus k_min. Zero area gives
      // -inf, so k_min; a negative area (one inverted axis) has no level there (NaN), here k_min too. Repeated
      // scales (two maps of one stride) never reach the later maps; where the scales skip a level or grow, a level
      // can name no map, and torchvision's pooler then leaves the box's output zero, as kNotPooled does.
      const R level = area > R(0) ? std::floor(static_cast<R>(p.canonical_level) +
                                               std::log2(std::sqrt(area) / canonical_size) + eps)
                                  : -R(INFINITY);
      const int32_t k_max = LevelOfScale(p.scales.back());
      // Clamp in R first: the level may be far outside int32 for extreme boxes.
      const R clamped = std::fmin(std::fmax(level, static_cast<R>(k_min)), static_cast<R>(k_max));
      const int32_t index = static_cast<int32_t>(clamped) - k_min;
      return index >= 0 && index <= top ? index : kNotPooled;
    }
    case LevelRule::kOpenVino: {
      // ExperimentalDetectronROIFeatureExtractor: floor(log2(sqrt(area) / s0 + eps) + 2) with level 0 = P2.
      if (!(area > R(0))) return kNotPooled;
      const R level =
          std::floor(std::log2(std::sqrt(area) / canonical_size + eps) + static_cast<R>(p.canonical_level - 2));
      return static_cast<int32_t>(std::fmin(std::fmax(level, R(0)), static_cast<R>(top)));
    }
    case LevelRule::kGiven:
      return 0;  // not used: the caller gives the levels
  }
  return kNotPooled;
}

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_EXECUTION_PYRAMID_LEVELS_H_
