// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "onnx_roi_align.h"

#include <cstdint>
#include <memory>
#include <string>

#include "onnx_opset.h"
#include "roialign_op.h"
#include "openvino/core/except.hpp"
#include "openvino/op/convert.hpp"

namespace roialign_openvino {

ov::OutputVector ConvertOnnxRoiAlign(const ov::frontend::NodeContext& node) {
  const std::string& name = node.get_name();
  OPENVINO_ASSERT(node.get_input_size() == 3, "RoiAlign '", name, "' has ", node.get_input_size(),
                  " inputs; ONNX RoiAlign takes X, rois and batch_indices");
  const ov::Output<ov::Node> map = node.get_input(0);
  ov::Output<ov::Node> boxes = node.get_input(1);
  const ov::Output<ov::Node> batch_indices = node.get_input(2);

  // ONNX "max" is the max over each sample's 4 weighted taps: our MAX_ONNX, not MAX (docs/semantics.md).
  const auto mode = node.get_attribute<std::string>("mode", "avg");
  std::string pool;
  if (mode == "avg") {
    pool = "AVG";
  } else if (mode == "max") {
    pool = "MAX_ONNX";
  } else {
    OPENVINO_THROW("RoiAlign '", name, "': mode '", mode, "' is not an ONNX RoiAlign mode (avg, max)");
  }
  std::string coord;
  if (node.has_attribute("coordinate_transformation_mode")) {  // opset 16 and later
    const auto ctm = node.get_attribute<std::string>("coordinate_transformation_mode");
    if (ctm == "half_pixel") {
      coord = "HALF_PIXEL";
    } else if (ctm == "output_half_pixel") {
      coord = "LEGACY";
    } else {
      OPENVINO_THROW("RoiAlign '", name, "': coordinate_transformation_mode '", ctm,
                     "' is not an ONNX RoiAlign mode (half_pixel, output_half_pixel)");
    }
  } else {  // output_half_pixel up to opset 15, half_pixel from 16: resolved once the opset is known
    coord = RoiAlign::kOnnxOpsetDefault;
  }
  const auto sampling_ratio = node.get_attribute<int64_t>("sampling_ratio", 0);  // ONNX: 0 is adaptive
  OPENVINO_ASSERT(sampling_ratio >= 0, "RoiAlign '", name, "': sampling_ratio ", sampling_ratio,
                  " is negative; ONNX defines 0 (adaptive) and positive grids");
  const auto output_height = node.get_attribute<int64_t>("output_height", 1);
  const auto output_width = node.get_attribute<int64_t>("output_width", 1);
  const auto spatial_scale = node.get_attribute<float>("spatial_scale", 1.0f);

  // roialign takes f32 boxes whatever the map's type (an f16 box widens exactly).
  if (boxes.get_element_type() != ov::element::f32) {
    boxes = std::make_shared<ov::op::v0::Convert>(boxes, ov::element::f32)->output(0);
  }
  // Constructing the node validates it and selects the kernel: a refusal throws here, at conversion.
  auto op = std::make_shared<RoiAlign>(map, boxes, batch_indices, output_height, output_width, spatial_scale,
                                       sampling_ratio, coord, pool, name);
  if (coord == RoiAlign::kOnnxOpsetDefault) QueueForOnnxOpset(op);
  return {op->output(0)};
}

}  // namespace roialign_openvino
