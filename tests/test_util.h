// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Shared helpers for the GoogleTest suites: problems, running kernels, the tolerance.
#ifndef ROIALIGN_TESTS_TEST_UTIL_H_
#define ROIALIGN_TESTS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/library.h"
#include "kernels/half_float.h"
#include "kernels/problem.h"

namespace roialign {
namespace testing {

// One unit in the last place of `dtype` at |x| (the spacing of its values there; 0 for f32, whose results the
// tolerance below already covers).
inline float UlpOf(DType dtype, float x) {
  const int exponent = x == 0.0f ? -1000 : std::ilogb(x);
  switch (dtype) {
    case DType::kF32:
      return 0.0f;
    case DType::kF16:
      return std::ldexp(1.0f, std::max(exponent, -14) - 10);
    case DType::kBF16:
      return std::ldexp(1.0f, std::max(exponent, -126) - 7);
    case DType::kF64:
      return 0.0f;
  }
  return 0.0f;
}

// docs/semantics.md#accuracy: SIMD kernels match the reference within 1e-5 + 1e-4 * |ref| (inputs of magnitude
// about 1), plus one unit in the last place of a 16-bit output type (the f32 results may round to neighbours).
// float64 kernels compute the reference's bits (docs/semantics.md#float64): equal, also once narrowed to f32.
inline bool WithinTolerance(float got, float ref, DType dtype = DType::kF32) {
  if (std::isnan(ref)) return std::isnan(got);
  if (dtype == DType::kF64) return got == ref;
  if (std::isinf(ref)) return got == ref;
  return std::fabs(got - ref) <= 1e-5f + 1e-4f * std::fabs(ref) + UlpOf(dtype, ref);
}

// f32 values stored as `dtype` (rounded to nearest even), as raw bytes.
inline std::vector<unsigned char> StoreAs(DType dtype, const std::vector<float>& values) {
  std::vector<unsigned char> out(values.size() * static_cast<size_t>(internal::BytesOf(dtype)));
  for (size_t i = 0; i < values.size(); ++i) {
    switch (dtype) {
      case DType::kF32:
        internal::StoreF32As(values[i], reinterpret_cast<float*>(out.data()) + i);
        break;
      case DType::kF16:
        internal::StoreF32As(values[i], reinterpret_cast<hwy::float16_t*>(out.data()) + i);
        break;
      case DType::kBF16:
        internal::StoreF32As(values[i], reinterpret_cast<hwy::bfloat16_t*>(out.data()) + i);
        break;
      case DType::kF64:
        reinterpret_cast<double*>(out.data())[i] = values[i];
        break;
    }
  }
  return out;
}

// `n` elements of `dtype` at `data`, widened to f32 (exact; f64 rounded to nearest).
inline std::vector<float> WidenFrom(DType dtype, const void* data, size_t n) {
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) {
    switch (dtype) {
      case DType::kF32:
        out[i] = static_cast<const float*>(data)[i];
        break;
      case DType::kF16:
        out[i] = internal::ToF32(static_cast<const hwy::float16_t*>(data)[i]);
        break;
      case DType::kBF16:
        out[i] = internal::ToF32(static_cast<const hwy::bfloat16_t*>(data)[i]);
        break;
      case DType::kF64:
        out[i] = static_cast<float>(static_cast<const double*>(data)[i]);
        break;
    }
  }
  return out;
}

// A feature map (in `layout`) plus RoIs in both formats.
struct Problem {
  int64_t n = 1, c = 1, h = 1, w = 1;
  std::vector<float> input;         // layout of the params it is run with
  std::vector<float> rois5;         // [K,5]
  std::vector<float> rois4;         // [K,4]
  std::vector<int64_t> batch_idx;   // [K]
  std::vector<double> rois5_f64, rois4_f64;  // the same in double, for F64 calls
  int64_t k() const { return static_cast<int64_t>(batch_idx.size()); }
};

// Transposes an NCHW tensor to NHWC.
template <typename T>
std::vector<T> ToNhwc(const std::vector<T>& nchw, int64_t n, int64_t c, int64_t h, int64_t w) {
  std::vector<T> out(nchw.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) out[((b * h + y) * w + x) * c + ch] = nchw[((b * c + ch) * h + y) * w + x];
  return out;
}

// Stores an NCHW tensor in `layout`. The padded lanes of a blocked layout's last block get `pad`: NaN by default,
// which the kernels must never read into a result.
template <typename T>
std::vector<T> ToLayout(const std::vector<T>& nchw, Layout layout, int64_t n, int64_t c, int64_t h, int64_t w,
                        T pad = static_cast<T>(NAN)) {
  const internal::MapStrides s = internal::StridesOf(layout, c, h, w);
  std::vector<T> out(static_cast<size_t>(n * s.image), pad);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) out[static_cast<size_t>(s.Offset(b, ch, y, x))] = nchw[((b * c + ch) * h + y) * w + x];
  return out;
}

// Elements of a [K, C, PH, PW] output in `layout`, padded lanes included.
inline size_t OutputSize(Layout layout, int64_t k, int64_t c, int64_t ph, int64_t pw) {
  return static_cast<size_t>(k * internal::StridesOf(layout, c, ph, pw).image);
}

// Adds a RoI to both formats.
inline void AddRoi(Problem* p, int64_t batch, float x1, float y1, float x2, float y2) {
  p->rois5.insert(p->rois5.end(), {static_cast<float>(batch), x1, y1, x2, y2});
  p->rois4.insert(p->rois4.end(), {x1, y1, x2, y2});
  p->batch_idx.push_back(batch);
  p->rois5_f64.assign(p->rois5.begin(), p->rois5.end());
  p->rois4_f64.assign(p->rois4.begin(), p->rois4.end());
}

// Random map in [-1, 1] (NCHW) and K RoIs in image coordinates (map size / scale), some partly or wholly
// outside the map, some tiny.
inline Problem RandomProblem(std::mt19937* rng, int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, float scale) {
  Problem p;
  p.n = n;
  p.c = c;
  p.h = h;
  p.w = w;
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  p.input.resize(static_cast<size_t>(n * c * h * w));
  for (float& v : p.input) v = value(*rng);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const float img_w = static_cast<float>(w) / scale, img_h = static_cast<float>(h) / scale;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t b = static_cast<int64_t>(u(*rng) * static_cast<float>(n)) % n;
    float x1 = (u(*rng) * 1.6f - 0.3f) * img_w, y1 = (u(*rng) * 1.6f - 0.3f) * img_h;
    float bw = u(*rng) * 0.8f * img_w, bh = u(*rng) * 0.8f * img_h;
    if (i % 7 == 3) bw = bh = u(*rng) * 0.5f;  // tiny
    if (i % 11 == 5) x1 = -2.0f * img_w;        // wholly outside
    AddRoi(&p, b, x1, y1, x1 + bw, y1 + bh);
  }
  return p;
}

// Inputs describing `p` with its map at `map` (p.input, or a channels-last copy of it, in any dtype).
// F64 reads the RoIs in double.
inline Inputs InputsOf(const Problem& p, const void* map, bool use_batch_indices = false, DType dtype = DType::kF32) {
  Inputs in;
  in.input = map;
  in.batch = p.n;
  in.channels = p.c;
  in.height = p.h;
  in.width = p.w;
  in.rois = use_batch_indices ? p.rois4.data() : p.rois5.data();
  in.batch_indices = use_batch_indices ? p.batch_idx.data() : nullptr;
  in.num_rois = p.k();
  if (dtype == DType::kF64) {
    in.rois = nullptr;
    in.rois_f64 = use_batch_indices ? p.rois4_f64.data() : p.rois5_f64.data();
  }
  return in;
}

// Selects `target` for `params` and runs it on p's map stored in params.dtype (rounded to nearest even); fails
// the test on any error. Returns the output widened to f32.
inline std::vector<float> RunOrFail(const std::string& target, const Params& params, const Problem& p,
                                    bool use_batch_indices = false, int threads = 1,
                                    std::string* kernel_name = nullptr) {
  const size_t n = OutputSize(params.layout, p.k(), p.c, params.pooled_height, params.pooled_width);
  Selection sel = SelectKernel(target, params);
  EXPECT_TRUE(sel.ok()) << target << ": " << sel.status().message();
  if (!sel.ok()) return std::vector<float>(n, -777.0f);
  if (kernel_name) *kernel_name = sel->name();
  const std::vector<unsigned char> map = StoreAs(params.dtype, ToLayout(p.input, params.layout, p.n, p.c, p.h, p.w));
  std::vector<unsigned char> out = StoreAs(params.dtype, std::vector<float>(n, -777.0f));
  const Status s = sel->Run(InputsOf(p, map.data(), use_batch_indices, params.dtype), out.data(), threads);
  EXPECT_TRUE(s.ok()) << s.message();
  return WidenFrom(params.dtype, out.data(), n);
}

// Owns a kernel of the C API.
struct KernelHolder {
  roialign_kernel* k = nullptr;
  KernelHolder() = default;
  KernelHolder(const KernelHolder&) = delete;
  KernelHolder& operator=(const KernelHolder&) = delete;
  ~KernelHolder() { roialign_kernel_free(k); }
};

// A caller's pool that runs every task on the calling thread, last first: a result that depended on the order of
// tasks would change.
inline void ReversePool(void*, int64_t count, roialign_task_fn task, void* context) {
  for (int64_t i = count - 1; i >= 0; --i) task(context, i);
}

// A caller's pool of the C API as the C++ API's ThreadPool (roialign.hpp), for the public layout transforms.
inline ThreadPool CppPool(const roialign_threadpool& pool) {
  return {pool.parallel_for, pool.pool_context, pool.num_threads};
}

}  // namespace testing
}  // namespace roialign

#endif  // ROIALIGN_TESTS_TEST_UTIL_H_
