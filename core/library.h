/* Copyright 2026 The roialign Authors
 * SPDX-License-Identifier: Apache-2.0 */
// The library's internal C++ API: what strategy/ and execution/ implement, api/c_api.cc wraps as the C API, and the
// C++ tests, the benchmarks and the static library's internal users call. Not installed, not exported from
// libroialign.so (the C API is its only ABI). Enum values are the C API's. No SIMD or Highway here.
// It declares namespace roialign's names (Kernel, Status, ...) as the public header-only include/roialign/roialign.hpp
// does, but those live in roialign's inline namespace v1, so both link into one program without an ODR clash; one
// translation unit includes one of the two.
#ifndef ROIALIGN_CORE_LIBRARY_H_
#define ROIALIGN_CORE_LIBRARY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "roialign/roialign.h"

namespace roialign {

enum class StatusCode : int {
  kOk = ROIALIGN_OK,
  kInvalidArgument = ROIALIGN_INVALID_ARGUMENT,
  kUnsupported = ROIALIGN_UNSUPPORTED,
  kOutOfMemory = ROIALIGN_OUT_OF_MEMORY,
  kInternal = ROIALIGN_INTERNAL,
};
enum class Layout : int {
  kNCHW = ROIALIGN_LAYOUT_NCHW,
  kNHWC = ROIALIGN_LAYOUT_NHWC,
  kNCHW4c = ROIALIGN_LAYOUT_NCHW4C,
  kNCHW8c = ROIALIGN_LAYOUT_NCHW8C,
  kNCHW16c = ROIALIGN_LAYOUT_NCHW16C
};
enum class DType : int {
  kF32 = ROIALIGN_DTYPE_F32,
  kF16 = ROIALIGN_DTYPE_F16,
  kBF16 = ROIALIGN_DTYPE_BF16,
  kF64 = ROIALIGN_DTYPE_F64
};
enum class PoolMode : int { kAvg = ROIALIGN_POOL_AVG, kMax = ROIALIGN_POOL_MAX, kMaxOnnx = ROIALIGN_POOL_MAX_ONNX };
enum class CoordinateMode : int {
  kLegacy = ROIALIGN_COORD_LEGACY,
  kHalfPixel = ROIALIGN_COORD_HALF_PIXEL,
  kHalfPixelCentered = ROIALIGN_COORD_HALF_PIXEL_CENTERED,
  kLegacyUnclamped = ROIALIGN_COORD_LEGACY_UNCLAMPED,
};
// Rotated RoIs (roialign.h, docs/semantics.md#rotated-rois): the kind of box, the angle's unit and direction.
enum class RoiKind : int { kAxisAligned = ROIALIGN_ROI_AXIS_ALIGNED, kRotated = ROIALIGN_ROI_ROTATED };
enum class AngleUnit : int { kRadians = ROIALIGN_ANGLE_RADIANS, kDegrees = ROIALIGN_ANGLE_DEGREES };
enum class Rotation : int {
  kCounterClockwise = ROIALIGN_ROTATION_COUNTER_CLOCKWISE,
  kClockwise = ROIALIGN_ROTATION_CLOCKWISE
};
// How a multi-level call picks each RoI's level (roialign.h, docs/multi-level.md).
enum class LevelRule : int {
  kScale = ROIALIGN_LEVEL_RULE_SCALE,
  kGiven = ROIALIGN_LEVEL_RULE_GIVEN,
  kOpenVino = ROIALIGN_LEVEL_RULE_OPENVINO,
};

// Names used in messages and by the benchmarks ("NCHW", "AVG", "HALF_PIXEL", "F32"); "?" for unknown values.
const char* ToString(StatusCode code);
const char* ToString(Layout layout);
const char* ToString(DType dtype);
const char* ToString(PoolMode mode);
const char* ToString(CoordinateMode mode);
const char* ToString(LevelRule rule);  // "SCALE", "GIVEN", "OPENVINO"
const char* ToString(RoiKind kind);
const char* ToString(AngleUnit unit);
const char* ToString(Rotation rotation);

// Outcome of a call: a code and, unless ok, a message a user can act on.
class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Operator attributes (docs/semantics.md).
struct Params {
  int64_t pooled_height = 7;
  int64_t pooled_width = 7;
  float spatial_scale = 1.0f;
  int32_t sampling_ratio = 0;  // > 0 fixed grid, <= 0 adaptive
  CoordinateMode coordinate_mode = CoordinateMode::kLegacy;
  PoolMode pool_mode = PoolMode::kAvg;
  Layout layout = Layout::kNCHW;
  DType dtype = DType::kF32;
  bool backward = false;  // the kernel must also run the backward (ROIALIGN_PARAMS_BACKWARD)
  double spatial_scale_f64 = 0.0;  // kF64 only: the scale in double; 0 takes spatial_scale
  // Rotated RoIs (since 1.4): rows (batch, cx, cy, w, h, angle), or without the batch with batch_indices; the unit
  // and direction are read for kRotated only. Coordinate mode kHalfPixel is `aligned`, kLegacy mmcv's aligned=False.
  RoiKind roi_kind = RoiKind::kAxisAligned;
  AngleUnit angle_unit = AngleUnit::kRadians;
  Rotation rotation = Rotation::kCounterClockwise;
};

// One call's data. `rois` is [K,5] (batch, x1, y1, x2, y2) when batch_indices is null, else [K,4]; a kF64 call
// reads them from rois_f64 instead (rois null).
struct Inputs {
  const void* input = nullptr;
  int64_t batch = 0, channels = 0, height = 0, width = 0;
  const float* rois = nullptr;
  const int64_t* batch_indices = nullptr;
  int64_t num_rois = 0;
  const double* rois_f64 = nullptr;
};

namespace internal {
struct SelectedKernel;
}

// A selected implementation: immutable, cheap to copy, safe to run from many threads at once.
class KernelHandle {
 public:
  KernelHandle() = default;
  // Validates the data (docs/errors-and-limits.md), then computes; on error `output` is untouched.
  // `output` holds K*C*PH*PW elements; num_threads <= 0 uses OpenMP's default.
  Status Run(const Inputs& inputs, void* output, int32_t num_threads = 0) const;
  // The same on the caller's pool; bit-identical results. A null parallel_for or num_threads < 1 is
  // INVALID_ARGUMENT (output untouched).
  Status Run(const Inputs& inputs, void* output, const roialign_threadpool& pool) const;
  // The implementation's name, e.g. "roi_align_nhwc.avx512".
  const std::string& name() const;
  // Frees the working memory kept between Runs (Runs in progress keep theirs); noexcept.
  void ReleaseWorkingMemory() const noexcept;
  const Params& params() const { return params_; }
  bool valid() const { return selected_ != nullptr; }

 private:
  friend struct KernelAccess;
  // What selection resolved (the function for this dtype and ISA, the planner's options) and the kernel's
  // working memory, shared by copies.
  std::shared_ptr<const internal::SelectedKernel> selected_;
  Params params_;
};

// A KernelHandle or the Status explaining why there is none.
class Selection {
 public:
  Selection(KernelHandle kernel) : kernel_(std::move(kernel)) {}  // NOLINT: implicit by design
  Selection(Status status) : status_(std::move(status)) {}  // NOLINT
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  const KernelHandle& value() const { return kernel_; }
  const KernelHandle& operator*() const { return kernel_; }
  const KernelHandle* operator->() const { return &kernel_; }

 private:
  Status status_;
  KernelHandle kernel_;
};

// Validates `params` and picks the highest-priority implementation serving them on `target`, or refuses with
// INVALID_ARGUMENT (bad attributes or unknown target) or UNSUPPORTED (nothing serves them; the message lists
// what the target does support).
Selection SelectKernel(const std::string& target, const Params& params);

// Multi-level attributes (docs/multi-level.md): `params` minus its spatial_scale, which each level has its own of.
struct MultiLevelParams {
  Params params;
  std::vector<float> scales;  // level i's spatial scale; 1 to ROIALIGN_MAX_LEVELS levels
  LevelRule level_rule = LevelRule::kScale;
  float canonical_size = 224.0f;
  int32_t canonical_level = 4;
};

// One level's map (batch x channels x height x width, shared batch and channels).
struct LevelMap {
  const void* input = nullptr;
  int64_t height = 0, width = 0;
};

// One multi-level call's data. `levels`: one int32 per RoI with LevelRule::kGiven, else null.
struct MultiLevelInputs {
  const LevelMap* maps = nullptr;
  int32_t num_maps = 0;  // must equal the kernel's level count
  int64_t batch = 0, channels = 0;
  const float* rois = nullptr;
  const int64_t* batch_indices = nullptr;
  const int32_t* levels = nullptr;
  int64_t num_rois = 0;
  const double* rois_f64 = nullptr;  // kF64: the RoIs in double (rois null)
};

// A selected multi-level (feature pyramid) implementation: immutable, cheap to copy, safe to run from many threads
// at once.
class PyramidKernelHandle {
 public:
  PyramidKernelHandle() = default;
  // Validates the data (each level's shape, the given levels, every RoI on its level), then pools each RoI from
  // its level into output[k]; on error `output` is untouched.
  Status Run(const MultiLevelInputs& inputs, void* output, int32_t num_threads = 0) const;
  Status Run(const MultiLevelInputs& inputs, void* output, const roialign_threadpool& pool) const;
  const std::string& name() const { return kernel_.name(); }
  void ReleaseWorkingMemory() const noexcept { kernel_.ReleaseWorkingMemory(); }
  const MultiLevelParams& params() const { return params_; }
  bool valid() const { return kernel_.valid(); }

 private:
  friend struct KernelAccess;
  KernelHandle kernel_;  // the single-level kernel every level runs (its spatial_scale is level 0's)
  MultiLevelParams params_;
};


// A PyramidKernelHandle or the Status explaining why there is none.
struct PyramidSelection {
  Status status;
  PyramidKernelHandle kernel;
  bool ok() const { return status.ok(); }
};

// Validates the level count, the scales and the rule, then selects as SelectKernel does (built-in implementations
// only: a registered implementation is UNSUPPORTED).
PyramidSelection SelectPyramidKernel(const std::string& target, const MultiLevelParams& params);

// What a target serves (for layout planning), or why it cannot serve anything here.
struct TargetInfo {
  std::vector<Layout> layouts;
  std::vector<DType> dtypes;
  std::vector<PoolMode> pool_modes;
  std::vector<CoordinateMode> coordinate_modes;
  Layout preferred_layout = Layout::kNCHW;  // the layout of its highest-priority implementation
  int32_t preferred_block = 0;  // the blocked layout's block that matches its f32 vectors; 0: no vectors
  std::vector<RoiKind> roi_kinds;  // since 1.4
};
Status DescribeTarget(const std::string& target, TargetInfo* info);

// Every known target name: the built-in ones, then registered ones.
std::vector<std::string> TargetNames();
// Names of all implementations registered for `target` that this CPU and build can run, best first.
std::vector<std::string> ImplementationsOf(const std::string& target);

// A user implementation for a user target (e.g. an NHWC-only accelerator). It receives validated data.
struct CustomImplementation {
  std::string target;
  std::string name;
  int32_t priority = 0;
  std::vector<Layout> layouts;
  std::vector<DType> dtypes;
  std::vector<PoolMode> pool_modes;
  std::vector<CoordinateMode> coordinate_modes;
  std::function<Status(const roialign_problem&)> fn;
};
Status RegisterCustomImplementation(CustomImplementation impl);

// Layout transforms for the whole tensor (float32). On error the output is untouched.
Status NchwToNhwc(const float* input, int64_t batch, int64_t channels, int64_t height,
                               int64_t width, float* output, int32_t num_threads = 0);
Status NhwcToNchw(const float* input, int64_t batch, int64_t channels, int64_t height,
                               int64_t width, float* output, int32_t num_threads = 0);
// The same on the caller's pool.
Status NchwToNhwc(const float* input, int64_t batch, int64_t channels, int64_t height,
                               int64_t width, float* output, const roialign_threadpool& pool);
Status NhwcToNchw(const float* input, int64_t batch, int64_t channels, int64_t height,
                               int64_t width, float* output, const roialign_threadpool& pool);
// The same for tensors of any dtype (F16 and BF16 elements are moved as they are, bit for bit).
Status NchwToNhwc(DType dtype, const void* input, int64_t batch, int64_t channels, int64_t height,
                               int64_t width, void* output, int32_t num_threads = 0);
Status NhwcToNchw(DType dtype, const void* input, int64_t batch, int64_t channels, int64_t height,
                               int64_t width, void* output, int32_t num_threads = 0);
// The same on the caller's pool.
Status NchwToNhwc(DType dtype, const void* input, int64_t batch, int64_t channels, int64_t height,
                               int64_t width, void* output, const roialign_threadpool& pool);
Status NhwcToNchw(DType dtype, const void* input, int64_t batch, int64_t channels, int64_t height,
                               int64_t width, void* output, const roialign_threadpool& pool);
// Any layout to any other (roialign_transform_layout): `channels` is the logical count; blocked outputs get their
// padded lanes written 0, blocked inputs' padded lanes are never read. On error the output is untouched.
Status TransformLayout(DType dtype, Layout from, Layout to, const void* input, int64_t batch, int64_t channels,
                       int64_t height, int64_t width, void* output, int32_t num_threads = 0);
// The same on the caller's pool.
Status TransformLayout(DType dtype, Layout from, Layout to, const void* input, int64_t batch, int64_t channels,
                       int64_t height, int64_t width, void* output, const roialign_threadpool& pool);

}  // namespace roialign

#endif  // ROIALIGN_CORE_LIBRARY_H_
