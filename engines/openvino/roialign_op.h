// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The OpenVINO operation that runs a roialign kernel: RoIAlign on an NCHW map with [K,4] boxes and K batch indices
// (ONNX's and OpenVINO's form). The kernel is selected when the node's input types are known, never in evaluate.
#ifndef ROIALIGN_ENGINES_OPENVINO_ROIALIGN_OP_H_
#define ROIALIGN_ENGINES_OPENVINO_ROIALIGN_OP_H_

#include <memory>
#include <string>

#include "openvino/op/op.hpp"
#include "openvino/runtime/tensor.hpp"
#include "roialign/roialign.h"

namespace roialign_openvino {

// Owns a selected kernel; shared by the clones of one node that have the same attributes and dtype.
struct SelectedKernel {
  explicit SelectedKernel(roialign_kernel* k) : kernel(k) {}
  ~SelectedKernel() { roialign_kernel_free(kernel); }
  SelectedKernel(const SelectedKernel&) = delete;
  SelectedKernel& operator=(const SelectedKernel&) = delete;
  roialign_kernel* kernel;
};

// Selects the kernel for `params` on "host"; throws ov::Exception with roialign's own message if it is refused.
std::shared_ptr<SelectedKernel> SelectOrThrow(const roialign_params& params, const std::string& node_name);

// The roialign dtype of a feature map's element type; false for a type no kernel serves.
bool ToDType(const ov::element::Type& type, roialign_dtype* dtype);

// "A, B, ...": every name of the enum `kind`, as the library spells them (messages about unknown attributes).
std::string NamesOf(roialign_enum_kind kind);

// A node's kernel, selected when the map's type is known, and again only if that type (a plugin may lower f16 to
// f32) or an attribute (read from IR, or resolved from the opset) changed since; evaluate only runs it.
class NodeKernel {
 public:
  // Selects for `params` and the map's `type` unless that is what the kernel already serves; throws roialign's
  // refusal, naming the node.
  void Select(const roialign_params& params, const ov::element::Type& type, const std::string& node_name);
  bool SelectedFor(const ov::element::Type& type) const { return selected_ && type == type_; }
  // The implementation, e.g. "roi_align_nchw.avx2" (empty before selection).
  std::string name() const;
  // Runs on an NCHW map with f32 RoI rows as the kernel's params shape them and `batch_indices` (i64 or i32; null:
  // the batch is the rows' first column), writing `out`, on the calling TBB arena's threads; throws roialign's
  // refusal naming `node`.
  void Run(const ov::Tensor& map, const ov::Tensor& rois, const ov::Tensor* batch_indices, ov::Tensor& out,
           const std::string& node) const;

 private:
  std::shared_ptr<SelectedKernel> selected_;
  ov::element::Type type_;
  roialign_params params_{};  // what selected_ was selected for
};

// Inputs: 0 feature map [N,C,H,W] (f32, f16 or bf16), 1 boxes [K,4] f32 (x1, y1, x2, y2), 2 batch indices [K]
// (i64 or i32). Output: [K,C,PH,PW] in the map's type. Attributes are roialign_params' (layout NCHW).
// The constructor selects the kernel and throws roialign's refusal; `friendly_name` (set first) names the node in it.
class RoiAlign : public ov::op::Op {
 public:
  OPENVINO_OP("RoialignRoiAlign", "roialign")

  RoiAlign() = default;
  RoiAlign(const ov::Output<ov::Node>& map, const ov::Output<ov::Node>& boxes,
           const ov::Output<ov::Node>& batch_indices, int64_t pooled_height, int64_t pooled_width,
           float spatial_scale, int64_t sampling_ratio, const std::string& coordinate_mode,
           const std::string& pool_mode, const std::string& friendly_name = "");

  void validate_and_infer_types() override;
  std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector& new_args) const override;
  bool visit_attributes(ov::AttributeVisitor& visitor) override;
  bool has_evaluate() const override;
  bool evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const override;

  // ONNX RoiAlign without coordinate_transformation_mode means output_half_pixel up to opset 15 and half_pixel
  // from opset 16, and ONNX conversion extensions are not told the opset (onnx_opset.h). Such a node is made with
  // this mode, which selects like LEGACY (both modes serve the same attributes) but refuses to run until
  // ResolveOnnxDefault gives it the opset.
  static constexpr const char* kOnnxOpsetDefault = "ONNX_OPSET_DEFAULT";
  // Sets the coordinate mode of a kOnnxOpsetDefault node from the model's ai.onnx opset, and selects again.
  void ResolveOnnxDefault(int64_t opset);

  // The implementation selected for the current input type, e.g. "roi_align_nchw.avx2" (empty before selection).
  std::string kernel_name() const;

 private:
  roialign_params Params(roialign_dtype dtype) const;

  int64_t pooled_height_ = 1, pooled_width_ = 1;
  float spatial_scale_ = 1.0f;
  int64_t sampling_ratio_ = 0;
  std::string coordinate_mode_ = "HALF_PIXEL";  // a name of roialign_enum_name(ROIALIGN_ENUM_COORDINATE_MODE)
  std::string pool_mode_ = "AVG";               // a name of roialign_enum_name(ROIALIGN_ENUM_POOL_MODE)
  NodeKernel kernel_;  // selected in validate_and_infer_types
};

}  // namespace roialign_openvino

#endif  // ROIALIGN_ENGINES_OPENVINO_ROIALIGN_OP_H_
