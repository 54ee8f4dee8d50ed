// libFuzzer target over the C API: random attributes (every dtype), shapes, RoIs (NaN, +-inf, huge, negative,
// inverted), batch indices, RoI formats, targets and thread counts, on exactly-sized heap buffers (ASan guards
// them). Every accepted call must match the reference; every refused call must leave the output untouched.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <cstdio>
#include <vector>

#include "kernels/half_float.h"
#include "roialign/roialign.h"

namespace {

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

void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_c_api: %s\n", what);
  std::abort();
}

constexpr unsigned char kCanary = 0xA5;

size_t ElementBytes(roialign_dtype dtype) { return dtype == ROIALIGN_DTYPE_F32 ? 4 : 2; }

// Element i of a buffer of `dtype` elements, stored from / widened to f32 (16-bit: rounded to nearest even).
void Store(roialign_dtype dtype, float v, unsigned char* data, size_t i) {
  if (dtype == ROIALIGN_DTYPE_F32) {
    std::memcpy(data + 4 * i, &v, 4);
    return;
  }
  const uint16_t bits = dtype == ROIALIGN_DTYPE_F16 ? roialign::internal::F16BitsFromF32(v)
                                                    : roialign::internal::BF16BitsFromF32(v);
  std::memcpy(data + 2 * i, &bits, 2);
}
float Load(roialign_dtype dtype, const unsigned char* data, size_t i) {
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader r{data, size};
  roialign_params params;
  params.pooled_height = r.U8() % 5;  // 0 is invalid on purpose
  params.pooled_width = r.U8() % 5 + (r.U8() % 16 == 0 ? 70000 : 0);
  static const float kScales[] = {1.0f, 0.5f, 0.25f, 0.0f, -1.0f, NAN, INFINITY, 1e-30f, 1e30f};
  params.spatial_scale = kScales[r.U8() % 9];
  params.sampling_ratio = static_cast<int8_t>(r.U8()) % 6;
  SetEnum(&params.coordinate_mode, r.U8() % 5);  // 4 is invalid on purpose
  SetEnum(&params.pool_mode, r.U8() % 4);
  SetEnum(&params.layout, r.U8() % 3);
  const uint8_t dtype_byte = r.U8() % 8;  // mostly F32
  SetEnum(&params.dtype, dtype_byte == 0   ? ROIALIGN_DTYPE_F16
                         : dtype_byte == 1 ? ROIALIGN_DTYPE_BF16
                                           : ROIALIGN_DTYPE_F32);
  static const char* const kTargets[] = {"host", "portable", "x86-sse4", "arm-neon", "generic", "bogus"};
  const char* target = kTargets[r.U8() % 6];
  const int64_t N = r.U8() % 4 - (r.U8() % 32 == 0 ? 5 : 0), C = r.U8() % 21, H = r.U8() % 13, W = r.U8() % 13;
  const int64_t K = r.U8() % 9;
  const bool k4 = r.U8() & 1;
  const int32_t threads = r.U8() % 4;

  roialign_kernel* kernel = nullptr;
  if (roialign_select(target, &params, &kernel) != ROIALIGN_OK) {
    if (kernel != nullptr) Fail("failed select returned a kernel");
    return 0;
  }
  const int64_t map_elems = N > 0 ? N * C * H * W : 0;
  std::vector<unsigned char> map(static_cast<size_t>(map_elems) * ElementBytes(params.dtype));
  for (size_t i = 0; i < static_cast<size_t>(map_elems); ++i) {
    Store(params.dtype, static_cast<float>(static_cast<int>((i * 2654435761u) % 17) - 8) / 8.0f, map.data(), i);
  }
  std::vector<float> rois(static_cast<size_t>(K * (k4 ? 4 : 5)));
  std::vector<int64_t> idx(static_cast<size_t>(K));
  for (int64_t k = 0; k < K; ++k) {
    if (k4) {
      const uint8_t b = r.U8();
      idx[k] = b < 200 ? b % 4 : (b < 230 ? -static_cast<int64_t>(b) : INT64_MAX - b);
    } else {
      const uint8_t b = r.U8();
      rois[5 * k] = b < 200 ? static_cast<float>(b % 4) : (b < 220 ? 0.5f : (b < 240 ? NAN : -1.0f));
    }
    for (int i = 0; i < 4; ++i) rois[(k4 ? 4 : 5) * k + (k4 ? 0 : 1) + i] = r.Coordinate();
  }
  const int64_t out_elems = K * C * params.pooled_height * params.pooled_width;
  // Exact size: ASan flags any overrun.
  std::vector<unsigned char> out(static_cast<size_t>(out_elems) * ElementBytes(params.dtype), kCanary);
  const roialign_status s = roialign_run(kernel, map.empty() ? nullptr : map.data(), N, C, H, W,
                                         rois.empty() ? nullptr : rois.data(), k4 ? idx.data() : nullptr, K,
                                         out.empty() ? nullptr : out.data(), threads);
  if (s != ROIALIGN_OK) {
    for (unsigned char v : out) {
      if (v != kCanary) Fail("refused call wrote to the output");
    }
    if (std::strlen(roialign_last_error()) == 0) Fail("refused call without a message");
  } else if (std::strcmp(roialign_kernel_name(kernel), "roi_align_nchw.reference") != 0 &&
             std::strcmp(roialign_kernel_name(kernel), "roi_align_nhwc.reference") != 0) {
    roialign_kernel* ref = nullptr;
    if (roialign_select("generic", &params, &ref) != ROIALIGN_OK) Fail("reference refused what a kernel accepted");
    std::vector<unsigned char> want(out.size(), 0);
    if (roialign_run(ref, map.empty() ? nullptr : map.data(), N, C, H, W, rois.empty() ? nullptr : rois.data(),
                     k4 ? idx.data() : nullptr, K, want.empty() ? nullptr : want.data(), 1) != ROIALIGN_OK) {
      Fail("reference refused data a kernel accepted");
    }
    for (size_t i = 0; i < static_cast<size_t>(out_elems); ++i) {
      const float got = Load(params.dtype, out.data(), i), ref = Load(params.dtype, want.data(), i);
      // docs/semantics.md#accuracy: one unit in the last place of a 16-bit output on top of the f32 tolerance.
      const float ulp = params.dtype == ROIALIGN_DTYPE_F32 ? 0.0f
                        : std::ldexp(std::fabs(ref) > 0.0f ? 1.0f : 0.0f, std::ilogb(ref)) *
                              (params.dtype == ROIALIGN_DTYPE_F16 ? 0x1p-10f : 0x1p-7f);
      if (!(std::fabs(got - ref) <= 1e-5f + 1e-4f * std::fabs(ref) + ulp)) Fail("kernel disagrees with reference");
    }
    roialign_kernel_free(ref);
  }
  roialign_kernel_free(kernel);
  return 0;
}
