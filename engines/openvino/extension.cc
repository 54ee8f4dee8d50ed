// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// libroialign_openvino.so: core.add_extension(path) registers the ops and the ONNX conversions of RoiAlign and of
// mmcv's MMCVRoIAlignRotated. The replacement of opset15 ROIAlignRotated (rotated.h) is not registered as a
// DecoderTransformationExtension: the ONNX frontend runs those on its decoded model before conversion, where
// that pass broke read_model ("Could not find 'onnx_graph' attribute in decoded model"); docs/openvino.md.
#include "onnx_opset.h"
#include "onnx_roi_align.h"
#include "roialign_op.h"
#include "roialign_rotated_op.h"
#include "rotated.h"
#include "openvino/core/extension.hpp"
#include "openvino/core/op_extension.hpp"
#include "openvino/frontend/onnx/extension/conversion.hpp"

OPENVINO_CREATE_EXTENSIONS(std::vector<ov::Extension::Ptr>({
    std::make_shared<ov::OpExtension<roialign_openvino::RoiAlign>>(),
    std::make_shared<ov::frontend::onnx::ConversionExtension>("RoiAlign", roialign_openvino::ConvertOnnxRoiAlign),
    roialign_openvino::MakeOnnxOpsetListener(),
    std::make_shared<ov::OpExtension<roialign_openvino::RoiAlignRotated>>(),
    std::make_shared<ov::frontend::onnx::ConversionExtension>("MMCVRoIAlignRotated", "mmcv",
                                                              roialign_openvino::ConvertMmcvRoiAlignRotated),
}));
