/* Copyright 2026 The roialign Authors
 * SPDX-License-Identifier: Apache-2.0 */
// Selects the best NCHW, NHWC and NCHW16c kernels for this CPU and runs each on a small map, transformed from NCHW
// into the kernel's layout; prints what was chosen.
#include <cstdio>
#include <vector>

#include "roialign/roialign.hpp"

int main() {
  const int64_t C = 8, H = 16, W = 16;
  std::vector<float> map(C * H * W);
  for (size_t i = 0; i < map.size(); ++i) map[i] = static_cast<float>(i % 13);
  const float rois[] = {0, 2.0f, 2.0f, 40.0f, 30.0f};  // [K,5]: batch, x1, y1, x2, y2 (image pixels)
  const int64_t C16 = (C + 15) / 16 * 16;  // NCHW16c pads the channels to whole blocks
  for (roialign::Layout layout : {roialign::Layout::kNCHW, roialign::Layout::kNHWC, roialign::Layout::kNCHW16c}) {
    roialign::Params params;
    params.spatial_scale = 0.25f;
    params.sampling_ratio = 2;
    params.coordinate_mode = roialign::CoordinateMode::kHalfPixel;
    params.layout = layout;
    roialign::SelectResult kernel = roialign::Select("host", params);
    if (!kernel.ok()) {
      std::fprintf(stderr, "select: %s\n", kernel.status().message().c_str());
      return 1;
    }
    std::vector<float> input(C16 * H * W);
    roialign::Status s = roialign::TransformLayout(roialign::DType::kF32, roialign::Layout::kNCHW, layout, map.data(),
                                                   1, C, H, W, input.data());
    if (!s.ok()) {
      std::fprintf(stderr, "transform: %s\n", s.message().c_str());
      return 1;
    }
    roialign::Inputs in;
    in.input = input.data();
    in.batch = 1;
    in.channels = C;
    in.height = H;
    in.width = W;
    in.rois = rois;
    in.num_rois = 1;
    std::vector<float> out(C16 * 7 * 7);
    s = kernel->Run(in, out.data());
    if (!s.ok()) {
      std::fprintf(stderr, "run: %s\n", s.message().c_str());
      return 1;
    }
    std::printf("%s: kernel %s, first output %.4f\n", roialign::ToString(layout), kernel->name().c_str(), out[0]);
  }
  return 0;
}
