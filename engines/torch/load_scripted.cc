// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// A LibTorch program that runs a TorchScript model using roialign's operators, as a C++ deployment would: it links
// libroialign_torch.so (which registers torch.ops.roialign.* when it loads), loads the model saved from Python and
// a data module holding its inputs (`inputs`, a tuple of the forward's arguments), the eager results (`expected`,
// tensors in any nesting of tuples and lists) and the thread count they were computed with (`threads`), and checks
// that the model reproduces the results bit for bit. The model may use other libraries' operators too (a torchvision
// detector calls torchvision::nms): each LIBRARY is loaded first, as torch.ops.load_library would.
//   roialign_torch_load_scripted MODEL.pt DATA.pt [LIBRARY.so...]   -> prints "ok", or why not and exits 1
#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <torch/script.h>

#include <iostream>
#include <vector>

namespace {

// Every tensor of `value`, depth first.
void Flatten(const c10::IValue& value, std::vector<at::Tensor>* tensors) {
  if (value.isTensor()) {
    tensors->push_back(value.toTensor());
  } else if (value.isTuple()) {
    for (const c10::IValue& v : value.toTupleRef().elements()) Flatten(v, tensors);
  } else if (value.isList()) {
    for (const c10::IValue& v : value.toListRef()) Flatten(v, tensors);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: " << argv[0] << " MODEL.pt DATA.pt [LIBRARY.so...]\n";
    return 2;
  }
  for (int i = 3; i < argc; ++i) {
    if (dlopen(argv[i], RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      std::cerr << "cannot load " << argv[i] << ": " << dlerror() << "\n";
      return 1;
    }
  }
  try {
    torch::jit::Module model = torch::jit::load(argv[1]);
    torch::jit::Module data = torch::jit::load(argv[2]);
    at::set_num_threads(static_cast<int>(data.attr("threads").toInt()));
    const auto& arguments = data.attr("inputs").toTupleRef().elements();
    std::vector<torch::jit::IValue> inputs(arguments.begin(), arguments.end());
    torch::NoGradGuard no_grad;
    std::vector<at::Tensor> got, want;
    Flatten(model.forward(inputs), &got);
    Flatten(data.attr("expected"), &want);
    if (got.size() != want.size() || want.empty()) {
      std::cerr << "the model returned " << got.size() << " tensors, expected " << want.size() << "\n";
      return 1;
    }
    for (size_t i = 0; i < got.size(); ++i) {
      if (!got[i].sizes().equals(want[i].sizes()) || !torch::equal(got[i], want[i])) {
        std::cerr << "output " << i << " differs from eager: shape " << got[i].sizes() << " vs " << want[i].sizes()
                  << "\n";
        return 1;
      }
    }
    std::cout << "ok (" << got.size() << " tensors)\n";
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
