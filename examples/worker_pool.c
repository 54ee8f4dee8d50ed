/* Copyright 2026 The roialign Authors
 * SPDX-License-Identifier: Apache-2.0 */
/* A fixed pool of pthreads behind roialign's parallel_for contract: run task(context, i) for every i in
 * [0, count), on any worker, and return when all have finished. One loop runs at a time (parallel_for calls
 * are serialized), which is what an engine's per-operator pool does. */
#define _POSIX_C_SOURCE 200809L /* pthreads under -std=c99 */
#include "worker_pool.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct {
  worker_pool* pool;
  int index;
} worker_arg;

struct worker_pool {
  pthread_mutex_t mutex;
  pthread_cond_t work;      /* a loop was posted, or the pool is stopping */
  pthread_cond_t finished;  /* the last task of the loop ended */
  pthread_mutex_t submit;   /* one parallel_for at a time */
  int workers;
  pthread_t* threads;
  worker_arg* args;
  int64_t* tasks_run;       /* per worker */
  int stopping;
  /* The current loop. */
  roialign_task_fn task;
  void* task_context;
  int64_t count, next, done;
};

static void* worker_main(void* p) {
  worker_arg* arg = (worker_arg*)p;
  worker_pool* pool = arg->pool;
  pthread_mutex_lock(&pool->mutex);
  for (;;) {
    while (!pool->stopping && pool->next >= pool->count) pthread_cond_wait(&pool->work, &pool->mutex);
    if (pool->stopping) break;
    {
      const int64_t i = pool->next++;
      roialign_task_fn task = pool->task;
      void* context = pool->task_context;
      pthread_mutex_unlock(&pool->mutex);
      task(context, i);
      pthread_mutex_lock(&pool->mutex);
      pool->tasks_run[arg->index]++;
      if (++pool->done == pool->count) pthread_cond_signal(&pool->finished);
    }
  }
  pthread_mutex_unlock(&pool->mutex);
  return NULL;
}

static void parallel_for(void* pool_context, int64_t count, roialign_task_fn task, void* task_context) {
  worker_pool* pool = (worker_pool*)pool_context;
  if (count <= 0) return;
  pthread_mutex_lock(&pool->submit);
  pthread_mutex_lock(&pool->mutex);
  pool->task = task;
  pool->task_context = task_context;
  pool->count = count;
  pool->next = 0;
  pool->done = 0;
  pthread_cond_broadcast(&pool->work);
  while (pool->done < pool->count) pthread_cond_wait(&pool->finished, &pool->mutex);
  pool->count = 0;
  pool->next = 0;
  pthread_mutex_unlock(&pool->mutex);
  pthread_mutex_unlock(&pool->submit);
}

worker_pool* worker_pool_create(int workers) {
  worker_pool* pool;
  int i;
  if (workers < 1) return NULL;
  pool = (worker_pool*)calloc(1, sizeof(worker_pool));
  if (pool == NULL) return NULL;
  pool->threads = (pthread_t*)calloc((size_t)workers, sizeof(pthread_t));
  pool->args = (worker_arg*)calloc((size_t)workers, sizeof(worker_arg));
  pool->tasks_run = (int64_t*)calloc((size_t)workers, sizeof(int64_t));
  if (pool->threads == NULL || pool->args == NULL || pool->tasks_run == NULL) {
    free(pool->threads);
    free(pool->args);
    free(pool->tasks_run);
    free(pool);
    return NULL;
  }
  pthread_mutex_init(&pool->mutex, NULL);
  pthread_mutex_init(&pool->submit, NULL);
  pthread_cond_init(&pool->work, NULL);
  pthread_cond_init(&pool->finished, NULL);
  for (i = 0; i < workers; ++i) {
    pool->args[i].pool = pool;
    pool->args[i].index = i;
    if (pthread_create(&pool->threads[i], NULL, worker_main, &pool->args[i]) != 0) break;
    pool->workers = i + 1;
  }
  if (pool->workers != workers) {
    worker_pool_destroy(pool);
    return NULL;
  }
  return pool;
}

void worker_pool_destroy(worker_pool* pool) {
  int i;
  if (pool == NULL) return;
  pthread_mutex_lock(&pool->mutex);
  pool->stopping = 1;
  pthread_cond_broadcast(&pool->work);
  pthread_mutex_unlock(&pool->mutex);
  for (i = 0; i < pool->workers; ++i) pthread_join(pool->threads[i], NULL);
  pthread_cond_destroy(&pool->finished);
  pthread_cond_destroy(&pool->work);
  pthread_mutex_destroy(&pool->submit);
  pthread_mutex_destroy(&pool->mutex);
  free(pool->threads);
  free(pool->args);
  free(pool->tasks_run);
  free(pool);
}

roialign_threadpool worker_pool_interface(worker_pool* pool) {
  roialign_threadpool t;
  roialign_threadpool_init(&t);
  t.parallel_for = parallel_for;
  t.pool_context = pool;
  t.num_threads = pool->workers;
  return t;
}

int64_t worker_pool_tasks_run(const worker_pool* pool, int worker) {
  int64_t n;
  pthread_mutex_lock((pthread_mutex_t*)&pool->mutex);
  n = pool->tasks_run[worker];
  pthread_mutex_unlock((pthread_mutex_t*)&pool->mutex);
  return n;
}
