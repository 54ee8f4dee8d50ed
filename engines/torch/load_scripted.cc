// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// A LibTorch program that runs a TorchScript model using roialign's operators, as a C++ deployment would: it links
// libroialign_torch.so (which registers torch.ops.roialign.* when it loads), loads the model saved from Python and
// a data module holding the inputs and the eager results, and checks that the model reproduces them bit for bit.
//   roialign_torch_load_scripted MODEL.pt DATA.pt   -> prints "ok", or why not and exits 1
#include <torch/script.h>

#include <iostream>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " MODEL.pt DATA.pt\n";
    return 2;
  }
  try {
    torch::jit::Module model = torch::jit::load(argv[1]);
    torch::jit::Module data = torch::jit::load(argv[2]);
    std::vector<torch::jit::IValue> inputs;
    for (const char* name : {"x", "rois", "feats", "boxes", "shapes"}) inputs.push_back(data.attr(name));
    torch::NoGradGuard no_grad;
    const auto outputs = model.forward(inputs).toTuple();
    const auto expected = data.attr("expected").toTuple();
    if (outputs->elements().size() != expected->elements().size()) {
      std::cerr << "the model returned " << outputs->elements().size() << " tensors, expected "
                << expected->elements().size() << "\n";
      return 1;
    }
    for (size_t i = 0; i < outputs->elements().size(); ++i) {
      const at::Tensor got = outputs->elements()[i].toTensor(), want = expected->elements()[i].toTensor();
      if (!got.sizes().equals(want.sizes()) || !torch::equal(got, want)) {
        std::cerr << "output " << i << " differs from eager: shape " << got.sizes() << " vs " << want.sizes() << "\n";
        return 1;
      }
    }
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  std::cout << "ok\n";
  return 0;
}
