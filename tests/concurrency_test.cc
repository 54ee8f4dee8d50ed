// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// One kernel object run from many threads at once, each on its own data, with results identical to a
// sequential run (a roialign_kernel is immutable after selection).
#include <gtest/gtest.h>

#include <thread>

#include "tests/test_util.h"

#ifndef ROIALIGN_CONCURRENCY_INNER_THREADS
#define ROIALIGN_CONCURRENCY_INNER_THREADS 2
#endif

namespace roialign {
namespace testing {
namespace {

TEST(Concurrency, OneKernelManyThreadsDifferentData) {
  for (Layout layout : {Layout::kNCHW, Layout::kNHWC}) {
    Params params;
    params.layout = layout;
    params.sampling_ratio = 0;
    params.coordinate_mode = CoordinateMode::kHalfPixel;
    Selection kernel = SelectKernel("host", params);
    ASSERT_TRUE(kernel.ok());
    constexpr int kThreads = 6;
    std::vector<Problem> problems;
    std::vector<std::vector<float>> expected;
    for (int t = 0; t < kThreads; ++t) {
      std::mt19937 rng(100 + t);
      problems.push_back(RandomProblem(&rng, 2, 24 + t, 12, 14, 30, 0.5f));
      expected.push_back(RunOrFail("host", params, problems.back(), t % 2 == 0, 1));
    }
    std::vector<std::vector<float>> got(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int rep = 0; rep < 20; ++rep) {
          // Inner OpenMP threads too (2 per call) unless TSan builds ask for 1 (libgomp is not instrumented).
          const Problem& p = problems[t];
          const std::vector<float> nhwc = ToNhwc(p.input, p.n, p.c, p.h, p.w);
          Inputs in;
          in.input = layout == Layout::kNHWC ? nhwc.data() : p.input.data();
          in.batch = p.n;
          in.channels = p.c;
          in.height = p.h;
          in.width = p.w;
          in.rois = t % 2 == 0 ? p.rois4.data() : p.rois5.data();
          in.batch_indices = t % 2 == 0 ? p.batch_idx.data() : nullptr;
          in.num_rois = p.k();
          got[t].assign(expected[t].size(), 0.0f);
          if (!kernel->Run(in, got[t].data(), ROIALIGN_CONCURRENCY_INNER_THREADS).ok() || got[t] != expected[t]) return;
        }
      });
    }
    for (std::thread& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(got[t], expected[t]) << ToString(layout) << " thread " << t;
  }
}

}  // namespace
}  // namespace testing
}  // namespace roialign
