// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "rotated.h"

#include <cstdint>
#include <memory>
#include <string>

#include "openvino/core/except.hpp"
#include "openvino/core/graph_util.hpp"
#include "openvino/core/model.hpp"
#include "openvino/core/rt_info.hpp"
#include "openvino/op/convert.hpp"
#include "openvino/op/roi_align_rotated.hpp"
#include "openvino/pass/manager.hpp"
#include "openvino/pass/pattern/op/wrap_type.hpp"
#include "roialign_rotated_op.h"

namespace roialign_openvino {

ov::OutputVector ConvertMmcvRoiAlignRotated(const ov::frontend::NodeContext& node) {
  const std::string& name = node.get_name();
  OPENVINO_ASSERT(node.get_input_size() == 2, "MMCVRoIAlignRotated '", name, "' has ", node.get_input_size(),
                  " inputs; mmcv's op takes features and rois [K,6]");
  for (const char* required : {"output_height", "output_width"}) {
    OPENVINO_ASSERT(node.has_attribute(required), "MMCVRoIAlignRotated '", name, "' has no ", required,
                    " (mmcv's exporter writes both)");
  }
  const auto output_height = node.get_attribute<int64_t>("output_height");
  const auto output_width = node.get_attribute<int64_t>("output_width");
  // mmcv's RoIAlignRotated defaults for what an exporter could leave out.
  const auto spatial_scale = node.get_attribute<float>("spatial_scale", 1.0f);
  const auto sampling_ratio = node.get_attribute<int64_t>("sampling_ratio", 0);
  const auto aligned = node.get_attribute<int64_t>("aligned", 1);
  const auto clockwise = node.get_attribute<int64_t>("clockwise", 0);
  OPENVINO_ASSERT((aligned == 0 || aligned == 1) && (clockwise == 0 || clockwise == 1), "MMCVRoIAlignRotated '", name,
                  "': aligned (", aligned, ") and clockwise (", clockwise, ") must be 0 or 1");
  ov::Output<ov::Node> rois = node.get_input(1);
  if (rois.get_element_type() != ov::element::f32) {  // roialign takes f32 RoIs whatever the map's type
    rois = std::make_shared<ov::op::v0::Convert>(rois, ov::element::f32)->output(0);
  }
  // mmcv: sampling_ratio > 0 is a fixed grid, anything else adaptive, as roialign's.
  auto op = std::make_shared<RoiAlignRotated>(ov::OutputVector{node.get_input(0), rois}, output_height, output_width,
                                              spatial_scale, sampling_ratio, aligned ? "HALF_PIXEL" : "LEGACY",
                                              "RADIANS", clockwise ? "CLOCKWISE" : "COUNTER_CLOCKWISE", "AVG", name);
  return {op->output(0)};
}

ReplaceRoiAlignRotated::ReplaceRoiAlignRotated() {
  const auto pattern = ov::pass::pattern::wrap_type<ov::op::v15::ROIAlignRotated>();
  const ov::matcher_pass_callback callback = [](ov::pass::pattern::Matcher& m) {
    const auto op = std::dynamic_pointer_cast<ov::op::v15::ROIAlignRotated>(m.get_match_root());
    if (!op || op->get_input_element_type(1) != ov::element::f32) return false;
    std::shared_ptr<RoiAlignRotated> ours;
    try {  // ROIAlignRotated-15: radians, always aligned, average pooling, [K,5] RoIs and batch indices
      ours = std::make_shared<RoiAlignRotated>(op->input_values(), op->get_pooled_h(), op->get_pooled_w(),
                                               op->get_spatial_scale(), op->get_sampling_ratio(), "HALF_PIXEL",
                                               "RADIANS", op->get_clockwise_mode() ? "CLOCKWISE" : "COUNTER_CLOCKWISE",
                                               "AVG", op->get_friendly_name());
    } catch (const ov::Exception&) {
      return false;  // roialign refuses it (e.g. an f64 map): OpenVINO's own op stays
    }
    ov::copy_runtime_info(op, ours);
    ov::replace_node(op, ours);
    return true;
  };
  register_matcher(std::make_shared<ov::pass::pattern::Matcher>(pattern, "ReplaceRoiAlignRotated"), callback);
}

int ReplaceRoiAlignRotatedIn(const std::shared_ptr<ov::Model>& model) {
  const auto count = [&model] {
    int n = 0;
    for (const auto& op : model->get_ops()) n += ov::is_type<RoiAlignRotated>(op) ? 1 : 0;
    return n;
  };
  const int before = count();
  ov::pass::Manager manager;
  manager.register_pass<ReplaceRoiAlignRotated>();
  manager.run_passes(model);
  return count() - before;
}

}  // namespace roialign_openvino

extern "C" int roialign_openvino_replace_roi_align_rotated(void* model) {
  if (model == nullptr) return -1;
  const std::shared_ptr<ov::Model>& m = *static_cast<std::shared_ptr<ov::Model>*>(model);
  return m ? roialign_openvino::ReplaceRoiAlignRotatedIn(m) : -1;
}
