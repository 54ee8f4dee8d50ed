// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "onnx_opset.h"

#include <cstdlib>
#include <string>
#include <vector>

namespace roialign_openvino {
namespace {

thread_local std::vector<std::weak_ptr<RoiAlign>> pending;

void OnEvent(const std::string& /*category*/, const std::string& action, const std::string& label, int /*value*/) {
  static const std::string kPrefix = "onnx_RoiAlign-";
  if (action != "op_count" || label.compare(0, kPrefix.size(), kPrefix) != 0) return;
  char* end = nullptr;
  const long opset = std::strtol(label.c_str() + kPrefix.size(), &end, 10);
  if (end == label.c_str() + kPrefix.size() || *end != '\0') return;  // not a number: leave the nodes unresolved
  for (const auto& weak : pending) {
    if (auto node = weak.lock()) node->ResolveOnnxDefault(opset);
  }
  pending.clear();
}

void Ignore(const std::string& /*category*/, const std::string& /*message*/) {}

}  // namespace

void QueueForOnnxOpset(const std::shared_ptr<RoiAlign>& node) { pending.push_back(node); }

std::shared_ptr<ov::frontend::TelemetryExtension> MakeOnnxOpsetListener() {
  return std::make_shared<ov::frontend::TelemetryExtension>("roialign", OnEvent, Ignore, Ignore);
}

}  // namespace roialign_openvino
