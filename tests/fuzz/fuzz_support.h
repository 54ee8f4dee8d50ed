// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// What the libFuzzer targets share: reading attributes from the fuzzer's bytes, 16-bit element access, and the
// accuracy check against the reference.
#ifndef ROIALIGN_TESTS_FUZZ_FUZZ_SUPPORT_H_
#define ROIALIGN_TESTS_FUZZ_FUZZ_SUPPORT_H_

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/half_float.h"
#include "roialign/roialign.h"

namespace roialign_fuzz {

// Reads bytes front to back; zeros once exhausted.
struct Reader {
  const uint8_t* p;
  size_t n;
  uint8_t U8() {
    if (n == 0) return 0;
    --n;
    return *p++;
  }
  uint32_t U32() { return static_cast<uint32_t>(U8()) | U8() << 8 | U8() << 16 | static_cast<uint32_t>(U8()) << 24; }
  float Coordinate() {
    switch (U8() % 8) {
      case 0: return NAN;
      case 1: return (U8() & 1) ? INFINITY : -INFINITY;
      case 2: return (U8() & 1) ? 3e38f : -3e38f;
      case 3: {
        const uint32_t bits = U32();
        float f;
        std::memcpy(&f, &bits, sizeof(f));
        return f;
      }
      default: return static_cast<float>(static_cast<int8_t>(U8())) / 4.0f;  // mostly sane, some negative
    }
  }
};

// Stores any int in a C enum field, as a C caller may (a C++ cast to the enum would be undefined behaviour).
template <typename CEnum>
void SetEnum(CEnum* field, int value) {
  static_assert(sizeof(CEnum) == sizeof(int), "C enums are int-sized");
  std::memcpy(field, &value, sizeof(value));
}

[[noreturn]] inline void Fail(const char* what) {
  std::fprintf(stderr, "fuzz: %s\n", what);
  std::abort();
}

// Every output byte starts as this; a refused call must leave all of them.
constexpr unsigned char kCanary = 0xA5;

// Mostly F32, sometimes each 16-bit dtype and F64.
inline roialign_dtype DType(Reader& r) {
  const uint8_t b = r.U8() % 8;
  return b == 0 ? ROIALIGN_DTYPE_F16 : b == 1 ? ROIALIGN_DTYPE_BF16 : b == 2 ? ROIALIGN_DTYPE_F64 : ROIALIGN_DTYPE_F32;
}

inline size_t ElementBytes(roialign_dtype dtype) {
  return dtype == ROIALIGN_DTYPE_F64 ? 8 : dtype == ROIALIGN_DTYPE_F32 ? 4 : 2;
}

// The RoIs of an F64 call, read in double: the float ones widened (plus, at random, one of their values nudged by
// less than a float's spacing, which only double coordinates can hold).
inline std::vector<double> RoisF64(Reader& r, const std::vector<float>& rois) {
  std::vector<double> out(rois.begin(), rois.end());
  if (!out.empty() && r.U8() % 4 == 0) out[r.U8() % out.size()] += 1e-9;
  return out;
}

// Channels a map or output of `layout` holds: the blocked layouts pad C to their block (4, 8, 16).
inline int64_t StoredChannels(roialign_layout layout, int64_t C) {
  const int64_t block = layout == ROIALIGN_LAYOUT_NCHW4C ? 4 : layout == ROIALIGN_LAYOUT_NCHW8C ? 8
                        : layout == ROIALIGN_LAYOUT_NCHW16C ? 16 : 1;
  return (C + block - 1) / block * block;
}

// Element i of a buffer of `dtype` elements, stored from / widened to f32 (16-bit: rounded to nearest even).
inline void Store(roialign_dtype dtype, float v, unsigned char* data, size_t i) {
  if (dtype == ROIALIGN_DTYPE_F64) {
    const double d = v;
    std::memcpy(data + 8 * i, &d, 8);
    return;
  }
  if (dtype == ROIALIGN_DTYPE_F32) {
    std::memcpy(data + 4 * i, &v, 4);
    return;
  }
  const uint16_t bits = dtype == ROIALIGN_DTYPE_F16 ? roialign::internal::F16BitsFromF32(v)
                                                    : roialign::internal::BF16BitsFromF32(v);
  std::memcpy(data + 2 * i, &bits, 2);
}
inline float Load(roialign_dtype dtype, const unsigned char* data, size_t i) {
  if (dtype == ROIALIGN_DTYPE_F64) {
    double v;
    std::memcpy(&v, data + 8 * i, 8);
    return static_cast<float>(v);
  }
  if (dtype == ROIALIGN_DTYPE_F32) {
    float v;
    std::memcpy(&v, data + 4 * i, 4);
    return v;
  }
  uint16_t bits;
  std::memcpy(&bits, data + 2 * i, 2);
  return dtype == ROIALIGN_DTYPE_F16 ? roialign::internal::F32FromF16Bits(bits)
                                     : roialign::internal::F32FromBF16Bits(bits);
}

// A map of small values that f16 and bf16 hold exactly (eighths in [-1, 1]).
inline void FillMap(roialign_dtype dtype, unsigned char* data, size_t elements) {
  for (size_t i = 0; i < elements; ++i) {
    Store(dtype, static_cast<float>(static_cast<int>((i * 2654435761u) % 17) - 8) / 8.0f, data, i);
  }
}

// docs/semantics.md#accuracy: the f32 tolerance, plus one unit in the last place of a 16-bit output; F64 kernels
// give the reference's bits (compared here narrowed to f32).
inline bool Agrees(roialign_dtype dtype, float got, float ref) {
  if (dtype == ROIALIGN_DTYPE_F64) return got == ref || (std::isnan(got) && std::isnan(ref));
  const float ulp = dtype == ROIALIGN_DTYPE_F32 ? 0.0f
                    : std::ldexp(std::fabs(ref) > 0.0f ? 1.0f : 0.0f, std::ilogb(ref)) *
                          (dtype == ROIALIGN_DTYPE_F16 ? 0x1p-10f : 0x1p-7f);
  return std::fabs(got - ref) <= 1e-5f + 1e-4f * std::fabs(ref) + ulp;
}

// roialign_run of one map on `threads` threads.
inline roialign_status RunOne(const roialign_kernel* kernel, const void* map, int64_t N, int64_t C, int64_t H,
                              int64_t W, const float* rois, const int64_t* batch_indices, int64_t K, void* out,
                              int32_t threads, const double* rois_f64 = nullptr) {
  roialign_inputs in;
  roialign_inputs_init(&in);
  in.batch = N;
  in.channels = C;
  in.maps[0] = {map, H, W, {0, 0, 0, 0}};
  in.rois = rois;
  in.rois_f64 = rois_f64;
  in.batch_indices = batch_indices;
  in.num_rois = K;
  roialign_options options;
  roialign_options_init(&options);
  options.num_threads = threads;
  return roialign_run(kernel, &in, out, &options);
}

}  // namespace roialign_fuzz

#endif  // ROIALIGN_TESTS_FUZZ_FUZZ_SUPPORT_H_
