// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Rotated RoIs on roialign inside OpenVINO (docs/openvino.md#rotated-rois): the ONNX conversion of mmcv's
// MMCVRoIAlignRotated, and the model transformation that puts roialign under OpenVINO's own ROIAlignRotated-15.
#ifndef ROIALIGN_ENGINES_OPENVINO_ROTATED_H_
#define ROIALIGN_ENGINES_OPENVINO_ROTATED_H_

#include <memory>

#include "openvino/core/model.hpp"
#include "openvino/frontend/node_context.hpp"
#include "openvino/pass/matcher_pass.hpp"

namespace roialign_openvino {

// mmcv::MMCVRoIAlignRotated (mmcv's ONNX exporter) -> RoiAlignRotated: inputs features [N,C,H,W] and rois [K,6]
// (batch, cx, cy, w, h, angle in radians); attributes output_height, output_width (read as written: mmcv's exporter
// writes output_height into both), spatial_scale, sampling_ratio (<= 0 adaptive), aligned (HALF_PIXEL, else LEGACY)
// and clockwise. Throws, so that read_model fails with the reason, when the node cannot be expressed or roialign
// refuses it.
ov::OutputVector ConvertMmcvRoiAlignRotated(const ov::frontend::NodeContext& node);

// Replaces every opset15 ROIAlignRotated (RADIANS, always aligned, clockwise_mode) with RoiAlignRotated on the same
// inputs, keeping its friendly name; a node roialign refuses (e.g. a map of another type) is left to OpenVINO.
class ReplaceRoiAlignRotated : public ov::pass::MatcherPass {
 public:
  OPENVINO_MATCHER_PASS_RTTI("roialign_openvino::ReplaceRoiAlignRotated");
  ReplaceRoiAlignRotated();
};

// Runs ReplaceRoiAlignRotated on `model`; returns the number of nodes replaced.
int ReplaceRoiAlignRotatedIn(const std::shared_ptr<ov::Model>& model);

}  // namespace roialign_openvino

// For C++ callers that load libroialign_openvino.so themselves (dlopen + dlsym; the library exports only this and
// OpenVINO's extension entry point): applies ReplaceRoiAlignRotated to *model (a std::shared_ptr<ov::Model>*) and
// returns the number of nodes replaced, or -1 if the model is null. The library must have been added to the Core
// that compiles the model (core.add_extension), which it also needs for IR files holding the op.
extern "C" __attribute__((visibility("default"))) int roialign_openvino_replace_roi_align_rotated(void* model);

#endif  // ROIALIGN_ENGINES_OPENVINO_ROTATED_H_
