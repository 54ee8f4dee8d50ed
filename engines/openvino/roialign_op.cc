// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "roialign_op.h"

#include <string>

#include <cstdint>
#include <vector>

#include "tbb_threadpool.h"
#include "openvino/core/except.hpp"

namespace roialign_openvino {
namespace {

// Every attribute a kernel is selected for (rotated ones at their defaults for axis-aligned nodes).
bool SameParams(const roialign_params& a, const roialign_params& b) {
  return a.pooled_height == b.pooled_height && a.pooled_width == b.pooled_width &&
         a.spatial_scale == b.spatial_scale && a.sampling_ratio == b.sampling_ratio &&
         a.coordinate_mode == b.coordinate_mode && a.pool_mode == b.pool_mode && a.layout == b.layout &&
         a.dtype == b.dtype && a.roi_kind == b.roi_kind && a.angle_unit == b.angle_unit && a.rotation == b.rotation;
}

}  // namespace

std::shared_ptr<SelectedKernel> SelectOrThrow(const roialign_params& params, const std::string& node_name) {
  roialign_kernel* kernel = nullptr;
  if (roialign_select("host", &params, &kernel) != ROIALIGN_OK) {
    OPENVINO_THROW("roialign refuses RoiAlign node '", node_name, "': ", roialign_last_error());
  }
  return std::make_shared<SelectedKernel>(kernel);
}

bool ToDType(const ov::element::Type& type, roialign_dtype* dtype) {
  if (type == ov::element::f32) {
    *dtype = ROIALIGN_DTYPE_F32;
  } else if (type == ov::element::f16) {
    *dtype = ROIALIGN_DTYPE_F16;
  } else if (type == ov::element::bf16) {
    *dtype = ROIALIGN_DTYPE_BF16;
  } else {
    return false;
  }
  return true;
}

std::string NamesOf(roialign_enum_kind kind) {
  std::string names;
  for (int32_t v = 0; const char* name = roialign_enum_name(kind, v); ++v) names += (v ? ", " : "") + std::string(name);
  return names;
}

void NodeKernel::Select(const roialign_params& params, const ov::element::Type& type, const std::string& node_name) {
  if (selected_ && type == type_ && SameParams(params, params_)) return;
  selected_ = SelectOrThrow(params, node_name);
  type_ = type;
  params_ = params;
}

std::string NodeKernel::name() const { return selected_ ? roialign_kernel_name(selected_->kernel) : ""; }

void NodeKernel::Run(const ov::Tensor& map, const ov::Tensor& rois, const ov::Tensor* batch_indices, ov::Tensor& out,
                     const std::string& node) const {
  const ov::Shape& ms = map.get_shape();
  const auto k = static_cast<int64_t>(rois.get_shape()[0]);
  const int64_t* batch = nullptr;
  std::vector<int64_t> widened;  // i32 indices (the CPU plugin lowers i64 inputs to i32)
  if (batch_indices != nullptr && batch_indices->get_element_type() == ov::element::i64) {
    batch = batch_indices->data<const int64_t>();
  } else if (batch_indices != nullptr) {
    OPENVINO_ASSERT(batch_indices->get_element_type() == ov::element::i32, node, ": batch indices must be i64 or i32");
    const int32_t* narrow = batch_indices->data<const int32_t>();
    widened.assign(narrow, narrow + k);
    batch = widened.data();
  }
  const roialign_threadpool pool = CurrentArenaThreadpool();
  roialign_inputs in;
  roialign_inputs_init(&in);
  in.batch = static_cast<int64_t>(ms[0]);
  in.channels = static_cast<int64_t>(ms[1]);
  in.maps[0].data = map.data();
  in.maps[0].height = static_cast<int64_t>(ms[2]);
  in.maps[0].width = static_cast<int64_t>(ms[3]);
  in.rois = rois.data<const float>();
  in.batch_indices = batch;
  in.num_rois = k;
  roialign_options options;
  roialign_options_init(&options);
  options.threadpool = &pool;
  if (roialign_run(selected_->kernel, &in, out.data(), &options) != ROIALIGN_OK) {
    OPENVINO_THROW(node, ": ", roialign_last_error());
  }
}

RoiAlign::RoiAlign(const ov::Output<ov::Node>& map, const ov::Output<ov::Node>& boxes,
                   const ov::Output<ov::Node>& batch_indices, int64_t pooled_height, int64_t pooled_width,
                   float spatial_scale, int64_t sampling_ratio, const std::string& coordinate_mode,
                   const std::string& pool_mode, const std::string& friendly_name)
    : Op({map, boxes, batch_indices}),
      pooled_height_(pooled_height),
      pooled_width_(pooled_width),
      spatial_scale_(spatial_scale),
      sampling_ratio_(sampling_ratio),
      coordinate_mode_(coordinate_mode),
      pool_mode_(pool_mode) {
  if (!friendly_name.empty()) set_friendly_name(friendly_name);
  constructor_validate_and_infer_types();
}

roialign_params RoiAlign::Params(roialign_dtype dtype) const {
  const bool pending = coordinate_mode_ == kOnnxOpsetDefault;  // selects like LEGACY (see the header)
  const int32_t coord =
      pending ? ROIALIGN_COORD_LEGACY : roialign_enum_parse(ROIALIGN_ENUM_COORDINATE_MODE, coordinate_mode_.c_str());
  const int32_t pool = roialign_enum_parse(ROIALIGN_ENUM_POOL_MODE, pool_mode_.c_str());
  NODE_VALIDATION_CHECK(this, coord >= 0, "unknown coordinate_mode '", coordinate_mode_, "' (",
                        NamesOf(ROIALIGN_ENUM_COORDINATE_MODE), ")");
  NODE_VALIDATION_CHECK(this, pool >= 0, "unknown pool_mode '", pool_mode_, "' (", NamesOf(ROIALIGN_ENUM_POOL_MODE),
                        ")");
  NODE_VALIDATION_CHECK(this, sampling_ratio_ >= INT32_MIN && sampling_ratio_ <= INT32_MAX,
                        "sampling_ratio ", sampling_ratio_, " is out of range");
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
  return p;
}

void RoiAlign::validate_and_infer_types() {
  const ov::element::Type map_type = get_input_element_type(0);
  const ov::element::Type box_type = get_input_element_type(1);
  const ov::element::Type index_type = get_input_element_type(2);
  roialign_dtype dtype = ROIALIGN_DTYPE_F32;
  NODE_VALIDATION_CHECK(this, map_type.is_dynamic() || ToDType(map_type, &dtype),
                        "roialign serves f32, f16 and bf16 feature maps, not ", map_type);
  NODE_VALIDATION_CHECK(this, box_type.is_dynamic() || box_type == ov::element::f32, "boxes must be f32, not ",
                        box_type);
  NODE_VALIDATION_CHECK(this,
                        index_type.is_dynamic() || index_type == ov::element::i64 || index_type == ov::element::i32,
                        "batch indices must be i64 or i32, not ", index_type);
  const ov::PartialShape& map = get_input_partial_shape(0);
  const ov::PartialShape& boxes = get_input_partial_shape(1);
  const ov::PartialShape& indices = get_input_partial_shape(2);
  NODE_VALIDATION_CHECK(this, map.rank().compatible(4), "the feature map must be [N, C, H, W], got ", map);
  NODE_VALIDATION_CHECK(this, boxes.rank().compatible(2), "boxes must be [K, 4], got ", boxes);
  NODE_VALIDATION_CHECK(this, indices.rank().compatible(1), "batch indices must be [K], got ", indices);
  ov::Dimension k = boxes.rank().is_static() ? boxes[0] : ov::Dimension::dynamic();
  if (boxes.rank().is_static()) {
    NODE_VALIDATION_CHECK(this, boxes[1].compatible(4), "boxes must be [K, 4], got ", boxes);
  }
  if (indices.rank().is_static()) {
    NODE_VALIDATION_CHECK(this, ov::Dimension::merge(k, k, indices[0]), "boxes ", boxes,
                          " and batch indices ", indices, " disagree on K");
  }
  const ov::Dimension c = map.rank().is_static() ? map[1] : ov::Dimension::dynamic();
  set_output_type(0, map_type, ov::PartialShape{k, c, pooled_height_, pooled_width_});

  if (map_type.is_static()) kernel_.Select(Params(dtype), map_type, get_friendly_name());
}

std::shared_ptr<ov::Node> RoiAlign::clone_with_new_inputs(const ov::OutputVector& new_args) const {
  check_new_args_count(this, new_args);
  return std::make_shared<RoiAlign>(new_args.at(0), new_args.at(1), new_args.at(2), pooled_height_, pooled_width_,
                                    spatial_scale_, sampling_ratio_, coordinate_mode_, pool_mode_);
}

bool RoiAlign::visit_attributes(ov::AttributeVisitor& visitor) {
  visitor.on_attribute("pooled_height", pooled_height_);
  visitor.on_attribute("pooled_width", pooled_width_);
  visitor.on_attribute("spatial_scale", spatial_scale_);
  visitor.on_attribute("sampling_ratio", sampling_ratio_);
  visitor.on_attribute("coordinate_mode", coordinate_mode_);
  visitor.on_attribute("pool_mode", pool_mode_);
  return true;
}

void RoiAlign::ResolveOnnxDefault(int64_t opset) {
  if (coordinate_mode_ != kOnnxOpsetDefault) return;
  coordinate_mode_ = opset >= 16 ? "HALF_PIXEL" : "LEGACY";
  validate_and_infer_types();
}

bool RoiAlign::has_evaluate() const { return true; }

std::string RoiAlign::kernel_name() const { return kernel_.name(); }

bool RoiAlign::evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const {
  const ov::Tensor& map = inputs.at(0);
  const ov::Tensor& boxes = inputs.at(1);
  const ov::Tensor& indices = inputs.at(2);
  OPENVINO_ASSERT(kernel_.SelectedFor(map.get_element_type()), "RoiAlign '", get_friendly_name(),
                  "': no kernel was selected for ", map.get_element_type());
  OPENVINO_ASSERT(coordinate_mode_ != kOnnxOpsetDefault, "RoiAlign '", get_friendly_name(),
                  "': the ONNX node has no coordinate_transformation_mode, whose default depends on the model's "
                  "opset, and the opset never reached the extension (see docs/openvino.md)");
  OPENVINO_ASSERT(boxes.get_element_type() == ov::element::f32, "RoiAlign: boxes must be f32");
  const ov::Shape& ms = map.get_shape();
  const ov::Shape& bs = boxes.get_shape();
  OPENVINO_ASSERT(ms.size() == 4 && bs.size() == 2 && bs[1] == 4 && indices.get_shape() == ov::Shape{bs[0]},
                  "RoiAlign: expected map [N,C,H,W], boxes [K,4], batch indices [K]; got ", ms, ", ", bs, ", ",
                  indices.get_shape());
  outputs.at(0).set_shape(ov::Shape{bs[0], ms[1], static_cast<size_t>(pooled_height_),
                                    static_cast<size_t>(pooled_width_)});
  kernel_.Run(map, boxes, &indices, outputs.at(0), "RoiAlign '" + get_friendly_name() + "'");
  return true;
}

}  // namespace roialign_openvino
