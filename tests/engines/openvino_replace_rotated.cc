// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// A C++ program that uses libroialign_openvino.so's exported roialign_openvino_replace_roi_align_rotated (dlsym):
// builds a model with opset15 ROIAlignRotated, replaces it, compiles and runs it, and prints the model's op types,
// the count and the output. tests/engines/test_openvino_rotated.py compiles it against the openvino wheel's SDK.
//   openvino_replace_rotated EXTENSION
#include <dlfcn.h>

#include <cstdio>
#include <memory>

#include "openvino/openvino.hpp"
#include "openvino/opsets/opset15.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s libroialign_openvino.so\n", argv[0]);
    return 2;
  }
  ov::Core core;
  core.add_extension(argv[1]);
  void* lib = dlopen(argv[1], RTLD_NOW);
  using ReplaceFn = int (*)(void*);
  const auto replace = lib ? reinterpret_cast<ReplaceFn>(dlsym(lib, "roialign_openvino_replace_roi_align_rotated"))
                           : nullptr;
  if (replace == nullptr) {
    std::fprintf(stderr, "no roialign_openvino_replace_roi_align_rotated in %s\n", argv[1]);
    return 1;
  }
  // A 1 x 2 x 8 x 8 map whose pixel (y, x) holds x + 10 * channel, one box centred on (4, 4) of size 4 x 4, angle 0:
  // aligned, its 2 x 2 bins sample x = 2.5 and 4.5 (and y alike), so the output is x + 10 * channel there.
  auto x = std::make_shared<ov::opset15::Parameter>(ov::element::f32, ov::Shape{1, 2, 8, 8});
  auto rois = std::make_shared<ov::opset15::Parameter>(ov::element::f32, ov::Shape{1, 5});
  auto batch = std::make_shared<ov::opset15::Parameter>(ov::element::i32, ov::Shape{1});
  auto op = std::make_shared<ov::opset15::ROIAlignRotated>(x, rois, batch, 2, 2, 2, 1.0f, false);
  auto model = std::make_shared<ov::Model>(ov::OutputVector{op}, ov::ParameterVector{x, rois, batch});
  std::printf("null model: %d\n", replace(nullptr));
  const int replaced = replace(&model);
  std::printf("replaced: %d\n", replaced);
  for (const auto& node : model->get_ops()) std::printf("op: %s\n", node->get_type_name());
  ov::CompiledModel compiled = core.compile_model(model, "CPU");
  ov::InferRequest request = compiled.create_infer_request();
  float map[128];
  for (int i = 0; i < 128; ++i) map[i] = static_cast<float>(i % 8 + 10 * (i / 64));
  float box[5] = {4, 4, 4, 4, 0};
  int32_t index[1] = {0};
  request.set_input_tensor(0, ov::Tensor(ov::element::f32, {1, 2, 8, 8}, map));
  request.set_input_tensor(1, ov::Tensor(ov::element::f32, {1, 5}, box));
  request.set_input_tensor(2, ov::Tensor(ov::element::i32, {1}, index));
  request.infer();
  const float* y = request.get_output_tensor().data<float>();
  std::printf("output:");
  for (int i = 0; i < 8; ++i) std::printf(" %g", y[i]);
  std::printf("\n");
  return 0;
}
