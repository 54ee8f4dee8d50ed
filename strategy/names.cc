// Human-readable names of the public enums, used in every message.
#include "roialign/roialign.hpp"

namespace roialign {

const char* ToString(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kUnsupported: return "UNSUPPORTED";
    case StatusCode::kOutOfMemory: return "OUT_OF_MEMORY";
    case StatusCode::kInternal: return "INTERNAL";
  }
  return "?";
}
const char* ToString(Layout layout) {
  switch (layout) {
    case Layout::kNCHW: return "NCHW";
    case Layout::kNHWC: return "NHWC";
  }
  return "?";
}
const char* ToString(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "F32";
    case DType::kF16: return "F16";
    case DType::kBF16: return "BF16";
  }
  return "?";
}
const char* ToString(PoolMode mode) {
  switch (mode) {
    case PoolMode::kAvg: return "AVG";
    case PoolMode::kMax: return "MAX";
    case PoolMode::kMaxOnnx: return "MAX_ONNX";
  }
  return "?";
}
const char* ToString(CoordinateMode mode) {
  switch (mode) {
    case CoordinateMode::kLegacy: return "LEGACY";
    case CoordinateMode::kHalfPixel: return "HALF_PIXEL";
    case CoordinateMode::kHalfPixelCentered: return "HALF_PIXEL_CENTERED";
  }
  return "?";
}

}  // namespace roialign
