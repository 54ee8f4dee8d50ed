// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// libroialign_openvino.so: core.add_extension(path) registers the op and the ONNX conversion of RoiAlign.
#include "onnx_opset.h"
#include "onnx_roi_align.h"
#include "roialign_op.h"
#include "openvino/core/extension.hpp"
#include "openvino/core/op_extension.hpp"
#include "openvino/frontend/onnx/extension/conversion.hpp"

OPENVINO_CREATE_EXTENSIONS(std::vector<ov::Extension::Ptr>({
    std::make_shared<ov::OpExtension<roialign_openvino::RoiAlign>>(),
    std::make_shared<ov::frontend::onnx::ConversionExtension>("RoiAlign", roialign_openvino::ConvertOnnxRoiAlign),
    roialign_openvino::MakeOnnxOpsetListener(),
}));
