// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// roialign's caller-pool interface over TBB, the threading runtime of OpenVINO's CPU plugin (and of the wheel).
#ifndef ROIALIGN_ENGINES_OPENVINO_TBB_THREADPOOL_H_
#define ROIALIGN_ENGINES_OPENVINO_TBB_THREADPOOL_H_

#include "roialign/roialign.h"

namespace roialign_openvino {

// A pool that runs roialign's tasks with tbb::parallel_for in the calling thread's task arena. Called from an
// OpenVINO inference, that is the arena of the CPU plugin's stream, so roialign runs on the plugin's own threads
// and as many of them as the plugin gave the stream (INFERENCE_NUM_THREADS).
roialign_threadpool CurrentArenaThreadpool();

}  // namespace roialign_openvino

#endif  // ROIALIGN_ENGINES_OPENVINO_TBB_THREADPOOL_H_
