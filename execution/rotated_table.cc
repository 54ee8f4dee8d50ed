// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "execution/rotated_table.h"

#include <algorithm>
#include <climits>

#include "kernels/roi_geometry.h"

namespace roialign {
namespace internal {
namespace {

constexpr int64_t kMaxRotatedTableBytes = 64 * 1024 * 1024;

int64_t ExtentsPerRoi(const Problem& problem) {
  return 1 + problem.params.pooled_height * (1 + problem.params.pooled_width);
}
template <typename R>
int64_t TableHead(const Problem& problem) {  // the offsets' and extents' bytes, rounded up to whole records
  const int64_t record = sizeof(RotatedSampleOf<R>);
  const int64_t head = problem.num_rois * (sizeof(int64_t) + ExtentsPerRoi(problem) * sizeof(RowExtent));
  return (head + record - 1) / record * record;
}
template <typename R>
double RotatedTableBytesOf(const Problem& problem) {
  const double bins = static_cast<double>(problem.params.pooled_height * problem.params.pooled_width);
  double samples = 0;
  for (int64_t i = 0; i < RunCount(problem); ++i) {
    const RoiAxesOf<R>& a = AxesOf<R>(problem, RunRoi(problem, i));
    samples += bins * static_cast<double>(a.gy.grid) * static_cast<double>(a.gx.grid);
  }
  return static_cast<double>(TableHead<R>(problem)) + samples * sizeof(RotatedSampleOf<R>);
}

template <typename R>
void FillRotatedTableOf(int threads, const Threading& threading, unsigned char* memory, Problem* problem) {
  int64_t* const first = reinterpret_cast<int64_t*>(memory);
  RowExtent* const extents = reinterpret_cast<RowExtent*>(first + problem->num_rois);
  const int64_t per_roi = ExtentsPerRoi(*problem);
  auto* const taps = reinterpret_cast<RotatedSampleOf<R>*>(memory + TableHead<R>(*problem));
  const int64_t PH = problem->params.pooled_height, PW = problem->params.pooled_width;
  const int64_t runs = RunCount(*problem);
  for (int64_t i = 0, at = 0; i < runs; ++i) {
    const int64_t k = RunRoi(*problem, i);
    const RoiAxesOf<R>& a = AxesOf<R>(*problem, k);
    first[k] = at;
    at += PH * PW * a.gy.grid * a.gx.grid;
  }
  constexpr int64_t kRoisPerTask = 16;
  const Problem& p = *problem;
  ParallelFor((runs + kRoisPerTask - 1) / kRoisPerTask, threads, threading, [&](int64_t task, int) {
    for (int64_t i = task * kRoisPerTask; i < std::min(runs, (task + 1) * kRoisPerTask); ++i) {
      const int64_t k = RunRoi(p, i);
      FillRotatedSampleTaps(AxesOf<R>(p, k), PH, PW, p.height, p.width, taps + first[k], extents + k * per_roi);
    }
  });
  problem->rotated_first = first;
  problem->rotated_taps = taps;
  problem->rotated_extents = extents;
}

}  // namespace

int64_t RotatedTableBytes(const Problem& problem) {
  if (problem.height > INT32_MAX || problem.width > INT32_MAX) return 0;
  const double bytes = problem.params.dtype == DType::kF64 ? RotatedTableBytesOf<double>(problem)
                                                           : RotatedTableBytesOf<float>(problem);
  return bytes <= static_cast<double>(kMaxRotatedTableBytes) ? static_cast<int64_t>(bytes) : 0;
}

void FillRotatedTable(int threads, const Threading& threading, unsigned char* memory, Problem* problem) noexcept {
  if (problem->params.dtype == DType::kF64) {
    FillRotatedTableOf<double>(threads, threading, memory, problem);
  } else {
    FillRotatedTableOf<float>(threads, threading, memory, problem);
  }
}

}  // namespace internal
}  // namespace roialign
