// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// roialign's kernels as PyTorch operators, torch.ops.roialign.roi_align and torch.ops.roialign.multi_scale_roi_align
// (docs/torch.md). Registered with the dispatcher, so that TorchScript can script, trace, save and load them and
// LibTorch programs can call them; CPU kernels on roialign's C API, run on torch's intra-op threads; a Meta kernel
// for shapes without data; an Autograd kernel that refuses to silently drop a gradient.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
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
    default: break;
  }
  TORCH_CHECK(false, "roialign: ", what, " has dtype ", t.scalar_type(),
              "; roialign pools float32, float16 and bfloat16");
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

roialign_params ParamsOf(roialign_dtype dtype, double spatial_scale, int64_t pooled_height, int64_t pooled_width,
                         int64_t sampling_ratio, bool aligned, c10::string_view layout, c10::string_view pool_mode,
                         const c10::optional<c10::string_view>& coordinate_mode) {
  TORCH_CHECK(sampling_ratio >= INT32_MIN && sampling_ratio <= INT32_MAX, "roialign: sampling_ratio ", sampling_ratio,
              " does not fit int32");
  roialign_params p;
  std::memset(&p, 0, sizeof(p));
  roialign_params_init(&p);
  p.pooled_height = pooled_height;
  p.pooled_width = pooled_width;
  p.spatial_scale = static_cast<float>(spatial_scale);
  p.sampling_ratio = static_cast<int32_t>(sampling_ratio);
  p.coordinate_mode = CoordinateModeOf(aligned, coordinate_mode);
  p.pool_mode = static_cast<roialign_pool_mode>(ParseName(pool_mode, ROIALIGN_ENUM_POOL_MODE, "pool_mode"));
  p.layout = static_cast<roialign_layout>(ParseName(layout, ROIALIGN_ENUM_LAYOUT, "layout"));
  p.dtype = dtype;
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

// RoIs as [K, 5] float32 rows (batch_index, x1, y1, x2, y2), as torchvision takes them.
at::Tensor DenseRois(const at::Tensor& rois) {
  TORCH_CHECK(rois.dim() == 2 && rois.size(1) == 5,
              "roialign: rois must be [K, 5] (batch_index, x1, y1, x2, y2); got shape ", rois.sizes());
  TORCH_CHECK(rois.device().is_cpu(), "roialign: rois are on ", rois.device(), "; roialign runs on the CPU");
  TORCH_CHECK(at::isFloatingType(rois.scalar_type()), "roialign: rois must be floating point; got ",
              rois.scalar_type());
  return rois.to(at::kFloat).contiguous();
}

// A result of the call's shape, layout and dtype (result_pool.h: large ones reuse the blocks of dead results).
at::Tensor EmptyResult(const at::Tensor& like, int64_t k, int64_t c, int64_t ph, int64_t pw, c10::string_view layout) {
  return roialign_torch::NewResult({k, c, ph, pw}, like.options(), FormatOf(layout));
}

// ---- roi_align ----

at::Tensor RoiAlignCpu(const at::Tensor& input, const at::Tensor& rois, double spatial_scale, int64_t pooled_height,
                       int64_t pooled_width, int64_t sampling_ratio, bool aligned, c10::string_view layout,
                       c10::string_view pool_mode, c10::optional<c10::string_view> coordinate_mode) {
  const at::Tensor map = DenseMap(input, layout, "input");
  const at::Tensor boxes = DenseRois(rois);
  const roialign_params p = ParamsOf(DTypeOf(map, "input"), spatial_scale, pooled_height, pooled_width, sampling_ratio,
                                     aligned, layout, pool_mode, coordinate_mode);
  const roialign_kernel& kernel = CachedKernel(p, &roialign_select);
  at::Tensor out = EmptyResult(map, boxes.size(0), map.size(1), pooled_height, pooled_width, layout);
  const roialign_threadpool pool = TorchPool();
  roialign_inputs in;
  roialign_inputs_init(&in);
  in.batch = map.size(0);
  in.channels = map.size(1);
  in.maps[0] = {map.data_ptr(), map.size(2), map.size(3), {0, 0, 0, 0}};
  in.rois = boxes.data_ptr<float>();
  in.num_rois = boxes.size(0);
  roialign_options options;
  roialign_options_init(&options);
  options.threadpool = &pool;
  const roialign_status s = roialign_run(&kernel, &in, out.data_ptr(), &options);
  TORCH_CHECK(s == ROIALIGN_OK, "roialign: ", roialign_last_error());
  return out;
}

// A result's shape without data, in symbolic sizes where the inputs have them: the Meta kernels serve torch's fake
// tensors, so torch.compile and torch.export trace the ops with dynamic RoI counts and map sizes.
at::Tensor EmptyMetaResult(const at::Tensor& like, const c10::SymInt& k, const c10::SymInt& c, int64_t ph,
                           int64_t pw, c10::string_view layout) {
  const std::vector<c10::SymInt> sizes = {k, c, c10::SymInt(ph), c10::SymInt(pw)};
  return at::empty_symint(sizes, like.options(), FormatOf(layout));
}

at::Tensor RoiAlignMeta(const at::Tensor& input, const at::Tensor& rois, double /*spatial_scale*/,
                        int64_t pooled_height, int64_t pooled_width, int64_t /*sampling_ratio*/, bool /*aligned*/,
                        c10::string_view layout, c10::string_view /*pool_mode*/,
                        c10::optional<c10::string_view> /*coordinate_mode*/) {
  TORCH_CHECK(input.dim() == 4, "roialign: input must be a 4-D [N, C, H, W] tensor; got shape ", input.sym_sizes());
  TORCH_CHECK(rois.dim() == 2 && rois.sym_size(1) == 5, "roialign: rois must be [K, 5]; got shape ",
              rois.sym_sizes());
  DTypeOf(input, "input");
  return EmptyMetaResult(input, rois.sym_size(0), input.sym_size(1), pooled_height, pooled_width, layout);
}

// ---- multi_scale_roi_align ----

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

at::Tensor MultiScaleRoiAlignCpu(at::TensorList features, const at::Tensor& rois, at::ArrayRef<double> scales,
                                 int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio, bool aligned,
                                 c10::string_view level_rule, double canonical_size, int64_t canonical_level,
                                 c10::string_view layout) {
  const MultiLevelRequest mp = MultiLevelParamsOf(features, scales, pooled_height, pooled_width,
                                                            sampling_ratio, aligned, level_rule, canonical_size,
                                                            canonical_level, layout);
  std::vector<at::Tensor> maps;
  roialign_inputs in;
  roialign_inputs_init(&in);
  for (size_t l = 0; l < features.size(); ++l) {
    const std::string what = "features[" + std::to_string(l) + "]";
    maps.push_back(DenseMap(features[l], layout, what.c_str()));
    TORCH_CHECK(maps[l].scalar_type() == maps[0].scalar_type(), "roialign: ", what, " has dtype ",
                maps[l].scalar_type(), ", features[0] has ", maps[0].scalar_type(), "; all levels share one dtype");
    TORCH_CHECK(maps[l].size(0) == maps[0].size(0) && maps[l].size(1) == maps[0].size(1), "roialign: ", what,
                " has shape ", maps[l].sizes(), "; every level has features[0]'s batch and channels (",
                maps[0].size(0), ", ", maps[0].size(1), ")");
    in.maps[l] = {maps[l].data_ptr(), maps[l].size(2), maps[l].size(3), {0, 0, 0, 0}};
  }
  const at::Tensor boxes = DenseRois(rois);
  const roialign_multi_level_kernel& kernel = CachedKernel(mp, &SelectMultiLevel);
  at::Tensor out = EmptyResult(maps[0], boxes.size(0), maps[0].size(1), pooled_height, pooled_width, layout);
  const roialign_threadpool pool = TorchPool();
  in.num_maps = static_cast<int32_t>(features.size());
  in.batch = maps[0].size(0);
  in.channels = maps[0].size(1);
  in.rois = boxes.data_ptr<float>();
  in.num_rois = boxes.size(0);
  roialign_options options;
  roialign_options_init(&options);
  options.threadpool = &pool;
  const roialign_status s = roialign_multi_level_run(&kernel, &in, out.data_ptr(), &options);
  TORCH_CHECK(s == ROIALIGN_OK, "roialign: ", roialign_last_error());
  return out;
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

// ---- Autograd: forward-only, said out loud ----

void RefuseGradient(bool requires_grad, const char* op) {
  TORCH_CHECK(!(requires_grad && at::GradMode::is_enabled()), "roialign is forward-only: ", op,
              " has no backward, and an input requires grad. Run it under torch.no_grad() or "
              "torch.inference_mode() (inference), detach the inputs, or use torchvision.ops for training.");
}

at::Tensor RoiAlignAutograd(const at::Tensor& input, const at::Tensor& rois, double spatial_scale,
                            int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio, bool aligned,
                            c10::string_view layout, c10::string_view pool_mode,
                            c10::optional<c10::string_view> coordinate_mode) {
  RefuseGradient(input.requires_grad() || rois.requires_grad(), "roialign::roi_align");
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("roialign::roi_align", "")
                             .typed<decltype(RoiAlignCpu)>();
  at::AutoDispatchBelowADInplaceOrView below;
  return op.call(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned, layout, pool_mode,
                 coordinate_mode);
}

at::Tensor MultiScaleRoiAlignAutograd(at::TensorList features, const at::Tensor& rois, at::ArrayRef<double> scales,
                                      int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio,
                                      bool aligned, c10::string_view level_rule, double canonical_size,
                                      int64_t canonical_level, c10::string_view layout) {
  bool requires_grad = rois.requires_grad();
  for (const at::Tensor& f : features) requires_grad = requires_grad || f.requires_grad();
  RefuseGradient(requires_grad, "roialign::multi_scale_roi_align");
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("roialign::multi_scale_roi_align", "")
                             .typed<decltype(MultiScaleRoiAlignCpu)>();
  at::AutoDispatchBelowADInplaceOrView below;
  return op.call(features, rois, scales, pooled_height, pooled_width, sampling_ratio, aligned, level_rule,
                 canonical_size, canonical_level, layout);
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
  // Returns the blocks kept for large results to torch's allocator (result_pool.h).
  m.def("empty_cache() -> ()", &roialign_torch::EmptyResultPool);
}

TORCH_LIBRARY_IMPL(roialign, CPU, m) {
  m.impl("roi_align", &RoiAlignCpu);
  m.impl("multi_scale_roi_align", &MultiScaleRoiAlignCpu);
}

TORCH_LIBRARY_IMPL(roialign, Meta, m) {
  m.impl("roi_align", &RoiAlignMeta);
  m.impl("multi_scale_roi_align", &MultiScaleRoiAlignMeta);
}

TORCH_LIBRARY_IMPL(roialign, Autograd, m) {
  m.impl("roi_align", &RoiAlignAutograd);
  m.impl("multi_scale_roi_align", &MultiScaleRoiAlignAutograd);
}
