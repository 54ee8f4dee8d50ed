// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Its own process, which never opens an OpenMP region: with the caller's pool, roialign runs every parallel
// step on that pool's workers and starts no thread of its own, so the process holds exactly the caller's
// threads and the pools' workers during and after each call.
#include <gtest/gtest.h>

#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "examples/worker_pool.h"
#include "tests/test_util.h"

namespace roialign {
namespace testing {
namespace {

// Threads of this process, from /proc/self/status.
int ProcessThreads() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  ADD_FAILURE() << "no Threads: line in /proc/self/status";
  return -1;
}

// A worker_pool whose tasks also record the process's thread count while they run.
struct ObservedPool {
  explicit ObservedPool(int n) : workers(n), pool(worker_pool_create(n)) {}
  ~ObservedPool() { worker_pool_destroy(pool); }
  struct Call {
    roialign_task_fn task;
    void* context;
    ObservedPool* self;
  };
  static void Observe(void* call, int64_t i) {
    Call& c = *static_cast<Call*>(call);
    const int threads = ProcessThreads();
    {
      std::lock_guard<std::mutex> lock(c.self->mutex);
      c.self->seen_threads.insert(threads);
    }
    c.task(c.context, i);
  }
  static void ParallelFor(void* self, int64_t count, roialign_task_fn task, void* context) {
    ObservedPool& p = *static_cast<ObservedPool*>(self);
    Call call = {task, context, &p};
    const roialign_threadpool inner = worker_pool_interface(p.pool);
    inner.parallel_for(inner.pool_context, count, &Observe, &call);
  }
  roialign_threadpool Interface() { return {sizeof(roialign_threadpool), 0, &ParallelFor, this, workers, 0}; }
  int WorkersThatRan() const {
    int n = 0;
    for (int w = 0; w < workers; ++w) n += worker_pool_tasks_run(pool, w) > 0 ? 1 : 0;
    return n;
  }
  int workers;
  worker_pool* pool;
  std::mutex mutex;
  std::set<int> seen_threads;
};

// A call large enough that every worker wakes up before the work runs out.
Problem LargeProblem() {
  std::mt19937 rng(8);
  return RandomProblem(&rng, 1, 256, 64, 80, 600, 1.0f);
}

std::vector<float> RunOnPool(const KernelHandle& kernel, const Problem& p, const roialign_threadpool& pool) {
  std::vector<float> out(static_cast<size_t>(p.k() * p.c * 49), 0.0f);
  const Status s = kernel.Run(InputsOf(p, p.input.data()), out.data(), pool);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

TEST(ThreadPoolThreads, OnlyTheCallerAndThePoolsWorkers) {
  const Problem p = LargeProblem();
  Selection kernel = SelectKernel("host", Params());
  ASSERT_TRUE(kernel.ok());
  const int before = ProcessThreads();  // the caller (and, under qemu-user, the emulator's own thread)
  ObservedPool pool(3);
  // The caller, the pool's workers, and whatever runtime threads their creation starts (TSan starts one with
  // the first pthread_create): from here on, the calls must add nothing.
  const int with_pool = ProcessThreads();
  ASSERT_GE(with_pool, before + 3);
  for (int rep = 0; rep < 3; ++rep) RunOnPool(*kernel, p, pool.Interface());
  EXPECT_EQ(pool.seen_threads, std::set<int>{with_pool}) << "threads while tasks ran";
  EXPECT_EQ(ProcessThreads(), with_pool) << "threads after the calls";
  EXPECT_GT(pool.WorkersThatRan(), 1) << "tasks ran on one worker only";
}

// Two engine threads, each with its own pool, run the same kernel at once; both get the serial result.
TEST(ThreadPoolThreads, TwoEngineThreadsEachWithItsOwnPool) {
  const Problem p = LargeProblem();
  Params params;
  params.sampling_ratio = 0;
  Selection kernel = SelectKernel("host", params);
  ASSERT_TRUE(kernel.ok());
  ObservedPool serial(1);
  const std::vector<float> expected = RunOnPool(*kernel, p, serial.Interface());
  const int before = ProcessThreads();
  ObservedPool a(2), b(3);
  std::vector<float> got_a, got_b;
  std::thread engine_a([&] {
    for (int rep = 0; rep < 3; ++rep) got_a = RunOnPool(*kernel, p, a.Interface());
  });
  std::thread engine_b([&] {
    for (int rep = 0; rep < 3; ++rep) got_b = RunOnPool(*kernel, p, b.Interface());
  });
  engine_a.join();
  engine_b.join();
  EXPECT_EQ(got_a, expected);
  EXPECT_EQ(got_b, expected);
  // At most the caller, both engine threads and the five workers; never a thread of roialign's own.
  for (const ObservedPool* pool : {&a, &b}) {
    for (int t : pool->seen_threads) EXPECT_LE(t, before + 5 + 2);
  }
  EXPECT_EQ(ProcessThreads(), before + 5);
}

}  // namespace
}  // namespace testing
}  // namespace roialign
