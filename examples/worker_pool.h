/* Copyright 2026 The roialign Authors
 * SPDX-License-Identifier: Apache-2.0 */
/* An engine-style thread pool for roialign (roialign_options.threadpool): a fixed set of pthreads that the engine owns
 * and reuses across calls. The caller of parallel_for waits while the workers run the tasks. C99 + pthreads. */
#ifndef ROIALIGN_EXAMPLES_WORKER_POOL_H_
#define ROIALIGN_EXAMPLES_WORKER_POOL_H_

#include <stdint.h>

#include "roialign/roialign.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct worker_pool worker_pool;

/* Starts `workers` >= 1 threads; NULL on failure. */
worker_pool* worker_pool_create(int workers);
/* Stops and joins the workers; NULL is allowed. No parallel_for may be running. */
void worker_pool_destroy(worker_pool* pool);
/* The pool as roialign takes it (num_threads = the worker count). Valid while the pool lives. */
roialign_threadpool worker_pool_interface(worker_pool* pool);
/* How many tasks worker `worker` has run since the pool started. */
int64_t worker_pool_tasks_run(const worker_pool* pool, int worker);

#ifdef __cplusplus
}
#endif

#endif /* ROIALIGN_EXAMPLES_WORKER_POOL_H_ */
