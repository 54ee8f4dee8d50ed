/* Copyright 2026 The roialign Authors
 * SPDX-License-Identifier: Apache-2.0 */
// roialign C++ API (C++17): header-only, inline over the C API (roialign.h), so it adds no symbol and no C++ ABI
// to libroialign.so. RAII kernels, std::string messages; enum values are the C API's. Its names live in the inline
// namespace roialign::v1 (spelled roialign::Kernel and so on), apart from the library's internal C++ code.
#ifndef ROIALIGN_ROIALIGN_HPP_
#define ROIALIGN_ROIALIGN_HPP_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "roialign/roialign.h"

namespace roialign {
inline namespace v1 {

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

namespace detail {
inline const char* NameOr(roialign_enum_kind kind, int value) {
  const char* name = roialign_enum_name(kind, value);
  return name != nullptr ? name : "?";
}
}  // namespace detail

// The library's names ("NCHW", "AVG", "HALF_PIXEL", "F32"); "?" for unknown values.
inline const char* ToString(StatusCode code) { return detail::NameOr(ROIALIGN_ENUM_STATUS, static_cast<int>(code)); }
inline const char* ToString(Layout layout) { return detail::NameOr(ROIALIGN_ENUM_LAYOUT, static_cast<int>(layout)); }
inline const char* ToString(DType dtype) { return detail::NameOr(ROIALIGN_ENUM_DTYPE, static_cast<int>(dtype)); }
inline const char* ToString(PoolMode mode) { return detail::NameOr(ROIALIGN_ENUM_POOL_MODE, static_cast<int>(mode)); }
inline const char* ToString(CoordinateMode mode) {
  return detail::NameOr(ROIALIGN_ENUM_COORDINATE_MODE, static_cast<int>(mode));
}
inline const char* ToString(LevelRule rule) { return detail::NameOr(ROIALIGN_ENUM_LEVEL_RULE, static_cast<int>(rule)); }
inline const char* ToString(RoiKind kind) { return detail::NameOr(ROIALIGN_ENUM_ROI_KIND, static_cast<int>(kind)); }
inline const char* ToString(AngleUnit unit) { return detail::NameOr(ROIALIGN_ENUM_ANGLE_UNIT, static_cast<int>(unit)); }
inline const char* ToString(Rotation rotation) {
  return detail::NameOr(ROIALIGN_ENUM_ROTATION, static_cast<int>(rotation));
}

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

namespace detail {
// A C status as a Status, with this thread's message when it failed.
inline Status FromC(roialign_status s) {
  if (s == ROIALIGN_OK) return Status();
  return Status(static_cast<StatusCode>(s), roialign_last_error());
}
}  // namespace detail

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

// The caller's thread pool (roialign_threadpool): roialign then runs every parallel step through parallel_for and
// starts no thread of its own.
struct ThreadPool {
  roialign_parallel_for_fn parallel_for = nullptr;
  void* pool_context = nullptr;
  int32_t num_threads = 0;
};

namespace detail {
inline roialign_params ToC(const Params& p) {
  roialign_params c;
  roialign_params_init(&c);
  c.pooled_height = p.pooled_height;
  c.pooled_width = p.pooled_width;
  c.spatial_scale = p.spatial_scale;
  c.sampling_ratio = p.sampling_ratio;
  c.coordinate_mode = static_cast<roialign_coordinate_mode>(p.coordinate_mode);
  c.pool_mode = static_cast<roialign_pool_mode>(p.pool_mode);
  c.layout = static_cast<roialign_layout>(p.layout);
  c.dtype = static_cast<roialign_dtype>(p.dtype);
  if (p.backward) c.flags |= ROIALIGN_PARAMS_BACKWARD;
  c.spatial_scale_f64 = p.spatial_scale_f64;
  c.roi_kind = static_cast<roialign_roi_kind>(p.roi_kind);
  c.angle_unit = static_cast<roialign_angle_unit>(p.angle_unit);
  c.rotation = static_cast<roialign_rotation>(p.rotation);
  return c;
}

// roialign_options for roialign's threads or for `pool` (whose C form `c_pool` must outlive the call).
inline roialign_options Options(int32_t num_threads) {
  roialign_options o;
  roialign_options_init(&o);
  o.num_threads = num_threads;
  return o;
}
inline roialign_options Options(const ThreadPool& pool, roialign_threadpool* c_pool) {
  roialign_threadpool_init(c_pool);
  c_pool->parallel_for = pool.parallel_for;
  c_pool->pool_context = pool.pool_context;
  c_pool->num_threads = pool.num_threads;
  roialign_options o;
  roialign_options_init(&o);
  o.threadpool = c_pool;
  return o;
}

inline roialign_inputs ToC(const Inputs& in) {
  roialign_inputs c;
  roialign_inputs_init(&c);
  c.batch = in.batch;
  c.channels = in.channels;
  c.maps[0].data = in.input;
  c.maps[0].height = in.height;
  c.maps[0].width = in.width;
  c.rois = in.rois;
  c.batch_indices = in.batch_indices;
  c.num_rois = in.num_rois;
  c.rois_f64 = in.rois_f64;
  return c;
}

// A NUL-separated list (roialign_known_targets) as strings.
template <typename F>
std::vector<std::string> Names(F&& list) {
  size_t needed = 0;
  std::vector<std::string> out;
  if (list(nullptr, 0, &needed) != ROIALIGN_OK) return out;
  std::vector<char> buffer;
  do {  // the list may grow between the calls when another thread registers
    buffer.resize(needed);
    if (list(buffer.data(), buffer.size(), &needed) != ROIALIGN_OK) return out;
  } while (needed > buffer.size());
  for (const char* p = buffer.data(); *p != '\0'; p += out.back().size() + 1) out.emplace_back(p);
  return out;
}
}  // namespace detail

class SelectResult;

// A selected implementation: immutable, cheap to copy (copies share the C kernel), safe to run from many threads.
class Kernel {
 public:
  Kernel() = default;
  // Validates the data (docs/errors-and-limits.md), then computes; on error `output` is untouched.
  // `output` holds K*C*PH*PW elements; num_threads <= 0 uses OpenMP's default.
  Status Run(const Inputs& inputs, void* output, int32_t num_threads = 0) const {
    const roialign_inputs in = detail::ToC(inputs);
    const roialign_options options = detail::Options(num_threads);
    return detail::FromC(roialign_run(kernel_.get(), &in, output, &options));
  }
  // The same on the caller's pool; bit-identical results. A null parallel_for or num_threads < 1 is
  // INVALID_ARGUMENT (output untouched).
  Status Run(const Inputs& inputs, void* output, const ThreadPool& pool) const {
    const roialign_inputs in = detail::ToC(inputs);
    roialign_threadpool c_pool;
    const roialign_options options = detail::Options(pool, &c_pool);
    return detail::FromC(roialign_run(kernel_.get(), &in, output, &options));
  }
  // The backward (roialign_run_backward; the kernel selected with Params::backward): grad_input (dX, the map's
  // shape) from grad_output (dY, the output's), bit-identical for any thread count or pool; on error dX is untouched.
  Status RunBackward(const Inputs& inputs, const void* grad_output, void* grad_input, int32_t num_threads = 0) const {
    const roialign_inputs in = detail::ToC(inputs);
    const roialign_options options = detail::Options(num_threads);
    return detail::FromC(roialign_run_backward(kernel_.get(), &in, grad_output, grad_input, &options));
  }
  Status RunBackward(const Inputs& inputs, const void* grad_output, void* grad_input, const ThreadPool& pool) const {
    const roialign_inputs in = detail::ToC(inputs);
    roialign_threadpool c_pool;
    const roialign_options options = detail::Options(pool, &c_pool);
    return detail::FromC(roialign_run_backward(kernel_.get(), &in, grad_output, grad_input, &options));
  }
  // The implementation's name, e.g. "roi_align_nhwc.avx512".
  const std::string& name() const { return name_; }
  // Frees the working memory the kernel keeps between runs (roialign_kernel_trim); shared by copies.
  void Trim() const { roialign_kernel_trim(kernel_.get()); }
  const Params& params() const { return params_; }
  bool valid() const { return kernel_ != nullptr; }
  // The C kernel, for roialign_* calls; valid as long as this Kernel or a copy.
  const roialign_kernel* get() const { return kernel_.get(); }

 private:
  friend SelectResult Select(const std::string& target, const Params& params);
  std::shared_ptr<roialign_kernel> kernel_;
  Params params_;
  std::string name_;
};

// A Kernel or the Status explaining why there is none.
class SelectResult {
 public:
  SelectResult(Kernel kernel) : kernel_(std::move(kernel)) {}  // NOLINT: implicit by design
  SelectResult(Status status) : status_(std::move(status)) {}  // NOLINT
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  const Kernel& value() const { return kernel_; }
  const Kernel& operator*() const { return kernel_; }
  const Kernel* operator->() const { return &kernel_; }

 private:
  Status status_;
  Kernel kernel_;
};

// Validates `params` and picks the highest-priority implementation serving them on `target`, or refuses with
// INVALID_ARGUMENT (bad attributes or unknown target) or UNSUPPORTED (nothing serves them; the message lists
// what the target does support).
inline SelectResult Select(const std::string& target, const Params& params) {
  const roialign_params c = detail::ToC(params);
  roialign_kernel* raw = nullptr;
  const roialign_status s = roialign_select(target.c_str(), &c, &raw);
  if (s != ROIALIGN_OK) return detail::FromC(s);
  Kernel k;
  k.kernel_.reset(raw, roialign_kernel_free);
  k.params_ = params;
  k.name_ = roialign_kernel_name(raw);
  return k;
}

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

struct MultiLevelSelectResult;

// A selected multi-level implementation: immutable, cheap to copy, safe to run from many threads at once.
class MultiLevelKernel {
 public:
  MultiLevelKernel() = default;
  // Validates the data (each level's shape, the given levels, every RoI on its level), then pools each RoI from
  // its level into output[k]; on error `output` is untouched.
  Status Run(const MultiLevelInputs& inputs, void* output, int32_t num_threads = 0) const {
    roialign_inputs in;
    if (!ToC(inputs, &in)) return TooManyMaps(inputs);
    const roialign_options options = detail::Options(num_threads);
    return detail::FromC(roialign_multi_level_run(kernel_.get(), &in, output, &options));
  }
  Status Run(const MultiLevelInputs& inputs, void* output, const ThreadPool& pool) const {
    roialign_inputs in;
    if (!ToC(inputs, &in)) return TooManyMaps(inputs);
    roialign_threadpool c_pool;
    const roialign_options options = detail::Options(pool, &c_pool);
    return detail::FromC(roialign_multi_level_run(kernel_.get(), &in, output, &options));
  }
  // The backward (roialign_multi_level_run_backward): grad_inputs[l] is level l's dX.
  Status RunBackward(const MultiLevelInputs& inputs, const void* grad_output, void* const* grad_inputs,
                     int32_t num_threads = 0) const {
    roialign_inputs in;
    if (!ToC(inputs, &in)) return TooManyMaps(inputs);
    const roialign_options options = detail::Options(num_threads);
    return detail::FromC(roialign_multi_level_run_backward(kernel_.get(), &in, grad_output, grad_inputs, &options));
  }
  Status RunBackward(const MultiLevelInputs& inputs, const void* grad_output, void* const* grad_inputs,
                     const ThreadPool& pool) const {
    roialign_inputs in;
    if (!ToC(inputs, &in)) return TooManyMaps(inputs);
    roialign_threadpool c_pool;
    const roialign_options options = detail::Options(pool, &c_pool);
    return detail::FromC(roialign_multi_level_run_backward(kernel_.get(), &in, grad_output, grad_inputs, &options));
  }
  const std::string& name() const { return name_; }
  void Trim() const { roialign_multi_level_kernel_trim(kernel_.get()); }
  const MultiLevelParams& params() const { return params_; }
  bool valid() const { return kernel_ != nullptr; }
  const roialign_multi_level_kernel* get() const { return kernel_.get(); }

 private:
  friend MultiLevelSelectResult SelectMultiLevel(const std::string& target, const MultiLevelParams& params);
  static bool ToC(const MultiLevelInputs& inputs, roialign_inputs* c) {
    roialign_inputs_init(c);
    if (inputs.num_maps > ROIALIGN_MAX_LEVELS || (inputs.num_maps > 0 && inputs.maps == nullptr)) return false;
    c->num_maps = inputs.num_maps;
    for (int32_t l = 0; l < inputs.num_maps; ++l) {
      c->maps[l].data = inputs.maps[l].input;
      c->maps[l].height = inputs.maps[l].height;
      c->maps[l].width = inputs.maps[l].width;
    }
    c->batch = inputs.batch;
    c->channels = inputs.channels;
    c->rois = inputs.rois;
    c->batch_indices = inputs.batch_indices;
    c->levels = inputs.levels;
    c->num_rois = inputs.num_rois;
    c->rois_f64 = inputs.rois_f64;
    return true;
  }
  static Status TooManyMaps(const MultiLevelInputs& inputs) {
    return Status(StatusCode::kInvalidArgument,
                  inputs.maps == nullptr ? "maps is null"
                                         : "got " + std::to_string(inputs.num_maps) + " maps; at most " +
                                               std::to_string(ROIALIGN_MAX_LEVELS));
  }
  std::shared_ptr<roialign_multi_level_kernel> kernel_;
  MultiLevelParams params_;
  std::string name_;
};

// A MultiLevelKernel or the Status explaining why there is none.
struct MultiLevelSelectResult {
  Status status;
  MultiLevelKernel kernel;
  bool ok() const { return status.ok(); }
};

// Validates the level count, the scales and the rule, then selects as Select does (built-in implementations
// only: a registered implementation is UNSUPPORTED).
inline MultiLevelSelectResult SelectMultiLevel(const std::string& target, const MultiLevelParams& params) {
  MultiLevelSelectResult r;
  if (params.scales.empty() || params.scales.size() > ROIALIGN_MAX_LEVELS) {
    r.status = Status(StatusCode::kInvalidArgument, "the number of levels must be 1 to " +
                                                        std::to_string(ROIALIGN_MAX_LEVELS) + " (got " +
                                                        std::to_string(params.scales.size()) + ")");
    return r;
  }
  const roialign_params c = detail::ToC(params.params);
  roialign_multi_level_params levels;
  roialign_multi_level_params_init(&levels);
  levels.num_levels = static_cast<int32_t>(params.scales.size());
  for (size_t l = 0; l < params.scales.size(); ++l) levels.scales[l] = params.scales[l];
  levels.level_rule = static_cast<roialign_level_rule>(params.level_rule);
  levels.canonical_size = params.canonical_size;
  levels.canonical_level = params.canonical_level;
  roialign_multi_level_kernel* raw = nullptr;
  r.status = detail::FromC(roialign_multi_level_select(target.c_str(), &c, &levels, &raw));
  if (!r.ok()) return r;
  r.kernel.kernel_.reset(raw, roialign_multi_level_kernel_free);
  r.kernel.params_ = params;
  r.kernel.name_ = roialign_multi_level_kernel_name(raw);
  return r;
}

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

namespace detail {
template <typename Enum>
std::vector<Enum> ValuesOf(uint32_t mask) {
  std::vector<Enum> out;
  for (int i = 0; i < 32; ++i) {
    if (mask & (1u << i)) out.push_back(static_cast<Enum>(i));
  }
  return out;
}
template <typename Enum>
uint32_t MaskOf(const std::vector<Enum>& values) {
  uint32_t mask = 0;
  for (Enum v : values) {
    const int i = static_cast<int>(v);
    // A value outside [0, 32) becomes bit 31, which no enum has: registration then refuses the mask.
    mask |= 1u << (i >= 0 && i < 32 ? i : 31);
  }
  return mask;
}
}  // namespace detail

inline Status QueryTarget(const std::string& target, TargetInfo* info) {
  if (info == nullptr) return Status(StatusCode::kInvalidArgument, "info is null");
  roialign_target_info c;
  roialign_target_info_init(&c);
  const roialign_status s = roialign_query_target(target.c_str(), &c);
  if (s != ROIALIGN_OK) return detail::FromC(s);
  info->layouts = detail::ValuesOf<Layout>(c.layouts);
  info->dtypes = detail::ValuesOf<DType>(c.dtypes);
  info->pool_modes = detail::ValuesOf<PoolMode>(c.pool_modes);
  info->coordinate_modes = detail::ValuesOf<CoordinateMode>(c.coordinate_modes);
  info->preferred_layout = static_cast<Layout>(c.preferred_layout);
  info->preferred_block = c.preferred_block;
  info->roi_kinds = detail::ValuesOf<RoiKind>(c.roi_kinds);
  return Status();
}

// Every known target name: the built-in ones, then registered ones.
inline std::vector<std::string> KnownTargets() {
  return detail::Names([](char* b, size_t n, size_t* needed) { return roialign_known_targets(b, n, needed); });
}
// Names of all implementations registered for `target` that this CPU and build can run, best first.
inline std::vector<std::string> ImplementationNames(const std::string& target) {
  return detail::Names(
      [&](char* b, size_t n, size_t* needed) { return roialign_implementation_names(target.c_str(), b, n, needed); });
}

// A user implementation for a user target (e.g. an NHWC-only accelerator). It receives validated data. Its
// status reaches the caller with the C API's message ("registered implementation failed with status N").
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

inline Status Register(CustomImplementation impl) {
  using Fn = std::function<Status(const roialign_problem&)>;
  if (!impl.fn) return Status(StatusCode::kInvalidArgument, "impl->fn is null");
  // Registrations are never removed, so the function lives as long as the process once registered.
  auto fn = std::make_unique<Fn>(std::move(impl.fn));
  roialign_implementation c;
  roialign_implementation_init(&c);
  c.target = impl.target.c_str();
  c.name = impl.name.c_str();
  c.priority = impl.priority;
  c.layouts = detail::MaskOf(impl.layouts);
  c.dtypes = detail::MaskOf(impl.dtypes);
  c.pool_modes = detail::MaskOf(impl.pool_modes);
  c.coordinate_modes = detail::MaskOf(impl.coordinate_modes);
  c.fn = [](const roialign_problem* p, void* user_data) -> roialign_status {
    try {
      return static_cast<roialign_status>((*static_cast<Fn*>(user_data))(*p).code());
    } catch (...) {
      return ROIALIGN_INTERNAL;
    }
  };
  c.user_data = fn.get();
  const roialign_status s = roialign_register(&c);
  if (s == ROIALIGN_OK) fn.release();
  return detail::FromC(s);
}

namespace detail {
inline Status Transform(bool to_nhwc, DType dtype, const void* input, int64_t batch, int64_t channels,
                        int64_t height, int64_t width, void* output, const roialign_options& options) {
  const auto d = static_cast<roialign_dtype>(dtype);
  return FromC(to_nhwc ? roialign_nchw_to_nhwc(d, input, batch, channels, height, width, output, &options)
                       : roialign_nhwc_to_nchw(d, input, batch, channels, height, width, output, &options));
}
}  // namespace detail

// Layout transforms for the whole tensor of any dtype (F16 and BF16 elements are moved as they are, bit for bit).
// On error the output is untouched.
inline Status NchwToNhwc(DType dtype, const void* input, int64_t batch, int64_t channels, int64_t height,
                         int64_t width, void* output, int32_t num_threads = 0) {
  return detail::Transform(true, dtype, input, batch, channels, height, width, output, detail::Options(num_threads));
}
inline Status NhwcToNchw(DType dtype, const void* input, int64_t batch, int64_t channels, int64_t height,
                         int64_t width, void* output, int32_t num_threads = 0) {
  return detail::Transform(false, dtype, input, batch, channels, height, width, output, detail::Options(num_threads));
}
// The same on the caller's pool.
inline Status NchwToNhwc(DType dtype, const void* input, int64_t batch, int64_t channels, int64_t height,
                         int64_t width, void* output, const ThreadPool& pool) {
  roialign_threadpool c_pool;
  return detail::Transform(true, dtype, input, batch, channels, height, width, output, detail::Options(pool, &c_pool));
}
inline Status NhwcToNchw(DType dtype, const void* input, int64_t batch, int64_t channels, int64_t height,
                         int64_t width, void* output, const ThreadPool& pool) {
  roialign_threadpool c_pool;
  return detail::Transform(false, dtype, input, batch, channels, height, width, output,
                           detail::Options(pool, &c_pool));
}
// Any layout to any other (roialign_transform_layout, since 1.1): `channels` is the logical count; a blocked
// output's padded lanes are written 0, a blocked input's are never read. On error the output is untouched. (The
// NCHW <-> NHWC functions above call 1.0's entry points, so they also run on a 1.0 library.)
inline Status TransformLayout(DType dtype, Layout from, Layout to, const void* input, int64_t batch, int64_t channels,
                              int64_t height, int64_t width, void* output, int32_t num_threads = 0) {
  const roialign_options options = detail::Options(num_threads);
  return detail::FromC(roialign_transform_layout(static_cast<roialign_dtype>(dtype), static_cast<roialign_layout>(from),
                                                 static_cast<roialign_layout>(to), input, batch, channels, height,
                                                 width, output, &options));
}
// The same on the caller's pool.
inline Status TransformLayout(DType dtype, Layout from, Layout to, const void* input, int64_t batch, int64_t channels,
                              int64_t height, int64_t width, void* output, const ThreadPool& pool) {
  roialign_threadpool c_pool;
  const roialign_options options = detail::Options(pool, &c_pool);
  return detail::FromC(roialign_transform_layout(static_cast<roialign_dtype>(dtype), static_cast<roialign_layout>(from),
                                                 static_cast<roialign_layout>(to), input, batch, channels, height,
                                                 width, output, &options));
}
// float32 tensors.
inline Status NchwToNhwc(const float* input, int64_t batch, int64_t channels, int64_t height, int64_t width,
                         float* output, int32_t num_threads = 0) {
  return NchwToNhwc(DType::kF32, input, batch, channels, height, width, output, num_threads);
}
inline Status NhwcToNchw(const float* input, int64_t batch, int64_t channels, int64_t height, int64_t width,
                         float* output, int32_t num_threads = 0) {
  return NhwcToNchw(DType::kF32, input, batch, channels, height, width, output, num_threads);
}
inline Status NchwToNhwc(const float* input, int64_t batch, int64_t channels, int64_t height, int64_t width,
                         float* output, const ThreadPool& pool) {
  return NchwToNhwc(DType::kF32, input, batch, channels, height, width, output, pool);
}
inline Status NhwcToNchw(const float* input, int64_t batch, int64_t channels, int64_t height, int64_t width,
                         float* output, const ThreadPool& pool) {
  return NhwcToNchw(DType::kF32, input, batch, channels, height, width, output, pool);
}

}  // namespace v1
}  // namespace roialign

#endif  // ROIALIGN_ROIALIGN_HPP_
