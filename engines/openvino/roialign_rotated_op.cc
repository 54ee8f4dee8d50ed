// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "roialign_rotated_op.h"

#include <cstdint>
#include <string>

#include "openvino/core/except.hpp"

namespace roialign_openvino {

RoiAlignRotated::RoiAlignRotated(const ov::OutputVector& inputs, int64_t pooled_height, int64_t pooled_width,
                                 float spatial_scale, int64_t sampling_ratio, const std::string& coordinate_mode,
                                 const std::string& angle_unit, const std::string& rotation,
                                 const std::string& pool_mode, const std::string& friendly_name)
    : Op(inputs),
      pooled_height_(pooled_height),
      pooled_width_(pooled_width),
      spatial_scale_(spatial_scale),
      sampling_ratio_(sampling_ratio),
      coordinate_mode_(coordinate_mode),
      angle_unit_(angle_unit),
      rotation_(rotation),
      pool_mode_(pool_mode) {
  if (!friendly_name.empty()) set_friendly_name(friendly_name);
  constructor_validate_and_infer_types();
}

roialign_params RoiAlignRotated::Params(roialign_dtype dtype) const {
  const int32_t coord = roialign_enum_parse(ROIALIGN_ENUM_COORDINATE_MODE, coordinate_mode_.c_str());
  const int32_t unit = roialign_enum_parse(ROIALIGN_ENUM_ANGLE_UNIT, angle_unit_.c_str());
  const int32_t rotation = roialign_enum_parse(ROIALIGN_ENUM_ROTATION, rotation_.c_str());
  const int32_t pool = roialign_enum_parse(ROIALIGN_ENUM_POOL_MODE, pool_mode_.c_str());
  NODE_VALIDATION_CHECK(this, coord >= 0, "unknown coordinate_mode '", coordinate_mode_, "' (",
                        NamesOf(ROIALIGN_ENUM_COORDINATE_MODE), ")");
  NODE_VALIDATION_CHECK(this, unit >= 0, "unknown angle_unit '", angle_unit_, "' (", NamesOf(ROIALIGN_ENUM_ANGLE_UNIT),
                        ")");
  NODE_VALIDATION_CHECK(this, rotation >= 0, "unknown rotation '", rotation_, "' (", NamesOf(ROIALIGN_ENUM_ROTATION),
                        ")");
  NODE_VALIDATION_CHECK(this, pool >= 0, "unknown pool_mode '", pool_mode_, "' (", NamesOf(ROIALIGN_ENUM_POOL_MODE),
                        ")");
  NODE_VALIDATION_CHECK(this, sampling_ratio_ >= INT32_MIN && sampling_ratio_ <= INT32_MAX, "sampling_ratio ",
                        sampling_ratio_, " is out of range");
  roialign_params p;
  roialign_params_init(&p);
  p.pooled_height = pooled_height_;
  p.pooled_width = pooled_width_;
  p.spatial_scale = spatial_scale_;
  p.sampling_ratio = static_cast<int32_t>(sampling_ratio_);
  p.coordinate_mode = static_cast<roialign_coordinate_mode>(coord);
  p.pool_mode = static_cast<roialign_pool_mode>(pool);
  p.layout = ROIALIGN_LAYOUT_NCHW;
  p.dtype = dtype;
  p.roi_kind = ROIALIGN_ROI_ROTATED;
  p.angle_unit = static_cast<roialign_angle_unit>(unit);
  p.rotation = static_cast<roialign_rotation>(rotation);
  return p;
}

void RoiAlignRotated::validate_and_infer_types() {
  const size_t n = get_input_size();
  NODE_VALIDATION_CHECK(this, n == 2 || n == 3,
                        "takes a map and [K,6] RoIs, or a map, [K,5] RoIs and batch indices; got ", n, " inputs");
  const bool with_indices = n == 3;
  const int64_t columns = with_indices ? 5 : 6;
  const ov::element::Type map_type = get_input_element_type(0);
  const ov::element::Type box_type = get_input_element_type(1);
  roialign_dtype dtype = ROIALIGN_DTYPE_F32;
  NODE_VALIDATION_CHECK(this, map_type.is_dynamic() || ToDType(map_type, &dtype),
                        "roialign serves f32, f16 and bf16 feature maps, not ", map_type);
  NODE_VALIDATION_CHECK(this, box_type.is_dynamic() || box_type == ov::element::f32, "RoIs must be f32, not ",
                        box_type);
  const ov::PartialShape& map = get_input_partial_shape(0);
  const ov::PartialShape& boxes = get_input_partial_shape(1);
  NODE_VALIDATION_CHECK(this, map.rank().compatible(4), "the feature map must be [N, C, H, W], got ", map);
  NODE_VALIDATION_CHECK(this, boxes.rank().compatible(2), "RoIs must be [K, ", columns, "], got ", boxes);
  ov::Dimension k = boxes.rank().is_static() ? boxes[0] : ov::Dimension::dynamic();
  if (boxes.rank().is_static()) {
    NODE_VALIDATION_CHECK(this, boxes[1].compatible(columns), "RoIs must be [K, ", columns, "] with ",
                          with_indices ? "batch indices" : "no batch indices (the batch is column 0)", ", got ",
                          boxes);
  }
  if (with_indices) {
    const ov::element::Type index_type = get_input_element_type(2);
    const ov::PartialShape& indices = get_input_partial_shape(2);
    NODE_VALIDATION_CHECK(this,
                          index_type.is_dynamic() || index_type == ov::element::i64 || index_type == ov::element::i32,
                          "batch indices must be i64 or i32, not ", index_type);
    NODE_VALIDATION_CHECK(this, indices.rank().compatible(1), "batch indices must be [K], got ", indices);
    if (indices.rank().is_static()) {
      NODE_VALIDATION_CHECK(this, ov::Dimension::merge(k, k, indices[0]), "RoIs ", boxes, " and batch indices ",
                            indices, " disagree on K");
    }
  }
  const ov::Dimension c = map.rank().is_static() ? map[1] : ov::Dimension::dynamic();
  set_output_type(0, map_type, ov::PartialShape{k, c, pooled_height_, pooled_width_});
  if (map_type.is_static()) kernel_.Select(Params(dtype), map_type, get_friendly_name());
}

std::shared_ptr<ov::Node> RoiAlignRotated::clone_with_new_inputs(const ov::OutputVector& new_args) const {
  NODE_VALIDATION_CHECK(this, new_args.size() == 2 || new_args.size() == 3, "takes 2 or 3 inputs, got ",
                        new_args.size());
  return std::make_shared<RoiAlignRotated>(new_args, pooled_height_, pooled_width_, spatial_scale_, sampling_ratio_,
                                           coordinate_mode_, angle_unit_, rotation_, pool_mode_);
}

bool RoiAlignRotated::visit_attributes(ov::AttributeVisitor& visitor) {
  visitor.on_attribute("pooled_height", pooled_height_);
  visitor.on_attribute("pooled_width", pooled_width_);
  visitor.on_attribute("spatial_scale", spatial_scale_);
  visitor.on_attribute("sampling_ratio", sampling_ratio_);
  visitor.on_attribute("coordinate_mode", coordinate_mode_);
  visitor.on_attribute("angle_unit", angle_unit_);
  visitor.on_attribute("rotation", rotation_);
  visitor.on_attribute("pool_mode", pool_mode_);
  return true;
}

bool RoiAlignRotated::has_evaluate() const { return true; }

std::string RoiAlignRotated::kernel_name() const { return kernel_.name(); }

bool RoiAlignRotated::evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const {
  const ov::Tensor& map = inputs.at(0);
  const ov::Tensor& boxes = inputs.at(1);
  const bool with_indices = inputs.size() == 3;
  OPENVINO_ASSERT(kernel_.SelectedFor(map.get_element_type()), "RoiAlignRotated '", get_friendly_name(),
                  "': no kernel was selected for ", map.get_element_type());
  OPENVINO_ASSERT(boxes.get_element_type() == ov::element::f32, "RoiAlignRotated: RoIs must be f32");
  const ov::Shape& ms = map.get_shape();
  const ov::Shape& bs = boxes.get_shape();
  OPENVINO_ASSERT(ms.size() == 4 && bs.size() == 2 && bs[1] == (with_indices ? 5u : 6u) &&
                      (!with_indices || inputs.at(2).get_shape() == ov::Shape{bs[0]}),
                  "RoiAlignRotated: expected map [N,C,H,W] and RoIs [K,6], or RoIs [K,5] and batch indices [K]; got ",
                  ms, ", ", bs);
  outputs.at(0).set_shape(
      ov::Shape{bs[0], ms[1], static_cast<size_t>(pooled_height_), static_cast<size_t>(pooled_width_)});
  kernel_.Run(map, boxes, with_indices ? &inputs.at(2) : nullptr, outputs.at(0),
              "RoiAlignRotated '" + get_friendly_name() + "'");
  return true;
}

}  // namespace roialign_openvino
