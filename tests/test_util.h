// Shared helpers for the GoogleTest suites: problems, running kernels, the tolerance.
#ifndef ROIALIGN_TESTS_TEST_UTIL_H_
#define ROIALIGN_TESTS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "roialign/roialign.hpp"

namespace roialign {
namespace testing {

// docs/semantics.md#accuracy: SIMD kernels match the reference within 1e-5 + 1e-4 * |ref| (inputs of magnitude about 1).
inline bool WithinTolerance(float got, float ref) {
  if (std::isnan(ref)) return std::isnan(got);
  if (std::isinf(ref)) return got == ref;
  return std::fabs(got - ref) <= 1e-5f + 1e-4f * std::fabs(ref);
}

// A feature map (in `layout`) plus RoIs in both formats.
struct Problem {
  int64_t n = 1, c = 1, h = 1, w = 1;
  std::vector<float> input;         // layout of the params it is run with
  std::vector<float> rois5;         // [K,5]
  std::vector<float> rois4;         // [K,4]
  std::vector<int64_t> batch_idx;   // [K]
  int64_t k() const { return static_cast<int64_t>(batch_idx.size()); }
};

// Transposes an NCHW tensor to NHWC.
inline std::vector<float> ToNhwc(const std::vector<float>& nchw, int64_t n, int64_t c, int64_t h, int64_t w) {
  std::vector<float> out(nchw.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) out[((b * h + y) * w + x) * c + ch] = nchw[((b * c + ch) * h + y) * w + x];
  return out;
}

// Adds a RoI to both formats.
inline void AddRoi(Problem* p, int64_t batch, float x1, float y1, float x2, float y2) {
  p->rois5.insert(p->rois5.end(), {static_cast<float>(batch), x1, y1, x2, y2});
  p->rois4.insert(p->rois4.end(), {x1, y1, x2, y2});
  p->batch_idx.push_back(batch);
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

// Inputs describing `p` with its map at `map` (p.input, or a channels-last copy of it).
inline Inputs InputsOf(const Problem& p, const float* map, bool use_batch_indices = false) {
  Inputs in;
  in.input = map;
  in.batch = p.n;
  in.channels = p.c;
  in.height = p.h;
  in.width = p.w;
  in.rois = use_batch_indices ? p.rois4.data() : p.rois5.data();
  in.batch_indices = use_batch_indices ? p.batch_idx.data() : nullptr;
  in.num_rois = p.k();
  return in;
}

// Selects `target` for `params` and runs it; fails the test on any error.
inline std::vector<float> RunOrFail(const std::string& target, const Params& params, const Problem& p,
                                    bool use_batch_indices = false, int threads = 1,
                                    std::string* kernel_name = nullptr) {
  SelectResult sel = Select(target, params);
  EXPECT_TRUE(sel.ok()) << target << ": " << sel.status().message();
  std::vector<float> out(static_cast<size_t>(p.k() * p.c * params.pooled_height * params.pooled_width), -777.0f);
  if (!sel.ok()) return out;
  if (kernel_name) *kernel_name = sel->name();
  const std::vector<float> nhwc = params.layout == Layout::kNHWC ? ToNhwc(p.input, p.n, p.c, p.h, p.w)
                                                                   : std::vector<float>();
  const Inputs in =
      InputsOf(p, params.layout == Layout::kNHWC ? nhwc.data() : p.input.data(), use_batch_indices);
  const Status s = sel->Run(in, out.data(), threads);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

}  // namespace testing
}  // namespace roialign

#endif  // ROIALIGN_TESTS_TEST_UTIL_H_
