// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// How an ONNX RoiAlign node without coordinate_transformation_mode learns the model's opset.
//
// The attribute's default changed in opset 16 (output_half_pixel before, half_pixel since), and OpenVINO's ONNX
// frontend gives a conversion extension the node's attributes and inputs but not the opset. It does report, through
// a frontend TelemetryExtension, an "op_count" event per op type labelled "onnx_<OpType>-<opset>" once all nodes of
// a graph are converted, still inside read_model and on its thread. So the converter makes such a node with
// RoiAlign::kOnnxOpsetDefault and queues it here, and the "onnx_RoiAlign-N" event resolves the queue. A node
// that is never resolved refuses to run, with a message, rather than guess.
#ifndef ROIALIGN_ENGINES_OPENVINO_ONNX_OPSET_H_
#define ROIALIGN_ENGINES_OPENVINO_ONNX_OPSET_H_

#include <memory>

#include "roialign_op.h"
#include "openvino/frontend/extension/telemetry.hpp"

namespace roialign_openvino {

// Queues a node made with kOnnxOpsetDefault, on this thread, until the telemetry event resolves it.
void QueueForOnnxOpset(const std::shared_ptr<RoiAlign>& node);

// The telemetry extension that resolves the queue.
std::shared_ptr<ov::frontend::TelemetryExtension> MakeOnnxOpsetListener();

}  // namespace roialign_openvino

#endif  // ROIALIGN_ENGINES_OPENVINO_ONNX_OPSET_H_
