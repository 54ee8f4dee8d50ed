// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The OpenVINO operation that runs a roialign kernel on rotated RoIs (docs/semantics.md#rotated-rois): an NCHW map
// and either [K,6] rows (batch, cx, cy, w, h, angle), mmcv's form, or [K,5] rows (cx, cy, w, h, angle) and K batch
// indices, OpenVINO ROIAlignRotated-15's form. The kernel is selected when the node's input types are known.
#ifndef ROIALIGN_ENGINES_OPENVINO_ROIALIGN_ROTATED_OP_H_
#define ROIALIGN_ENGINES_OPENVINO_ROIALIGN_ROTATED_OP_H_

#include <memory>
#include <string>

#include "openvino/op/op.hpp"
#include "roialign/roialign.h"
#include "roialign_op.h"

namespace roialign_openvino {

// Inputs: 0 feature map [N,C,H,W] (f32, f16 or bf16), 1 RoIs f32 [K,6] (with the batch column) when there are two
// inputs, [K,5] when there are three, 2 batch indices [K] (i64 or i32). Output: [K,C,PH,PW] in the map's type.
// Attributes are roialign_params' by their library names: coordinate_mode HALF_PIXEL (aligned) or LEGACY (mmcv's
// aligned=False), angle_unit RADIANS or DEGREES, rotation COUNTER_CLOCKWISE or CLOCKWISE, pool_mode (layout NCHW).
// The constructor selects the kernel and throws roialign's refusal, naming `friendly_name`.
class RoiAlignRotated : public ov::op::Op {
 public:
  OPENVINO_OP("RoialignRoiAlignRotated", "roialign")

  RoiAlignRotated() = default;
  RoiAlignRotated(const ov::OutputVector& inputs, int64_t pooled_height, int64_t pooled_width, float spatial_scale,
                  int64_t sampling_ratio, const std::string& coordinate_mode, const std::string& angle_unit,
                  const std::string& rotation, const std::string& pool_mode = "AVG",
                  const std::string& friendly_name = "");

  void validate_and_infer_types() override;
  std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector& new_args) const override;
  bool visit_attributes(ov::AttributeVisitor& visitor) override;
  bool has_evaluate() const override;
  bool evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const override;

  // The implementation selected for the current input type (empty before selection).
  std::string kernel_name() const;

 private:
  roialign_params Params(roialign_dtype dtype) const;

  int64_t pooled_height_ = 1, pooled_width_ = 1;
  float spatial_scale_ = 1.0f;
  int64_t sampling_ratio_ = 0;
  std::string coordinate_mode_ = "HALF_PIXEL";
  std::string angle_unit_ = "RADIANS";
  std::string rotation_ = "COUNTER_CLOCKWISE";
  std::string pool_mode_ = "AVG";
  NodeKernel kernel_;  // selected in validate_and_infer_types
};

}  // namespace roialign_openvino

#endif  // ROIALIGN_ENGINES_OPENVINO_ROIALIGN_ROTATED_OP_H_
