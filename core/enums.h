// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The one list of every public enum's values and names. Validation, selection, the registry's masks, the C
// API, messages and the benchmarks' parsers all read these tables, so a new mode is added here (and in the
// public headers, which fix its value) and nowhere else; switches over modes have no `default:`, so -Wswitch
// names every place that must handle it.
#ifndef ROIALIGN_CORE_ENUMS_H_
#define ROIALIGN_CORE_ENUMS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "roialign/roialign.hpp"

namespace roialign {
namespace internal {

// Per enum: what the attribute is called in messages, and the name of each value; value i is kNames[i] (the
// public enums are numbered 0, 1, 2... with no gaps).
template <typename Enum>
struct EnumTraits;

template <>
struct EnumTraits<Layout> {
  static constexpr const char* kWhat = "layout";
  static constexpr std::array<const char*, 5> kNames = {"NCHW", "NHWC", "NCHW4c", "NCHW8c", "NCHW16c"};
  // Channels per contiguous block (kernels/problem.h MapStrides); 0: all of them, channels last.
  static constexpr std::array<int64_t, 5> kChannelBlock = {1, 0, 4, 8, 16};
  static_assert(static_cast<size_t>(Layout::kNCHW16c) + 1 == kNames.size(), "one name per Layout value");
};
template <>
struct EnumTraits<DType> {
  static constexpr const char* kWhat = "dtype";
  static constexpr std::array<const char*, 4> kNames = {"F32", "F16", "BF16", "F64"};
  static constexpr std::array<int64_t, 4> kBytes = {4, 2, 2, 8};  // bytes per element
  static_assert(static_cast<size_t>(DType::kF64) + 1 == kNames.size(), "one name per DType value");
};
template <>
struct EnumTraits<PoolMode> {
  static constexpr const char* kWhat = "pool mode";
  static constexpr std::array<const char*, 3> kNames = {"AVG", "MAX", "MAX_ONNX"};
  static_assert(static_cast<size_t>(PoolMode::kMaxOnnx) + 1 == kNames.size(), "one name per PoolMode value");
};
template <>
struct EnumTraits<CoordinateMode> {
  static constexpr const char* kWhat = "coordinate mode";
  static constexpr std::array<const char*, 4> kNames = {"LEGACY", "HALF_PIXEL", "HALF_PIXEL_CENTERED",
                                                          "LEGACY_UNCLAMPED"};
  static_assert(static_cast<size_t>(CoordinateMode::kLegacyUnclamped) + 1 == kNames.size(),
                "one name per CoordinateMode value");
};
template <>
struct EnumTraits<LevelRule> {
  static constexpr const char* kWhat = "level rule";
  static constexpr std::array<const char*, 3> kNames = {"SCALE", "GIVEN", "OPENVINO"};
  static_assert(static_cast<size_t>(LevelRule::kOpenVino) + 1 == kNames.size(), "one name per LevelRule value");
};
template <>
struct EnumTraits<RoiKind> {
  static constexpr const char* kWhat = "roi kind";
  static constexpr std::array<const char*, 2> kNames = {"AXIS_ALIGNED", "ROTATED"};
  static_assert(static_cast<size_t>(RoiKind::kRotated) + 1 == kNames.size(), "one name per RoiKind value");
};
template <>
struct EnumTraits<AngleUnit> {
  static constexpr const char* kWhat = "angle unit";
  static constexpr std::array<const char*, 2> kNames = {"RADIANS", "DEGREES"};
  static_assert(static_cast<size_t>(AngleUnit::kDegrees) + 1 == kNames.size(), "one name per AngleUnit value");
};
template <>
struct EnumTraits<Rotation> {
  static constexpr const char* kWhat = "rotation";
  static constexpr std::array<const char*, 2> kNames = {"COUNTER_CLOCKWISE", "CLOCKWISE"};
  static_assert(static_cast<size_t>(Rotation::kClockwise) + 1 == kNames.size(), "one name per Rotation value");
};
template <>
struct EnumTraits<StatusCode> {
  static constexpr const char* kWhat = "status";
  static constexpr std::array<const char*, 5> kNames = {"OK", "INVALID_ARGUMENT", "UNSUPPORTED", "OUT_OF_MEMORY",
                                                        "INTERNAL"};
  static_assert(static_cast<size_t>(StatusCode::kInternal) + 1 == kNames.size(), "one name per StatusCode value");
};

template <typename Enum>
constexpr int EnumCount() {
  return static_cast<int>(EnumTraits<Enum>::kNames.size());
}

// Whether e is one of the enum's values (C callers may store any int in an enum field).
template <typename Enum>
constexpr bool IsKnown(Enum e) {
  return static_cast<int>(e) >= 0 && static_cast<int>(e) < EnumCount<Enum>();
}

// "NCHW", "MAX_ONNX", ...; "?" for a value outside the enum.
template <typename Enum>
constexpr const char* EnumName(Enum e) {
  return IsKnown(e) ? EnumTraits<Enum>::kNames[static_cast<size_t>(e)] : "?";
}

// Channels a tensor of `channels` holds in memory: blocked layouts pad the last block to the block size.
constexpr int64_t StoredChannels(Layout layout, int64_t channels) {
  const int64_t block = EnumTraits<Layout>::kChannelBlock[static_cast<size_t>(layout)];
  // Counts within a block of INT64_MAX stay as they are: validation refuses them as overflowing anyway.
  return block > 1 && channels <= INT64_MAX - block ? (channels + block - 1) / block * block : channels;
}

// Whether a layout keeps channels in blocks of a fixed size > 1 (NCHW4c, NCHW8c, NCHW16c).
constexpr bool IsBlocked(Layout layout) { return EnumTraits<Layout>::kChannelBlock[static_cast<size_t>(layout)] > 1; }

// Values per RoI row: (batch,) x1, y1, x2, y2 or (batch,) cx, cy, w, h, angle; the batch column only when no batch
// indices are given.
constexpr int64_t RoiColumns(RoiKind kind, bool batch_indices) {
  return (kind == RoiKind::kRotated ? 5 : 4) + (batch_indices ? 0 : 1);
}

// Bytes per element of a (known) dtype.
constexpr int64_t BytesOf(DType dtype) { return EnumTraits<DType>::kBytes[static_cast<size_t>(dtype)]; }

// Every value, in order.
template <typename Enum>
std::vector<Enum> AllValues() {
  std::vector<Enum> out;
  for (int i = 0; i < EnumCount<Enum>(); ++i) out.push_back(static_cast<Enum>(i));
  return out;
}

// The value named `name` (exactly as EnumName spells it); false if none.
template <typename Enum>
bool ParseEnum(const std::string& name, Enum* out) {
  for (int i = 0; i < EnumCount<Enum>(); ++i) {
    if (name == EnumTraits<Enum>::kNames[static_cast<size_t>(i)]) {
      *out = static_cast<Enum>(i);
      return true;
    }
  }
  return false;
}

// Bit of a value in the support masks; a value outside the enum maps to bit 31, which no mask accepts.
template <typename Enum>
constexpr uint32_t Bit(Enum e) {
  return IsKnown(e) ? uint32_t{1} << static_cast<int>(e) : uint32_t{1} << 31;
}

// The mask of every value.
template <typename Enum>
constexpr uint32_t AllMask() {
  return (uint32_t{1} << EnumCount<Enum>()) - 1;
}

template <typename Enum>
uint32_t MaskOf(const std::vector<Enum>& values) {
  uint32_t m = 0;
  for (Enum v : values) m |= Bit(v);
  return m;
}

// The known values whose bits are set.
template <typename Enum>
std::vector<Enum> ValuesIn(uint32_t mask) {
  std::vector<Enum> out;
  for (Enum v : AllValues<Enum>()) {
    if (mask & Bit(v)) out.push_back(v);
  }
  return out;
}

// "AVG, MAX" for the values in `mask`; "none" when there are none.
template <typename Enum>
std::string MaskNames(uint32_t mask) {
  std::string out;
  for (Enum v : ValuesIn<Enum>(mask)) out += (out.empty() ? "" : ", ") + std::string(EnumName(v));
  return out.empty() ? "none" : out;
}

// "AVG=0, MAX=1, MAX_ONNX=2": what a message about an unknown value lists.
template <typename Enum>
std::string ValueList() {
  std::string out;
  for (Enum v : AllValues<Enum>()) {
    out += (out.empty() ? "" : ", ") + std::string(EnumName(v)) + "=" + std::to_string(static_cast<int>(v));
  }
  return out;
}

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_CORE_ENUMS_H_
