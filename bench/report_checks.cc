// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "bench/report_checks.h"

#include <cstdio>
#include <cstdlib>

#include "bench/workloads.h"

namespace roialign {
namespace bench {

void RunOrExit(const std::function<Status()>& run) {
  const Status s = run();
  if (!s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    std::exit(1);
  }
}

void CheckOrExit(const std::string& what, const std::function<Status()>& path, const float* out, Layout layout,
                 const float* ref, int64_t num_rois, int64_t channels, int64_t pooled,
                 Layout ref_layout, double tolerance) {
  RunOrExit(path);
  const double diff = MaxAbsDiff(out, layout, ref, ref_layout, num_rois, channels, pooled, pooled);
  if (!(diff <= tolerance)) {
    std::fprintf(stderr, "error: %s differs from the reference by %g\n", what.c_str(), diff);
    std::exit(1);
  }
}

void CheckTransformOrExit(const std::string& workload, const std::function<Status()>& path,
                          const ConversionScratch& scratch, Layout to, const MapShape& shape,
                          const std::vector<const void*>& nchw) {
  RunOrExit(path);
  const double diff = MaxAbsDiffOfMaps(scratch, to, shape, nchw);
  if (diff != 0) {
    std::fprintf(stderr, "error: %s NCHW->%s transform differs from the map by %g\n", workload.c_str(), ToString(to),
                 diff);
    std::exit(1);
  }
}

void CheckBackwardOrExit(const std::string& what, const std::function<Status()>& path, Layout layout,
                         const std::vector<const float*>& dx, const std::vector<const float*>& ref, int64_t channels,
                         const std::vector<int64_t>& heights, const std::vector<int64_t>& widths) {
  RunOrExit(path);
  for (size_t l = 0; l < dx.size(); ++l) {
    const double diff = MaxAbsDiff(dx[l], layout, ref[l], Layout::kNCHW, 1, channels, heights[l], widths[l]);
    if (diff != 0) {
      std::fprintf(stderr, "error: %s differs from the reference's by %g (level %zu)\n", what.c_str(), diff, l);
      std::exit(1);
    }
  }
}

}  // namespace bench
}  // namespace roialign
