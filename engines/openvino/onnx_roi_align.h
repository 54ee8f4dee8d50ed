// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// ONNX RoiAlign (opset 10 and 16) -> roialign_openvino::RoiAlign, for OpenVINO's ONNX frontend.
#ifndef ROIALIGN_ENGINES_OPENVINO_ONNX_ROI_ALIGN_H_
#define ROIALIGN_ENGINES_OPENVINO_ONNX_ROI_ALIGN_H_

#include "openvino/frontend/node_context.hpp"

namespace roialign_openvino {

// Maps every attribute of the ONNX node and selects the kernel; throws (so read_model fails with the reason) when
// the node cannot be expressed or roialign refuses it.
ov::OutputVector ConvertOnnxRoiAlign(const ov::frontend::NodeContext& node);

}  // namespace roialign_openvino

#endif  // ROIALIGN_ENGINES_OPENVINO_ONNX_ROI_ALIGN_H_
