// Lists FN() for every Highway target this translation unit compiled, as the initializer of an array. Include
// it in the HWY_ONCE part of a foreach_target kernel file; FN must be defined in each target's namespace.
#ifndef ROIALIGN_KERNELS_PER_TARGET_TABLE_H_
#define ROIALIGN_KERNELS_PER_TARGET_TABLE_H_

#include <hwy/highway.h>

// One entry per target, or nothing when the target is not compiled (no #if is possible inside a macro).
#if HWY_TARGETS & HWY_AVX3
#define ROIALIGN_ENTRY_AVX3(FN) N_AVX3::FN(),
#else
#define ROIALIGN_ENTRY_AVX3(FN)
#endif
#if HWY_TARGETS & HWY_AVX2
#define ROIALIGN_ENTRY_AVX2(FN) N_AVX2::FN(),
#else
#define ROIALIGN_ENTRY_AVX2(FN)
#endif
#if HWY_TARGETS & HWY_SSE4
#define ROIALIGN_ENTRY_SSE4(FN) N_SSE4::FN(),
#else
#define ROIALIGN_ENTRY_SSE4(FN)
#endif
#if HWY_TARGETS & HWY_SVE2
#define ROIALIGN_ENTRY_SVE2(FN) N_SVE2::FN(),
#else
#define ROIALIGN_ENTRY_SVE2(FN)
#endif
#if HWY_TARGETS & HWY_SVE
#define ROIALIGN_ENTRY_SVE(FN) N_SVE::FN(),
#else
#define ROIALIGN_ENTRY_SVE(FN)
#endif
#if HWY_TARGETS & HWY_NEON
#define ROIALIGN_ENTRY_NEON(FN) N_NEON::FN(),
#else
#define ROIALIGN_ENTRY_NEON(FN)
#endif
#if HWY_TARGETS & HWY_EMU128
#define ROIALIGN_ENTRY_EMU128(FN) N_EMU128::FN(),
#else
#define ROIALIGN_ENTRY_EMU128(FN)
#endif
#if HWY_TARGETS & HWY_SCALAR
#define ROIALIGN_ENTRY_SCALAR(FN) N_SCALAR::FN(),
#else
#define ROIALIGN_ENTRY_SCALAR(FN)
#endif

#define ROIALIGN_PER_TARGET_ENTRIES(FN)                                                                     \
  ROIALIGN_ENTRY_AVX3(FN) ROIALIGN_ENTRY_AVX2(FN) ROIALIGN_ENTRY_SSE4(FN) ROIALIGN_ENTRY_SVE2(FN)          \
      ROIALIGN_ENTRY_SVE(FN) ROIALIGN_ENTRY_NEON(FN) ROIALIGN_ENTRY_EMU128(FN) ROIALIGN_ENTRY_SCALAR(FN)

#endif  // ROIALIGN_KERNELS_PER_TARGET_TABLE_H_
