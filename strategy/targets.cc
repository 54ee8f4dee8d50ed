// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "strategy/targets.h"

#include <hwy/targets.h>

namespace roialign {
namespace internal {

const std::vector<IsaTarget>& IsaTargets() {
  // The portable target is Highway's emulated 128-bit vectors: SIMD code paths on any CPU, so that the kernels'
  // logic is tested even where no real ISA is compiled.
  static const std::vector<IsaTarget> kTargets = {
      {"x86-avx512", "avx512", HWY_AVX3, 300}, {"x86-avx2", "avx2", HWY_AVX2, 200},
      {"x86-sse4", "sse4", HWY_SSE4, 100},     {"arm-sve2", "sve2", HWY_SVE2, 300},
      {"arm-sve", "sve", HWY_SVE, 250},        {"arm-neon", "neon", HWY_NEON, 200},
      {"portable", "emu128", HWY_EMU128, 10},  {"portable", "scalar", HWY_SCALAR, 5},
  };
  return kTargets;
}

const IsaTarget* IsaTargetOf(int64_t hwy_target) {
  for (const IsaTarget& t : IsaTargets()) {
    if (t.hwy_target == hwy_target) return &t;
  }
  return nullptr;
}

bool IsBuiltinTargetName(const std::string& name) {
  if (name == "host" || name == "generic" || name == "x86" || name == "arm") return true;
  for (const IsaTarget& t : IsaTargets()) {
    if (name == t.target) return true;
  }
  return false;
}

bool TargetServes(const std::string& requested, const std::string& impl_target) {
  if (requested == impl_target) return true;
  const IsaTarget* isa = nullptr;
  for (const IsaTarget& t : IsaTargets()) {
    if (impl_target == t.target) isa = &t;
  }
  if (isa == nullptr) return false;  // "generic" and user targets serve only their own name
  if (requested == "host") return true;
  return (requested == "x86" && impl_target.rfind("x86-", 0) == 0) ||
         (requested == "arm" && impl_target.rfind("arm-", 0) == 0);
}

bool CpuSupports(int64_t hwy_target) {
  return hwy_target == 0 || (hwy::SupportedTargets() & hwy_target) != 0;
}

std::string CpuTargetsDescription() {
  std::string out;
  for (const IsaTarget& t : IsaTargets()) {
    if (!CpuSupports(t.hwy_target)) continue;
    if (!out.empty()) out += ", ";
    out += t.target;
    out += " (";
    out += t.isa;
    out += ")";
  }
  return out;
}

const char* BuildArchitecture() {
#if HWY_ARCH_X86_64
  return "x86-64";
#elif HWY_ARCH_ARM_A64
  return "aarch64";
#else
  return "other";
#endif
}

}  // namespace internal
}  // namespace roialign
