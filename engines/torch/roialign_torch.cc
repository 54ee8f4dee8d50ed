// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// roialign's kernels as PyTorch operators, torch.ops.roialign.roi_align, torch.ops.roialign.multi_scale_roi_align
// and torch.ops.roialign.roi_align_rotated (docs/torch.md). Registered with the dispatcher, so that TorchScript can
// script, trace, save and load them and LibTorch programs can call them; CPU kernels on roialign's C API, run on
// torch's intra-op threads; Meta kernels for shapes without data; and the backward ops roialign::roi_align_backward,
// roialign::multi_scale_roi_align_backward and roialign::roi_align_rotated_backward, which the Autograd kernels
// (torch::autograd::Function) call.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/library.h>
#include <torch/version.h>

#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "result_pool.h"
#include "roialign/roialign.h"

// The LibTorch release these operators were compiled against, in the file's data where a reader finds it without
// loading the library: roialign._torch_ops compares it with the running torch first, since a library built for
// another release either fails to resolve its symbols or loads that release's LibTorch beside the running one.
extern "C" __attribute__((visibility("default"), used)) const char roialign_torch_built_with[] =
    "roialign-torch-built-with-libtorch " TORCH_VERSION;

namespace {

// ---- Attributes ----

// The value of the enum `kind` that `name` names in any case ("nhwc", "NHWC"), or an error that lists the names. The
// names are the library's own (roialign_enum_name), never a copy.
int ParseName(c10::string_view name, roialign_enum_kind kind, const char* what) {
  std::string upper(name.data(), name.size());
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  const int32_t value = roialign_enum_parse(kind, upper.c_str());
  if (value >= 0) return value;
  std::string known;
  for (int32_t v = 0; const char* n = roialign_enum_name(kind, v); ++v) {
    known += (known.empty() ? "" : ", ") + std::string(n);
  }
  TORCH_CHECK(false, "roialign: unknown ", what, " '", std::string(name.data(), name.size()), "' (one of ", known, ")");
}

roialign_dtype DTypeOf(const at::Tensor& t, const char* what) {
  switch (t.scalar_type()) {
    case at::kFloat: return ROIALIGN_DTYPE_F32;
    case at::kHalf: return ROIALIGN_DTYPE_F16;
    case at::kBFloat16: return ROIALIGN_DTYPE_BF16;
    case at::kDouble: return ROIALIGN_DTYPE_F64;
    default: break;
  }
  TORCH_CHECK(false, "roialign: ", what, " has dtype ", t.scalar_type(),
              "; roialign pools float32, float16, bfloat16 and float64");
}

// torchvision's `aligned` picks the coordinate mode; an explicit coordinate_mode must agree with it.
roialign_coordinate_mode CoordinateModeOf(bool aligned, const c10::optional<c10::string_view>& coordinate_mode) {
  if (!coordinate_mode.has_value()) return aligned ? ROIALIGN_COORD_HALF_PIXEL : ROIALIGN_COORD_LEGACY;
  const auto mode = static_cast<roialign_coordinate_mode>(
      ParseName(*coordinate_mode, ROIALIGN_ENUM_COORDINATE_MODE, "coordinate_mode"));
  TORCH_CHECK(!(aligned && mode == ROIALIGN_COORD_LEGACY),
              "roialign: aligned=True contradicts coordinate_mode='LEGACY' (aligned=False is LEGACY)");
  return mode;
}

// What a RoI is: an axis-aligned box (roi_align), or a rotated one with its angle's unit and direction
// (roi_align_rotated; docs/semantics.md#rotated-rois). The two ops are one path that differs only in this.
struct Geometry {
  roialign_roi_kind kind = ROIALIGN_ROI_AXIS_ALIGNED;
  roialign_angle_unit angle_unit = ROIALIGN_ANGLE_RADIANS;
  roialign_rotation rotation = ROIALIGN_ROTATION_COUNTER_CLOCKWISE;
  int64_t columns() const { return kind == ROIALIGN_ROI_ROTATED ? 6 : 5; }  // of a rois row, with its batch index
};

Geometry RotatedGeometry(c10::string_view angle_unit, bool clockwise) {
  Geometry g;
  g.kind = ROIALIGN_ROI_ROTATED;
  g.angle_unit = static_cast<roialign_angle_unit>(ParseName(angle_unit, ROIALIGN_ENUM_ANGLE_UNIT, "angle_unit"));
  g.rotation = clockwise ? ROIALIGN_ROTATION_CLOCKWISE : ROIALIGN_ROTATION_COUNTER_CLOCKWISE;
  return g;
}

roialign_params ParamsOf(roialign_dtype dtype, double spatial_scale, int64_t pooled_height, int64_t pooled_width,
                         int64_t sampling_ratio, bool aligned, c10::string_view layout, c10::string_view pool_mode,
                         const c10::optional<c10::string_view>& coordinate_mode, const Geometry& geometry = {}) {
  TORCH_CHECK(sampling_ratio >= INT32_MIN && sampling_ratio <= INT32_MAX, "roialign: sampling_ratio ", sampling_ratio,
              " does not fit int32");
  roialign_params p;
  std::memset(&p, 0, sizeof(p));
  roialign_params_init(&p);
  p.pooled_height = pooled_height;
  p.pooled_width = pooled_width;
  p.spatial_scale = static_cast<float>(spatial_scale);
  // A float64 kernel computes with the scale in double, as the schema's `float` holds it; the float copy above is
  // what the library validates for every dtype.
  if (dtype == ROIALIGN_DTYPE_F64) p.spatial_scale_f64 = spatial_scale;
  p.sampling_ratio = static_cast<int32_t>(sampling_ratio);
  p.coordinate_mode = CoordinateModeOf(aligned, coordinate_mode);
  p.pool_mode = static_cast<roialign_pool_mode>(ParseName(pool_mode, ROIALIGN_ENUM_POOL_MODE, "pool_mode"));
  p.layout = static_cast<roialign_layout>(ParseName(layout, ROIALIGN_ENUM_LAYOUT, "layout"));
  p.dtype = dtype;
  p.roi_kind = geometry.kind;
  p.angle_unit = geometry.angle_unit;
  p.rotation = geometry.rotation;
  return p;
}

// ---- Kernels, selected once per attribute set ----

struct KernelFree {
  void operator()(roialign_kernel* k) const { roialign_kernel_free(k); }
  void operator()(roialign_multi_level_kernel* k) const { roialign_multi_level_kernel_free(k); }
};

template <typename Params>
std::string KeyOf(const Params& p) {
  return std::string(reinterpret_cast<const char*>(&p), sizeof(p));  // structs memset to 0 first: no stray padding
}

// The kernel `select` gives for `p`, selected on the first call with these attributes and kept for the process.
template <typename Kernel, typename Params>
const Kernel& CachedKernel(const Params& p, roialign_status (*select)(const char*, const Params*, Kernel**)) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Kernel, KernelFree>> kernels;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = kernels[KeyOf(p)];
  if (!slot) {
    Kernel* k = nullptr;
    const roialign_status s = select("host", &p, &k);
    TORCH_CHECK(s == ROIALIGN_OK, "roialign: ", roialign_last_error());
    slot.reset(k);
  }
  return *slot;
}

// ---- Torch's intra-op threads as roialign's pool: torch.set_num_threads is obeyed ----

void TorchParallelFor(void* /*pool_context*/, int64_t count, roialign_task_fn task, void* task_context) {
  at::parallel_for(0, count, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) task(task_context, i);
  });
}

roialign_threadpool TorchPool() {
  roialign_threadpool pool;
  roialign_threadpool_init(&pool);
  pool.parallel_for = &TorchParallelFor;
  pool.pool_context = nullptr;
  pool.num_threads = static_cast<int32_t>(std::max(1, at::get_num_threads()));
  return pool;
}

// ---- Shapes and memory ----

bool IsNhwc(c10::string_view layout) {
  const int value = ParseName(layout, ROIALIGN_ENUM_LAYOUT, "layout");
  TORCH_CHECK(value == ROIALIGN_LAYOUT_NCHW || value == ROIALIGN_LAYOUT_NHWC, "roialign: layout '",
              std::string(layout.data(), layout.size()),
              "': the torch ops take NCHW and NHWC tensors (the blocked layouts are in the C and C++ API)");
  return value == ROIALIGN_LAYOUT_NHWC;
}

c10::MemoryFormat FormatOf(c10::string_view layout) {
  return IsNhwc(layout) ? c10::MemoryFormat::ChannelsLast : c10::MemoryFormat::Contiguous;
}

// A map as the kernel reads it: [N, C, H, W] indexed, dense in the layout's memory order (channels_last for NHWC).
at::Tensor DenseMap(const at::Tensor& t, c10::string_view layout, const char* what) {
  TORCH_CHECK(t.dim() == 4, "roialign: ", what, " must be a 4-D [N, C, H, W] tensor (for either layout); got shape ",
              t.sizes());
  TORCH_CHECK(t.device().is_cpu(), "roialign: ", what, " is on ", t.device(), "; roialign runs on the CPU");
  return t.contiguous(FormatOf(layout));
}

const char* RowsOf(const Geometry& geometry) {
  return geometry.kind == ROIALIGN_ROI_ROTATED ? "[K, 6] (batch_index, cx, cy, w, h, angle)"
                                               : "[K, 5] (batch_index, x1, y1, x2, y2)";
}

// RoIs as [K, 5] rows (batch_index, x1, y1, x2, y2), as torchvision takes them, or [K, 6] rows (batch_index, cx, cy,
// w, h, angle) of rotated boxes: float32, or float64 for a float64 kernel (which reads them in double).
at::Tensor DenseRois(const at::Tensor& rois, roialign_dtype dtype, const Geometry& geometry) {
  TORCH_CHECK(rois.dim() == 2 && rois.size(1) == geometry.columns(), "roialign: rois must be ", RowsOf(geometry),
              "; got shape ", rois.sizes());
  TORCH_CHECK(rois.device().is_cpu(), "roialign: rois are on ", rois.device(), "; roialign runs on the CPU");
  TORCH_CHECK(at::isFloatingType(rois.scalar_type()), "roialign: rois must be floating point; got ",
              rois.scalar_type());
  return rois.to(dtype == ROIALIGN_DTYPE_F64 ? at::kDouble : at::kFloat).contiguous();
}

// A result of the call's shape, layout and dtype (result_pool.h: large ones reuse the blocks of dead results).
at::Tensor EmptyResult(const at::Tensor& like, int64_t k, int64_t c, int64_t ph, int64_t pw, c10::string_view layout) {
  return roialign_torch::NewResult({k, c, ph, pw}, like.options(), FormatOf(layout));
}

// ---- The levels of multi_scale_roi_align ----

// What a multi-level selection takes: the attributes and the levels.
struct MultiLevelRequest {
  roialign_params params;
  roialign_multi_level_params levels;
};

roialign_status SelectMultiLevel(const char* target, const MultiLevelRequest* r, roialign_multi_level_kernel** k) {
  return roialign_multi_level_select(target, &r->params, &r->levels, k);
}

MultiLevelRequest MultiLevelParamsOf(const at::TensorList& features, at::ArrayRef<double> scales,
                                     int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio,
                                     bool aligned, c10::string_view level_rule, double canonical_size,
                                     int64_t canonical_level, c10::string_view layout) {
  TORCH_CHECK(!features.empty(), "roialign: features is empty; give one map per level");
  TORCH_CHECK(features.size() == scales.size(), "roialign: ", features.size(), " feature maps but ", scales.size(),
              " scales; give one scale per map");
  TORCH_CHECK(scales.size() <= ROIALIGN_MAX_LEVELS, "roialign: ", scales.size(), " levels; at most ",
              ROIALIGN_MAX_LEVELS);
  MultiLevelRequest r;
  std::memset(&r, 0, sizeof(r));
  r.params = ParamsOf(DTypeOf(features[0], "features[0]"), 1.0, pooled_height, pooled_width, sampling_ratio, aligned,
                      layout, "AVG", c10::nullopt);
  r.params.spatial_scale_f64 = 0.0;  // each level has its own scale (float32, as torchvision's powers of two are)
  roialign_multi_level_params& mp = r.levels;
  roialign_multi_level_params_init(&mp);
  mp.num_levels = static_cast<int32_t>(scales.size());
  for (size_t l = 0; l < scales.size(); ++l) mp.scales[l] = static_cast<float>(scales[l]);
  mp.level_rule = static_cast<roialign_level_rule>(ParseName(level_rule, ROIALIGN_ENUM_LEVEL_RULE, "level_rule"));
  TORCH_CHECK(mp.level_rule != ROIALIGN_LEVEL_RULE_GIVEN,
              "roialign: level_rule GIVEN needs per-RoI levels, which this op does not take; use SCALE or OPENVINO");
  mp.canonical_size = static_cast<float>(canonical_size);
  TORCH_CHECK(canonical_level >= INT32_MIN && canonical_level <= INT32_MAX, "roialign: canonical_level out of range");
  mp.canonical_level = static_cast<int32_t>(canonical_level);
  return r;
}

// ---- One call path: roi_align and roi_align_rotated are the one-map case of multi_scale_roi_align ----

// One call's data as the kernel reads it: one map per level and, for multi_scale_roi_align, the levels. A call
// without levels is a single-level call (roi_align, roi_align_rotated) and selects with roialign_select, whose
// kernels keep what one level has and the levels do not: the scale in double, the MAX modes, rotated boxes and
// registered implementations. The dense tensors live as long as the call.
struct Call {
  std::vector<at::Tensor> maps;
  at::Tensor boxes;
  MultiLevelRequest request;  // request.levels is read only when has_levels
  bool has_levels = false;
  roialign_inputs inputs;
};

// Densifies the maps ("input" when there is one without levels, else "features[l]") and points the inputs at them.
// Every level has the first's dtype, batch and channels.
void SetMaps(at::TensorList features, c10::string_view layout, Call* call) {
  std::vector<at::Tensor>& maps = call->maps;
  roialign_inputs& in = call->inputs;
  for (size_t l = 0; l < features.size(); ++l) {
    const std::string what = call->has_levels ? "features[" + std::to_string(l) + "]" : "input";
    maps.push_back(DenseMap(features[l], layout, what.c_str()));
    TORCH_CHECK(maps[l].scalar_type() == maps[0].scalar_type(), "roialign: ", what, " has dtype ",
                maps[l].scalar_type(), ", features[0] has ", maps[0].scalar_type(), "; all levels share one dtype");
    TORCH_CHECK(maps[l].size(0) == maps[0].size(0) && maps[l].size(1) == maps[0].size(1), "roialign: ", what,
                " has shape ", maps[l].sizes(), "; every level has features[0]'s batch and channels (",
                maps[0].size(0), ", ", maps[0].size(1), ")");
    in.maps[l] = {maps[l].data_ptr(), maps[l].size(2), maps[l].size(3), {0, 0, 0, 0}};
  }
  in.num_maps = static_cast<int32_t>(features.size());
  in.batch = maps[0].size(0);
  in.channels = maps[0].size(1);
}

// Densifies the RoIs for the call's dtype and points the inputs at them: rois_f64 for a float64 kernel, rois for
// every other.
void SetRois(const at::Tensor& rois, const Geometry& geometry, Call* call) {
  const roialign_dtype dtype = call->request.params.dtype;
  call->boxes = DenseRois(rois, dtype, geometry);
  if (dtype == ROIALIGN_DTYPE_F64) {
    call->inputs.rois_f64 = call->boxes.data_ptr<double>();
  } else {
    call->inputs.rois = call->boxes.data_ptr<float>();
  }
  call->inputs.num_rois = call->boxes.size(0);
}

// roi_align's and roi_align_rotated's call: one map, no levels.
Call SingleLevelCallOf(const at::Tensor& input, const at::Tensor& rois, double spatial_scale, int64_t pooled_height,
                       int64_t pooled_width, int64_t sampling_ratio, bool aligned, c10::string_view layout,
                       c10::string_view pool_mode, const c10::optional<c10::string_view>& coordinate_mode,
                       const Geometry& geometry) {
  Call call;
  std::memset(&call.request, 0, sizeof(call.request));
  roialign_inputs_init(&call.inputs);
  SetMaps(input, layout, &call);
  call.request.params = ParamsOf(DTypeOf(call.maps[0], "input"), spatial_scale, pooled_height, pooled_width,
                                 sampling_ratio, aligned, layout, pool_mode, coordinate_mode, geometry);
  SetRois(rois, geometry, &call);
  return call;
}

// multi_scale_roi_align's call: one map per level, and the levels.
Call MultiLevelCallOf(at::TensorList features, const at::Tensor& rois, at::ArrayRef<double> scales,
                      int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio, bool aligned,
                      c10::string_view level_rule, double canonical_size, int64_t canonical_level,
                      c10::string_view layout) {
  Call call;
  call.request = MultiLevelParamsOf(features, scales, pooled_height, pooled_width, sampling_ratio, aligned, level_rule,
                                    canonical_size, canonical_level, layout);
  call.has_levels = true;
  roialign_inputs_init(&call.inputs);
  SetMaps(features, layout, &call);
  SetRois(rois, Geometry(), &call);
  return call;
}

// The backward params: the forward's, for a kernel that also runs the backward.
template <typename Params>
Params WithBackward(Params p) {
  p.flags |= ROIALIGN_PARAMS_BACKWARD;
  return p;
}

// The call's kernel, selected once per attribute set: exactly one of the two is set.
struct CallKernel {
  const roialign_kernel* single_level = nullptr;
  const roialign_multi_level_kernel* multi_level = nullptr;
};

CallKernel KernelOf(const Call& call, bool backward) {
  CallKernel k;
  if (call.has_levels) {
    MultiLevelRequest r = call.request;
    if (backward) r.params = WithBackward(r.params);
    k.multi_level = &CachedKernel(r, &SelectMultiLevel);
  } else {
    const roialign_params p = backward ? WithBackward(call.request.params) : call.request.params;
    k.single_level = &CachedKernel(p, &roialign_select);
  }
  return k;
}

// The forward of every op: the result [K, C, PH, PW] in the layout's memory order.
at::Tensor Pool(const Call& call, int64_t pooled_height, int64_t pooled_width, c10::string_view layout) {
  const CallKernel kernel = KernelOf(call, /*backward=*/false);
  at::Tensor out =
      EmptyResult(call.maps[0], call.boxes.size(0), call.maps[0].size(1), pooled_height, pooled_width, layout);
  const roialign_threadpool pool = TorchPool();
  roialign_options options;
  roialign_options_init(&options);
  options.threadpool = &pool;
  const roialign_status s =
      kernel.multi_level ? roialign_multi_level_run(kernel.multi_level, &call.inputs, out.data_ptr(), &options)
                         : roialign_run(kernel.single_level, &call.inputs, out.data_ptr(), &options);
  TORCH_CHECK(s == ROIALIGN_OK, "roialign: ", roialign_last_error());
  return out;
}

// dY as the backward kernel reads it: the forward's result shape [K, C, PH, PW] and the map's dtype, dense in the
// layout's memory order. Autograd hands over gradients of any strides (an expanded one from .sum()).
at::Tensor DenseGrad(const at::Tensor& grad, const at::Tensor& map, int64_t k, int64_t pooled_height,
                     int64_t pooled_width, c10::string_view layout) {
  TORCH_CHECK(grad.device().is_cpu(), "roialign: grad is on ", grad.device(), "; roialign runs on the CPU");
  TORCH_CHECK(grad.dim() == 4 && grad.size(0) == k && grad.size(1) == map.size(1) && grad.size(2) == pooled_height &&
                  grad.size(3) == pooled_width,
              "roialign: grad has shape ", grad.sizes(), "; the forward's result is [", k, ", ", map.size(1), ", ",
              pooled_height, ", ", pooled_width, "]");
  TORCH_CHECK(grad.scalar_type() == map.scalar_type(), "roialign: grad has dtype ", grad.scalar_type(),
              ", the map ", map.scalar_type(), "; the gradient has the forward result's dtype");
  return grad.contiguous(FormatOf(layout));
}

// A gradient of a map: its shape and dtype, dense in the layout's memory order. The kernel writes every element.
at::Tensor EmptyGradOf(const at::Tensor& map, c10::string_view layout) {
  return at::empty(map.sizes(), map.options(), FormatOf(layout));
}

// The backward of every op: the gradient of each map from `grad`, the gradient of the result.
std::vector<at::Tensor> PoolBackward(const Call& call, const at::Tensor& grad, int64_t pooled_height,
                                     int64_t pooled_width, c10::string_view layout) {
  const at::Tensor dy = DenseGrad(grad, call.maps[0], call.boxes.size(0), pooled_height, pooled_width, layout);
  const CallKernel kernel = KernelOf(call, /*backward=*/true);
  std::vector<at::Tensor> dx;
  std::vector<void*> dx_data;
  for (const at::Tensor& map : call.maps) {
    dx.push_back(EmptyGradOf(map, layout));
    dx_data.push_back(dx.back().data_ptr());
  }
  const roialign_threadpool pool = TorchPool();
  roialign_options options;
  roialign_options_init(&options);
  options.threadpool = &pool;
  const roialign_status s =
      kernel.multi_level
          ? roialign_multi_level_run_backward(kernel.multi_level, &call.inputs, dy.data_ptr(), dx_data.data(),
                                              &options)
          : roialign_run_backward(kernel.single_level, &call.inputs, dy.data_ptr(), dx_data[0], &options);
  TORCH_CHECK(s == ROIALIGN_OK, "roialign: ", roialign_last_error());
  return dx;
}

// ---- The ops' CPU kernels ----

at::Tensor RoiAlignCpu(const at::Tensor& input, const at::Tensor& rois, double spatial_scale, int64_t pooled_height,
                       int64_t pooled_width, int64_t sampling_ratio, bool aligned, c10::string_view layout,
                       c10::string_view pool_mode, c10::optional<c10::string_view> coordinate_mode) {
  return Pool(SingleLevelCallOf(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned,
                                layout, pool_mode, coordinate_mode, Geometry()),
              pooled_height, pooled_width, layout);
}

at::Tensor RoiAlignRotatedCpu(const at::Tensor& input, const at::Tensor& rois, double spatial_scale,
                              int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio, bool aligned,
                              bool clockwise, c10::string_view angle_unit, c10::string_view layout,
                              c10::string_view pool_mode) {
  return Pool(SingleLevelCallOf(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned,
                                layout, pool_mode, c10::nullopt, RotatedGeometry(angle_unit, clockwise)),
              pooled_height, pooled_width, layout);
}

at::Tensor MultiScaleRoiAlignCpu(at::TensorList features, const at::Tensor& rois, at::ArrayRef<double> scales,
                                 int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio, bool aligned,
                                 c10::string_view level_rule, double canonical_size, int64_t canonical_level,
                                 c10::string_view layout) {
  return Pool(MultiLevelCallOf(features, rois, scales, pooled_height, pooled_width, sampling_ratio, aligned,
                               level_rule, canonical_size, canonical_level, layout),
              pooled_height, pooled_width, layout);
}

at::Tensor RoiAlignBackwardCpu(const at::Tensor& grad, const at::Tensor& input, const at::Tensor& rois,
                               double spatial_scale, int64_t pooled_height, int64_t pooled_width,
                               int64_t sampling_ratio, bool aligned, c10::string_view layout,
                               c10::string_view pool_mode, c10::optional<c10::string_view> coordinate_mode) {
  const Call call = SingleLevelCallOf(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio,
                                      aligned, layout, pool_mode, coordinate_mode, Geometry());
  return PoolBackward(call, grad, pooled_height, pooled_width, layout)[0];
}

at::Tensor RoiAlignRotatedBackwardCpu(const at::Tensor& grad, const at::Tensor& input, const at::Tensor& rois,
                                      double spatial_scale, int64_t pooled_height, int64_t pooled_width,
                                      int64_t sampling_ratio, bool aligned, bool clockwise,
                                      c10::string_view angle_unit, c10::string_view layout,
                                      c10::string_view pool_mode) {
  const Call call = SingleLevelCallOf(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio,
                                      aligned, layout, pool_mode, c10::nullopt, RotatedGeometry(angle_unit, clockwise));
  return PoolBackward(call, grad, pooled_height, pooled_width, layout)[0];
}

std::vector<at::Tensor> MultiScaleRoiAlignBackwardCpu(const at::Tensor& grad, at::TensorList features,
                                                      const at::Tensor& rois, at::ArrayRef<double> scales,
                                                      int64_t pooled_height, int64_t pooled_width,
                                                      int64_t sampling_ratio, bool aligned,
                                                      c10::string_view level_rule, double canonical_size,
                                                      int64_t canonical_level, c10::string_view layout) {
  const Call call = MultiLevelCallOf(features, rois, scales, pooled_height, pooled_width, sampling_ratio, aligned,
                                     level_rule, canonical_size, canonical_level, layout);
  return PoolBackward(call, grad, pooled_height, pooled_width, layout);
}

// ---- Meta kernels ----
// A result's shape without data, in symbolic sizes where the inputs have them: the Meta kernels serve torch's fake
// tensors, so torch.compile and torch.export trace the ops with dynamic RoI counts and map sizes.
at::Tensor EmptyMetaResult(const at::Tensor& like, const c10::SymInt& k, const c10::SymInt& c, int64_t ph,
                           int64_t pw, c10::string_view layout) {
  const std::vector<c10::SymInt> sizes = {k, c, c10::SymInt(ph), c10::SymInt(pw)};
  return at::empty_symint(sizes, like.options(), FormatOf(layout));
}

at::Tensor PoolMeta(const at::Tensor& input, const at::Tensor& rois, int64_t pooled_height, int64_t pooled_width,
                    c10::string_view layout, const Geometry& geometry) {
  TORCH_CHECK(input.dim() == 4, "roialign: input must be a 4-D [N, C, H, W] tensor; got shape ", input.sym_sizes());
  TORCH_CHECK(rois.dim() == 2 && rois.sym_size(1) == geometry.columns(), "roialign: rois must be ", RowsOf(geometry),
              "; got shape ", rois.sym_sizes());
  DTypeOf(input, "input");
  return EmptyMetaResult(input, rois.sym_size(0), input.sym_size(1), pooled_height, pooled_width, layout);
}

at::Tensor RoiAlignMeta(const at::Tensor& input, const at::Tensor& rois, double /*spatial_scale*/,
                        int64_t pooled_height, int64_t pooled_width, int64_t /*sampling_ratio*/, bool /*aligned*/,
                        c10::string_view layout, c10::string_view /*pool_mode*/,
                        c10::optional<c10::string_view> /*coordinate_mode*/) {
  return PoolMeta(input, rois, pooled_height, pooled_width, layout, Geometry());
}

at::Tensor RoiAlignRotatedMeta(const at::Tensor& input, const at::Tensor& rois, double /*spatial_scale*/,
                               int64_t pooled_height, int64_t pooled_width, int64_t /*sampling_ratio*/,
                               bool /*aligned*/, bool clockwise, c10::string_view angle_unit, c10::string_view layout,
                               c10::string_view /*pool_mode*/) {
  return PoolMeta(input, rois, pooled_height, pooled_width, layout, RotatedGeometry(angle_unit, clockwise));
}

// dX's shape without data: the map's, in the layout's memory format.
at::Tensor EmptyMetaGrad(const at::Tensor& map, c10::string_view layout) {
  return at::empty_symint(map.sym_sizes(), map.options(), FormatOf(layout));
}

at::Tensor RoiAlignBackwardMeta(const at::Tensor& grad, const at::Tensor& input, const at::Tensor& rois,
                                double spatial_scale, int64_t pooled_height, int64_t pooled_width,
                                int64_t sampling_ratio, bool aligned, c10::string_view layout,
                                c10::string_view pool_mode, c10::optional<c10::string_view> coordinate_mode) {
  RoiAlignMeta(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned, layout, pool_mode,
               coordinate_mode);
  TORCH_CHECK(grad.dim() == 4, "roialign: grad must be 4-D [K, C, PH, PW]; got shape ", grad.sym_sizes());
  TORCH_CHECK(grad.scalar_type() == input.scalar_type(), "roialign: grad has dtype ", grad.scalar_type(),
              ", the map ", input.scalar_type(), "; the gradient has the forward result's dtype");
  return EmptyMetaGrad(input, layout);
}

at::Tensor RoiAlignRotatedBackwardMeta(const at::Tensor& grad, const at::Tensor& input, const at::Tensor& rois,
                                       double spatial_scale, int64_t pooled_height, int64_t pooled_width,
                                       int64_t sampling_ratio, bool aligned, bool clockwise,
                                       c10::string_view angle_unit, c10::string_view layout,
                                       c10::string_view pool_mode) {
  RoiAlignRotatedMeta(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned, clockwise,
                      angle_unit, layout, pool_mode);
  TORCH_CHECK(grad.dim() == 4, "roialign: grad must be 4-D [K, C, PH, PW]; got shape ", grad.sym_sizes());
  TORCH_CHECK(grad.scalar_type() == input.scalar_type(), "roialign: grad has dtype ", grad.scalar_type(),
              ", the map ", input.scalar_type(), "; the gradient has the forward result's dtype");
  return EmptyMetaGrad(input, layout);
}

at::Tensor MultiScaleRoiAlignMeta(at::TensorList features, const at::Tensor& rois, at::ArrayRef<double> scales,
                                  int64_t pooled_height, int64_t pooled_width, int64_t /*sampling_ratio*/,
                                  bool /*aligned*/, c10::string_view /*level_rule*/, double /*canonical_size*/,
                                  int64_t /*canonical_level*/, c10::string_view layout) {
  TORCH_CHECK(!features.empty() && features.size() == scales.size(),
              "roialign: give one feature map per scale (got ", features.size(), " maps, ", scales.size(), " scales)");
  TORCH_CHECK(features[0].dim() == 4, "roialign: features[0] must be 4-D [N, C, H, W]; got ",
              features[0].sym_sizes());
  TORCH_CHECK(rois.dim() == 2 && rois.sym_size(1) == 5, "roialign: rois must be [K, 5]; got shape ",
              rois.sym_sizes());
  DTypeOf(features[0], "features[0]");
  return EmptyMetaResult(features[0], rois.sym_size(0), features[0].sym_size(1), pooled_height, pooled_width,
                         layout);
}

std::vector<at::Tensor> MultiScaleRoiAlignBackwardMeta(const at::Tensor& grad, at::TensorList features,
                                                       const at::Tensor& rois, at::ArrayRef<double> scales,
                                                       int64_t pooled_height, int64_t pooled_width,
                                                       int64_t sampling_ratio, bool aligned,
                                                       c10::string_view level_rule, double canonical_size,
                                                       int64_t canonical_level, c10::string_view layout) {
  MultiScaleRoiAlignMeta(features, rois, scales, pooled_height, pooled_width, sampling_ratio, aligned, level_rule,
                         canonical_size, canonical_level, layout);
  TORCH_CHECK(grad.dim() == 4, "roialign: grad must be 4-D [K, C, PH, PW]; got shape ", grad.sym_sizes());
  std::vector<at::Tensor> dx;
  for (const at::Tensor& f : features) {
    TORCH_CHECK(f.dim() == 4, "roialign: every level must be 4-D [N, C, H, W]; got ", f.sym_sizes());
    dx.push_back(EmptyMetaGrad(f, layout));
  }
  return dx;
}

// ---- Autograd ----
// The forward saves the maps and the RoIs (the MAX modes find each bin's argmax in the map again; AVG reads the map's
// shape); the RoIs get no gradient, as in torchvision. The backward calls the backward op through the dispatcher,
// whose own Autograd kernel refuses a double backward, as torchvision's does.

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The call's string attributes, kept for the backward ("" for an absent coordinate_mode: no mode is named "").
std::string Saved(c10::string_view s) { return std::string(s.data(), s.size()); }
c10::optional<c10::string_view> OptionalView(const std::string& s) {
  return s.empty() ? c10::nullopt : c10::optional<c10::string_view>(s);
}

[[noreturn]] void RefuseDoubleBackward(const char* op) {
  TORCH_CHECK(false, "roialign: double backwards on ", op,
              " not supported: its backward has no backward (create_graph=True, or torch.autograd.grad of a gradient)");
}

const auto& RoiAlignOp() {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("roialign::roi_align", "")
                             .typed<decltype(RoiAlignCpu)>();
  return op;
}

const auto& RoiAlignBackwardOp() {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("roialign::roi_align_backward", "")
                             .typed<decltype(RoiAlignBackwardCpu)>();
  return op;
}

const auto& RoiAlignRotatedOp() {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("roialign::roi_align_rotated", "")
                             .typed<decltype(RoiAlignRotatedCpu)>();
  return op;
}

const auto& RoiAlignRotatedBackwardOp() {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("roialign::roi_align_rotated_backward", "")
                             .typed<decltype(RoiAlignRotatedBackwardCpu)>();
  return op;
}

const auto& MultiScaleRoiAlignOp() {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("roialign::multi_scale_roi_align", "")
                             .typed<decltype(MultiScaleRoiAlignCpu)>();
  return op;
}

const auto& MultiScaleRoiAlignBackwardOp() {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("roialign::multi_scale_roi_align_backward", "")
                             .typed<decltype(MultiScaleRoiAlignBackwardCpu)>();
  return op;
}

// The attributes of one single-level call, roi_align's or roi_align_rotated's, as its backward needs them. The two
// ops differ in their boxes only: `rotated`, then `angle_unit` and `clockwise`; `coordinate_mode` is roi_align's
// ("" when absent: no mode is named "").
struct PoolAttributes {
  double spatial_scale = 1.0;
  int64_t pooled_height = 0, pooled_width = 0, sampling_ratio = 0;
  bool aligned = false;
  std::string layout, pool_mode, coordinate_mode;
  bool rotated = false;
  std::string angle_unit;
  bool clockwise = false;
};

const char* OpName(const PoolAttributes& a) {
  return a.rotated ? "roialign::roi_align_rotated" : "roialign::roi_align";
}

at::Tensor CallPool(const at::Tensor& input, const at::Tensor& rois, const PoolAttributes& a) {
  if (a.rotated) {
    return RoiAlignRotatedOp().call(input, rois, a.spatial_scale, a.pooled_height, a.pooled_width, a.sampling_ratio,
                                    a.aligned, a.clockwise, a.angle_unit, a.layout, a.pool_mode);
  }
  return RoiAlignOp().call(input, rois, a.spatial_scale, a.pooled_height, a.pooled_width, a.sampling_ratio, a.aligned,
                           a.layout, a.pool_mode, OptionalView(a.coordinate_mode));
}

at::Tensor CallPoolBackward(const at::Tensor& grad, const at::Tensor& input, const at::Tensor& rois,
                            const PoolAttributes& a) {
  if (a.rotated) {
    return RoiAlignRotatedBackwardOp().call(grad, input, rois, a.spatial_scale, a.pooled_height, a.pooled_width,
                                            a.sampling_ratio, a.aligned, a.clockwise, a.angle_unit, a.layout,
                                            a.pool_mode);
  }
  return RoiAlignBackwardOp().call(grad, input, rois, a.spatial_scale, a.pooled_height, a.pooled_width,
                                   a.sampling_ratio, a.aligned, a.layout, a.pool_mode, OptionalView(a.coordinate_mode));
}

void SaveAttributes(AutogradContext* ctx, const PoolAttributes& a) {
  ctx->saved_data["spatial_scale"] = a.spatial_scale;
  ctx->saved_data["pooled_height"] = a.pooled_height;
  ctx->saved_data["pooled_width"] = a.pooled_width;
  ctx->saved_data["sampling_ratio"] = a.sampling_ratio;
  ctx->saved_data["aligned"] = a.aligned;
  ctx->saved_data["layout"] = a.layout;
  ctx->saved_data["pool_mode"] = a.pool_mode;
  ctx->saved_data["coordinate_mode"] = a.coordinate_mode;
  ctx->saved_data["rotated"] = a.rotated;
  ctx->saved_data["angle_unit"] = a.angle_unit;
  ctx->saved_data["clockwise"] = a.clockwise;
}

PoolAttributes SavedAttributes(AutogradContext* ctx) {
  PoolAttributes a;
  a.spatial_scale = ctx->saved_data["spatial_scale"].toDouble();
  a.pooled_height = ctx->saved_data["pooled_height"].toInt();
  a.pooled_width = ctx->saved_data["pooled_width"].toInt();
  a.sampling_ratio = ctx->saved_data["sampling_ratio"].toInt();
  a.aligned = ctx->saved_data["aligned"].toBool();
  a.layout = ctx->saved_data["layout"].toStringRef();
  a.pool_mode = ctx->saved_data["pool_mode"].toStringRef();
  a.coordinate_mode = ctx->saved_data["coordinate_mode"].toStringRef();
  a.rotated = ctx->saved_data["rotated"].toBool();
  a.angle_unit = ctx->saved_data["angle_unit"].toStringRef();
  a.clockwise = ctx->saved_data["clockwise"].toBool();
  return a;
}

// roi_align and roi_align_rotated under autograd: one node that keeps the map, the RoIs and the attributes.
class PoolFunction : public torch::autograd::Function<PoolFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& input, const at::Tensor& rois,
                            const PoolAttributes& attributes) {
    SaveAttributes(ctx, attributes);
    ctx->save_for_backward({input, rois});
    at::AutoDispatchBelowADInplaceOrView below;
    return CallPool(input, rois, attributes);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    at::Tensor grad_input;
    if (ctx->needs_input_grad(0)) {
      grad_input = CallPoolBackward(grad_outputs[0], saved[0], saved[1], SavedAttributes(ctx));
    }
    // One entry per argument of forward: input, rois (no gradient), the attributes.
    return {grad_input, at::Tensor(), at::Tensor()};
  }
};

// The backward ops under autograd: a node whose own backward refuses.
class PoolBackwardFunction : public torch::autograd::Function<PoolBackwardFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& grad, const at::Tensor& input,
                            const at::Tensor& rois, const PoolAttributes& attributes) {
    ctx->saved_data["op"] = std::string(OpName(attributes));
    at::AutoDispatchBelowADInplaceOrView below;
    return CallPoolBackward(grad, input, rois, attributes);
  }
  static variable_list backward(AutogradContext* ctx, variable_list /*grad_outputs*/) {
    RefuseDoubleBackward(ctx->saved_data["op"].toStringRef().c_str());
  }
};

class MultiScaleRoiAlignFunction : public torch::autograd::Function<MultiScaleRoiAlignFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, at::TensorList features, const at::Tensor& rois,
                            at::ArrayRef<double> scales, int64_t pooled_height, int64_t pooled_width,
                            int64_t sampling_ratio, bool aligned, c10::string_view level_rule, double canonical_size,
                            int64_t canonical_level, c10::string_view layout) {
    ctx->saved_data["scales"] = scales.vec();
    ctx->saved_data["pooled_height"] = pooled_height;
    ctx->saved_data["pooled_width"] = pooled_width;
    ctx->saved_data["sampling_ratio"] = sampling_ratio;
    ctx->saved_data["aligned"] = aligned;
    ctx->saved_data["level_rule"] = Saved(level_rule);
    ctx->saved_data["canonical_size"] = canonical_size;
    ctx->saved_data["canonical_level"] = canonical_level;
    ctx->saved_data["layout"] = Saved(layout);
    variable_list to_save(features.begin(), features.end());
    to_save.push_back(rois);
    ctx->save_for_backward(to_save);
    at::AutoDispatchBelowADInplaceOrView below;
    return MultiScaleRoiAlignOp().call(features, rois, scales, pooled_height, pooled_width, sampling_ratio, aligned,
                                       level_rule, canonical_size, canonical_level, layout);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    variable_list saved = ctx->get_saved_variables();
    const at::Tensor rois = saved.back();
    saved.pop_back();
    const size_t levels = saved.size();
    bool any = false;
    for (size_t l = 0; l < levels; ++l) any = any || ctx->needs_input_grad(l);
    // One entry per level, then rois (no gradient) and the nine attributes.
    variable_list grads(levels + 10);
    if (any) {
      const std::vector<double> scales = ctx->saved_data["scales"].toDoubleVector();
      const std::string level_rule = ctx->saved_data["level_rule"].toStringRef();
      const std::string layout = ctx->saved_data["layout"].toStringRef();
      const std::vector<at::Tensor> dx = MultiScaleRoiAlignBackwardOp().call(
          grad_outputs[0], saved, rois, scales, ctx->saved_data["pooled_height"].toInt(),
          ctx->saved_data["pooled_width"].toInt(), ctx->saved_data["sampling_ratio"].toInt(),
          ctx->saved_data["aligned"].toBool(), level_rule, ctx->saved_data["canonical_size"].toDouble(),
          ctx->saved_data["canonical_level"].toInt(), layout);
      for (size_t l = 0; l < levels; ++l) {
        if (ctx->needs_input_grad(l)) grads[l] = dx[l];
      }
    }
    return grads;
  }
};

class MultiScaleRoiAlignBackwardFunction : public torch::autograd::Function<MultiScaleRoiAlignBackwardFunction> {
 public:
  static variable_list forward(AutogradContext* /*ctx*/, const at::Tensor& grad, at::TensorList features,
                               const at::Tensor& rois, at::ArrayRef<double> scales, int64_t pooled_height,
                               int64_t pooled_width, int64_t sampling_ratio, bool aligned,
                               c10::string_view level_rule, double canonical_size, int64_t canonical_level,
                               c10::string_view layout) {
    at::AutoDispatchBelowADInplaceOrView below;
    return MultiScaleRoiAlignBackwardOp().call(grad, features, rois, scales, pooled_height, pooled_width,
                                               sampling_ratio, aligned, level_rule, canonical_size, canonical_level,
                                               layout);
  }
  static variable_list backward(AutogradContext* /*ctx*/, variable_list /*grad_outputs*/) {
    RefuseDoubleBackward("roialign::multi_scale_roi_align");
  }
};

PoolAttributes AttributesOf(double spatial_scale, int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio,
                            bool aligned, c10::string_view layout, c10::string_view pool_mode) {
  PoolAttributes a;
  a.spatial_scale = spatial_scale;
  a.pooled_height = pooled_height;
  a.pooled_width = pooled_width;
  a.sampling_ratio = sampling_ratio;
  a.aligned = aligned;
  a.layout = Saved(layout);
  a.pool_mode = Saved(pool_mode);
  return a;
}

PoolAttributes RoiAlignAttributes(double spatial_scale, int64_t pooled_height, int64_t pooled_width,
                                  int64_t sampling_ratio, bool aligned, c10::string_view layout,
                                  c10::string_view pool_mode, c10::optional<c10::string_view> coordinate_mode) {
  PoolAttributes a = AttributesOf(spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned, layout,
                                  pool_mode);
  a.coordinate_mode = coordinate_mode ? Saved(*coordinate_mode) : std::string();
  return a;
}

PoolAttributes RotatedAttributes(double spatial_scale, int64_t pooled_height, int64_t pooled_width,
                                 int64_t sampling_ratio, bool aligned, bool clockwise, c10::string_view angle_unit,
                                 c10::string_view layout, c10::string_view pool_mode) {
  PoolAttributes a = AttributesOf(spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned, layout,
                                  pool_mode);
  a.rotated = true;
  a.angle_unit = Saved(angle_unit);
  a.clockwise = clockwise;
  return a;
}

at::Tensor RoiAlignAutograd(const at::Tensor& input, const at::Tensor& rois, double spatial_scale,
                            int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio, bool aligned,
                            c10::string_view layout, c10::string_view pool_mode,
                            c10::optional<c10::string_view> coordinate_mode) {
  return PoolFunction::apply(input, rois, RoiAlignAttributes(spatial_scale, pooled_height, pooled_width,
                                                             sampling_ratio, aligned, layout, pool_mode,
                                                             coordinate_mode));
}

at::Tensor RoiAlignBackwardAutograd(const at::Tensor& grad, const at::Tensor& input, const at::Tensor& rois,
                                    double spatial_scale, int64_t pooled_height, int64_t pooled_width,
                                    int64_t sampling_ratio, bool aligned, c10::string_view layout,
                                    c10::string_view pool_mode, c10::optional<c10::string_view> coordinate_mode) {
  return PoolBackwardFunction::apply(grad, input, rois, RoiAlignAttributes(spatial_scale, pooled_height,
                                                                           pooled_width, sampling_ratio, aligned,
                                                                           layout, pool_mode, coordinate_mode));
}

at::Tensor RoiAlignRotatedAutograd(const at::Tensor& input, const at::Tensor& rois, double spatial_scale,
                                   int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio, bool aligned,
                                   bool clockwise, c10::string_view angle_unit, c10::string_view layout,
                                   c10::string_view pool_mode) {
  return PoolFunction::apply(input, rois, RotatedAttributes(spatial_scale, pooled_height, pooled_width,
                                                            sampling_ratio, aligned, clockwise, angle_unit, layout,
                                                            pool_mode));
}

at::Tensor RoiAlignRotatedBackwardAutograd(const at::Tensor& grad, const at::Tensor& input, const at::Tensor& rois,
                                           double spatial_scale, int64_t pooled_height, int64_t pooled_width,
                                           int64_t sampling_ratio, bool aligned, bool clockwise,
                                           c10::string_view angle_unit, c10::string_view layout,
                                           c10::string_view pool_mode) {
  return PoolBackwardFunction::apply(grad, input, rois, RotatedAttributes(spatial_scale, pooled_height, pooled_width,
                                                                          sampling_ratio, aligned, clockwise,
                                                                          angle_unit, layout, pool_mode));
}

at::Tensor MultiScaleRoiAlignAutograd(at::TensorList features, const at::Tensor& rois, at::ArrayRef<double> scales,
                                      int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio,
                                      bool aligned, c10::string_view level_rule, double canonical_size,
                                      int64_t canonical_level, c10::string_view layout) {
  return MultiScaleRoiAlignFunction::apply(features, rois, scales, pooled_height, pooled_width, sampling_ratio,
                                           aligned, level_rule, canonical_size, canonical_level, layout);
}

std::vector<at::Tensor> MultiScaleRoiAlignBackwardAutograd(const at::Tensor& grad, at::TensorList features,
                                                           const at::Tensor& rois, at::ArrayRef<double> scales,
                                                           int64_t pooled_height, int64_t pooled_width,
                                                           int64_t sampling_ratio, bool aligned,
                                                           c10::string_view level_rule, double canonical_size,
                                                           int64_t canonical_level, c10::string_view layout) {
  return MultiScaleRoiAlignBackwardFunction::apply(grad, features, rois, scales, pooled_height, pooled_width,
                                                   sampling_ratio, aligned, level_rule, canonical_size,
                                                   canonical_level, layout);
}

}  // namespace

TORCH_LIBRARY(roialign, m) {
  // torchvision::roi_align's schema, then roialign's own attributes as keyword-only arguments.
  m.def("roi_align(Tensor input, Tensor rois, float spatial_scale, int pooled_height, int pooled_width, "
        "int sampling_ratio=-1, bool aligned=False, *, str layout=\"NCHW\", str pool_mode=\"AVG\", "
        "str? coordinate_mode=None) -> Tensor");
  m.def("multi_scale_roi_align(Tensor[] features, Tensor rois, float[] scales, int pooled_height, "
        "int pooled_width, int sampling_ratio=-1, bool aligned=False, *, str level_rule=\"SCALE\", "
        "float canonical_size=224., int canonical_level=4, str layout=\"NCHW\") -> Tensor");
  // The gradients of the maps (dX, each the map's shape, dtype and memory format) from the gradient of the result:
  // the forward's arguments after `grad`. The maps are read again (the MAX modes' argmax).
  m.def("roi_align_backward(Tensor grad, Tensor input, Tensor rois, float spatial_scale, int pooled_height, "
        "int pooled_width, int sampling_ratio=-1, bool aligned=False, *, str layout=\"NCHW\", "
        "str pool_mode=\"AVG\", str? coordinate_mode=None) -> Tensor");
  m.def("multi_scale_roi_align_backward(Tensor grad, Tensor[] features, Tensor rois, float[] scales, "
        "int pooled_height, int pooled_width, int sampling_ratio=-1, bool aligned=False, *, "
        "str level_rule=\"SCALE\", float canonical_size=224., int canonical_level=4, str layout=\"NCHW\") "
        "-> Tensor[]");
  // Rotated RoIs (docs/semantics.md#rotated-rois): rows (batch_index, cx, cy, w, h, angle), the positional
  // arguments of mmcv's roi_align_rotated; detectron2's ROIAlignRotated is angle_unit="DEGREES", aligned=True,
  // clockwise=False. The same kernels as roi_align, selected with roi_kind ROTATED.
  m.def("roi_align_rotated(Tensor input, Tensor rois, float spatial_scale, int pooled_height, int pooled_width, "
        "int sampling_ratio=0, bool aligned=True, bool clockwise=False, *, str angle_unit=\"RADIANS\", "
        "str layout=\"NCHW\", str pool_mode=\"AVG\") -> Tensor");
  m.def("roi_align_rotated_backward(Tensor grad, Tensor input, Tensor rois, float spatial_scale, int pooled_height, "
        "int pooled_width, int sampling_ratio=0, bool aligned=True, bool clockwise=False, *, "
        "str angle_unit=\"RADIANS\", str layout=\"NCHW\", str pool_mode=\"AVG\") -> Tensor");
  // Returns the blocks kept for large results to torch's allocator (result_pool.h).
  m.def("empty_cache() -> ()", &roialign_torch::EmptyResultPool);
}

TORCH_LIBRARY_IMPL(roialign, CPU, m) {
  m.impl("roi_align", &RoiAlignCpu);
  m.impl("multi_scale_roi_align", &MultiScaleRoiAlignCpu);
  m.impl("roi_align_backward", &RoiAlignBackwardCpu);
  m.impl("multi_scale_roi_align_backward", &MultiScaleRoiAlignBackwardCpu);
  m.impl("roi_align_rotated", &RoiAlignRotatedCpu);
  m.impl("roi_align_rotated_backward", &RoiAlignRotatedBackwardCpu);
}

TORCH_LIBRARY_IMPL(roialign, Meta, m) {
  m.impl("roi_align", &RoiAlignMeta);
  m.impl("multi_scale_roi_align", &MultiScaleRoiAlignMeta);
  m.impl("roi_align_backward", &RoiAlignBackwardMeta);
  m.impl("multi_scale_roi_align_backward", &MultiScaleRoiAlignBackwardMeta);
  m.impl("roi_align_rotated", &RoiAlignRotatedMeta);
  m.impl("roi_align_rotated_backward", &RoiAlignRotatedBackwardMeta);
}

TORCH_LIBRARY_IMPL(roialign, Autograd, m) {
  m.impl("roi_align", &RoiAlignAutograd);
  m.impl("multi_scale_roi_align", &MultiScaleRoiAlignAutograd);
  m.impl("roi_align_backward", &RoiAlignBackwardAutograd);
  m.impl("multi_scale_roi_align_backward", &MultiScaleRoiAlignBackwardAutograd);
  m.impl("roi_align_rotated", &RoiAlignRotatedAutograd);
  m.impl("roi_align_rotated_backward", &RoiAlignRotatedBackwardAutograd);
}
