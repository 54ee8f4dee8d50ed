// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Target names, the Highway ISA behind each built-in SIMD target, and what this CPU supports.
#ifndef ROIALIGN_STRATEGY_TARGETS_H_
#define ROIALIGN_STRATEGY_TARGETS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace roialign {
namespace internal {

// A built-in target backed by one Highway target (e.g. "x86-avx2" <-> HWY_AVX2).
struct IsaTarget {
  const char* target;  // "x86-avx2"
  const char* isa;     // "avx2": the suffix of implementation names
  int64_t hwy_target;  // the Highway target bit
  int32_t priority;    // higher: preferred by "host" and the family alias
};

// Every SIMD target roialign knows, whether or not this build compiled it.
const std::vector<IsaTarget>& IsaTargets();
// The IsaTarget of a Highway target bit, or null.
const IsaTarget* IsaTargetOf(int64_t hwy_target);

// True for the names of built-in targets ("host", "generic", "x86", "arm", "portable" and the ISA targets).
bool IsBuiltinTargetName(const std::string& name);
// Whether an implementation registered for `impl_target` serves a request for `requested` (aliases: "host"
// covers every SIMD target, "x86" and "arm" their families).
bool TargetServes(const std::string& requested, const std::string& impl_target);
// True when this CPU can run code compiled for `hwy_target` (0 means "any CPU").
bool CpuSupports(int64_t hwy_target);
// The Highway targets this CPU supports, as our target names ("x86-avx512 x86-avx2 ...").
std::string CpuTargetsDescription();
// The architecture this library was compiled for ("x86-64", "aarch64", ...).
const char* BuildArchitecture();

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_STRATEGY_TARGETS_H_
