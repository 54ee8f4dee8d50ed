// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Runs on the caller's thread pool (roialign_run_with_threadpool and the C++ overloads): bit-identical to the
// OpenMP path at any pool size, bad pools refused before anything runs, validation before the first task, the
// layout transforms, and registered implementations that receive the pool.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "examples/worker_pool.h"
#include "roialign/roialign.h"
#include "tests/c_calls.h"
#include "tests/test_util.h"

// OpenMP threads for the reference runs; TSan builds ask for 1 (libgomp is not TSan-instrumented).
#ifndef ROIALIGN_CONCURRENCY_INNER_THREADS
#define ROIALIGN_CONCURRENCY_INNER_THREADS 2
#endif

namespace roialign {
namespace testing {
namespace {

// A pool that runs every task on the calling thread, in order, and counts its calls. `threads` is what it
// claims: roialign splits work for that many, which a serial pool must still run correctly.
struct SerialPool {
  std::atomic<int> calls{0};
  static void ParallelFor(void* self, int64_t count, roialign_task_fn task, void* context) {
    static_cast<SerialPool*>(self)->calls++;
    for (int64_t i = 0; i < count; ++i) task(context, i);
  }
  roialign_threadpool Interface(int32_t threads) {
    return {sizeof(roialign_threadpool), 0, &ParallelFor, this, threads, 0};
  }
};

// Owns a worker_pool (examples/worker_pool.c).
struct Workers {
  explicit Workers(int n) : pool(worker_pool_create(n)) {}
  ~Workers() { worker_pool_destroy(pool); }
  roialign_threadpool Interface() const { return worker_pool_interface(pool); }
  worker_pool* pool;
};

std::vector<float> RunOnPool(const KernelHandle& kernel, const Problem& p, const roialign_threadpool& pool) {
  std::vector<float> out(static_cast<size_t>(p.k() * p.c * kernel.params().pooled_height *
                                             kernel.params().pooled_width), -777.0f);
  const std::vector<float> nhwc = ToNhwc(p.input, p.n, p.c, p.h, p.w);
  const Inputs in = InputsOf(p, kernel.params().layout == Layout::kNHWC ? nhwc.data() : p.input.data());
  const Status s = kernel.Run(in, out.data(), pool);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

// Every layout, the planar kernel's tile and band-transform paths (few and many RoIs on a map larger than a
// band) and the reference: the pool gives the OpenMP path's bits at every pool size.
TEST(ThreadPool, BitIdenticalToOpenMpAtAnyPoolSize) {
  std::mt19937 rng(3);
  Problem few = RandomProblem(&rng, 2, 40, 24, 31, 12, 0.5f);
  Problem many = RandomProblem(&rng, 1, 64, 160, 256, 40, 1.0f);
  AddRoi(&many, 0, 0.0f, 0.0f, 255.0f, 159.0f);
  for (const std::string target : {"host", "generic"}) {
    for (Layout layout : {Layout::kNCHW, Layout::kNHWC}) {
      for (const Problem* p : {&few, &many}) {
        // The large map is for the planar band transform; the scalar reference gains nothing from it but time
        // (minutes under qemu).
        if (target == "generic" && p == &many) continue;
        Params params;
        params.layout = layout;
        params.sampling_ratio = 0;
        params.pool_mode = PoolMode::kAvg;
        Selection kernel = SelectKernel(target, params);
        ASSERT_TRUE(kernel.ok()) << kernel.status().message();
        const std::vector<float> expected = RunOrFail(target, params, *p, false, ROIALIGN_CONCURRENCY_INNER_THREADS);
        for (int workers : {1, 2, 3}) {
          Workers pool(workers);
          EXPECT_EQ(RunOnPool(*kernel, *p, pool.Interface()), expected) << kernel->name() << " " << workers;
        }
        for (int32_t claimed : {1, 4}) {
          SerialPool serial;
          EXPECT_EQ(RunOnPool(*kernel, *p, serial.Interface(claimed)), expected) << kernel->name() << " serial";
          EXPECT_GE(serial.calls.load(), 1) << "every parallel step goes through the pool";
        }
      }
    }
  }
}

// The backward on worker pools of 1 to 3 threads (under TSan: its tasks write disjoint parts of dX and each uses
// its own thread's scratch) gives the bytes of one OpenMP call, in every layout and pool mode.
TEST(ThreadPool, BackwardOnWorkerPoolsGivesTheSameBits) {
  std::mt19937 rng(8);
  const Problem p = RandomProblem(&rng, 2, 37, 30, 21, 24, 0.5f);
  for (Layout layout : internal::AllValues<Layout>()) {
    for (PoolMode mode : internal::AllValues<PoolMode>()) {
      roialign_params params;
      roialign_params_init(&params);
      params.layout = static_cast<roialign_layout>(layout);
      params.pool_mode = static_cast<roialign_pool_mode>(mode);
      params.spatial_scale = 0.5f;
      params.flags = ROIALIGN_PARAMS_BACKWARD;
      roialign_kernel* kernel = nullptr;
      ASSERT_EQ(roialign_select("host", &params, &kernel), ROIALIGN_OK) << roialign_last_error();
      const std::vector<float> map = ToLayout(p.input, layout, p.n, p.c, p.h, p.w);
      std::vector<float> dy(OutputSize(layout, p.k(), p.c, 7, 7));
      for (size_t i = 0; i < dy.size(); ++i) dy[i] = static_cast<float>(i % 13) * 0.125f - 0.75f;
      roialign_inputs in;
      roialign_inputs_init(&in);
      in.batch = p.n;
      in.channels = p.c;
      in.maps[0] = {map.data(), p.h, p.w, {0, 0, 0, 0}};
      in.rois = p.rois5.data();
      in.num_rois = p.k();
      roialign_options options;
      roialign_options_init(&options);
      options.num_threads = ROIALIGN_CONCURRENCY_INNER_THREADS;
      std::vector<float> expected(map.size(), -777.0f);
      ASSERT_EQ(roialign_run_backward(kernel, &in, dy.data(), expected.data(), &options), ROIALIGN_OK);
      for (int workers : {1, 2, 3}) {
        Workers pool(workers);
        const roialign_threadpool c_pool = pool.Interface();
        roialign_options_init(&options);
        options.threadpool = &c_pool;
        std::vector<float> dx(map.size(), -777.0f);
        ASSERT_EQ(roialign_run_backward(kernel, &in, dy.data(), dx.data(), &options), ROIALIGN_OK);
        EXPECT_EQ(std::memcmp(dx.data(), expected.data(), dx.size() * sizeof(float)), 0)
            << roialign_kernel_name(kernel) << " " << ToString(mode) << ", " << workers << " workers";
      }
      roialign_kernel_free(kernel);
    }
  }
}

TEST(ThreadPool, BadPoolsAreRefusedBeforeAnythingRuns) {
  std::mt19937 rng(4);
  const Problem p = RandomProblem(&rng, 1, 8, 10, 10, 5, 1.0f);
  Params params;
  Selection kernel = SelectKernel("host", params);
  ASSERT_TRUE(kernel.ok());
  std::vector<float> out(static_cast<size_t>(p.k() * p.c * 49), 5.0f);
  const Inputs in = InputsOf(p, p.input.data());
  SerialPool serial;
  struct Case {
    roialign_threadpool pool;
    const char* message;
  };
  for (const Case& c : {Case{{sizeof(roialign_threadpool), 0, nullptr, &serial, 2, 0}, "no parallel_for"}, Case{serial.Interface(0), "num_threads"},
                        Case{serial.Interface(-3), "num_threads"}}) {
    const Status s = kernel->Run(in, out.data(), c.pool);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s.message();
  }
  EXPECT_EQ(serial.calls.load(), 0);
  for (float v : out) ASSERT_EQ(v, 5.0f);

  // The C API also refuses a pool whose struct is not initialized, and validates the data before the first task.
  roialign_params cp = roialign_c::Params(7, 7, 1.0f, 0, ROIALIGN_COORD_LEGACY, ROIALIGN_POOL_AVG,
                                          ROIALIGN_LAYOUT_NCHW, ROIALIGN_DTYPE_F32);
  roialign_kernel* ck = nullptr;
  ASSERT_EQ(roialign_select("host", &cp, &ck), ROIALIGN_OK);
  const roialign_threadpool uninitialized = {0, 0, serial.Interface(2).parallel_for, &serial, 2, 0};
  EXPECT_EQ(roialign_c::RunOnPool(ck, p.input.data(), 1, p.c, p.h, p.w, p.rois5.data(), nullptr, p.k(), out.data(),
                                  &uninitialized),
            ROIALIGN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(roialign_last_error()).find("threadpool->struct_size is 0"), std::string::npos);
  std::vector<float> bad_rois = p.rois5;
  bad_rois[0] = 7.0f;  // batch index out of range
  const roialign_threadpool pool = serial.Interface(2);
  EXPECT_EQ(roialign_c::RunOnPool(ck, p.input.data(), 1, p.c, p.h, p.w, bad_rois.data(), nullptr, p.k(),
                                  out.data(), &pool),
            ROIALIGN_INVALID_ARGUMENT);
  EXPECT_EQ(serial.calls.load(), 0) << "a task ran before validation finished";
  for (float v : out) ASSERT_EQ(v, 5.0f);
  roialign_kernel_free(ck);
}

TEST(ThreadPool, LayoutTransformsOnThePool) {
  const int64_t n = 2, c = 67, h = 9, w = 70;
  std::vector<float> nchw(static_cast<size_t>(n * c * h * w));
  for (size_t i = 0; i < nchw.size(); ++i) nchw[i] = static_cast<float>(i % 1000) * 0.5f;
  std::vector<float> expected(nchw.size()), got(nchw.size(), 0.0f), back(nchw.size(), 0.0f);
  ASSERT_TRUE(NchwToNhwc(nchw.data(), n, c, h, w, expected.data(), ROIALIGN_CONCURRENCY_INNER_THREADS).ok());
  Workers workers(3);
  const roialign_threadpool pool = workers.Interface();
  const roialign_options on_pool = roialign_c::OnPool(&pool);
  ASSERT_EQ(roialign_nchw_to_nhwc(ROIALIGN_DTYPE_F32, nchw.data(), n, c, h, w, got.data(), &on_pool), ROIALIGN_OK);
  EXPECT_EQ(got, expected);
  ASSERT_TRUE(NhwcToNchw(got.data(), n, c, h, w, back.data(), CppPool(pool)).ok());
  EXPECT_EQ(back, nchw);
  const roialign_threadpool no_fn = {sizeof(roialign_threadpool), 0, nullptr, nullptr, 2, 0};
  const roialign_options on_no_fn = roialign_c::OnPool(&no_fn);
  EXPECT_EQ(roialign_nhwc_to_nchw(ROIALIGN_DTYPE_F32, got.data(), n, c, h, w, back.data(), &on_no_fn),
            ROIALIGN_INVALID_ARGUMENT);
  SerialPool serial;
  EXPECT_EQ(NchwToNhwc(nchw.data(), n, c, h, w, got.data(), CppPool(serial.Interface(0))).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(serial.calls.load(), 0);
}

// A registered implementation receives the caller's pool (and can run on it), or NULL from roialign_run.
TEST(ThreadPool, RegisteredImplementationsReceiveThePool) {
  struct Seen {
    bool pool = false;
    roialign_threadpool copy = {};  // the pool the implementation received, a copy valid during the call
    int32_t num_threads = -100;
  };
  static Seen seen;
  roialign_implementation impl;
  roialign_implementation_init(&impl);
  impl.target = "pool-test-device";
  impl.name = "roi_align_nchw.pool-test";
  impl.layouts = 1u << ROIALIGN_LAYOUT_NCHW;
  impl.dtypes = 1u << ROIALIGN_DTYPE_F32;
  impl.pool_modes = 1u << ROIALIGN_POOL_AVG;
  impl.coordinate_modes = 1u << ROIALIGN_COORD_LEGACY;
  impl.fn = [](const roialign_problem* p, void*) -> roialign_status {
    seen.pool = p->threadpool != nullptr;
    if (p->threadpool != nullptr) seen.copy = *p->threadpool;
    seen.num_threads = p->num_threads;
    if (p->threadpool != nullptr) {  // a custom target may run its own work on the engine's threads
      p->threadpool->parallel_for(p->threadpool->pool_context, 5, [](void*, int64_t) {}, nullptr);
    }
    return ROIALIGN_OK;
  };
  ASSERT_EQ(roialign_register(&impl), ROIALIGN_OK) << roialign_last_error();
  roialign_params cp = roialign_c::Params(2, 2, 1.0f, 0, ROIALIGN_COORD_LEGACY, ROIALIGN_POOL_AVG,
                                          ROIALIGN_LAYOUT_NCHW, ROIALIGN_DTYPE_F32);
  roialign_kernel* k = nullptr;
  ASSERT_EQ(roialign_select("pool-test-device", &cp, &k), ROIALIGN_OK);
  float map[4] = {1, 2, 3, 4}, rois[5] = {0, 0, 0, 1, 1}, out[4];
  SerialPool serial;
  const roialign_threadpool pool = serial.Interface(3);
  ASSERT_EQ(roialign_c::RunOnPool(k, map, 1, 1, 2, 2, rois, nullptr, 1, out, &pool), ROIALIGN_OK);
  EXPECT_TRUE(seen.pool);
  EXPECT_EQ(seen.copy.parallel_for, pool.parallel_for);
  EXPECT_EQ(seen.copy.pool_context, pool.pool_context);
  EXPECT_EQ(seen.num_threads, 3);
  EXPECT_EQ(serial.calls.load(), 1);
  ASSERT_EQ(roialign_c::Run(k, map, 1, 1, 2, 2, rois, nullptr, 1, out, 2), ROIALIGN_OK);
  EXPECT_FALSE(seen.pool);
  EXPECT_EQ(seen.num_threads, 2);
  roialign_kernel_free(k);
}

}  // namespace
}  // namespace testing
}  // namespace roialign
