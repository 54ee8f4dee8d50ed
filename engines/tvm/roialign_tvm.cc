// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// libroialign_tvm.so: roialign as TVM FFI global functions, for Relax's call_dps_packed (docs/tvm.md).
//
//   roialign.roi_align_dps(data, rois, pooled_h, pooled_w, spatial_scale, sampling_ratio,
//                          coordinate_mode, pool_mode, layout, out)
//       runs a roialign kernel on DLPack tensors, destination-passing style: `out` is written, nothing returned.
//       layout "NCHW" or "NHWC" (4-D data and out), or "NCHW4c", "NCHW8c", "NCHW16c" (data [N, C/b, H, W, b], out
//       [K, C/b, PH, PW, b], every lane a channel).
//   roialign.roi_align_check(pooled_h, pooled_w, spatial_scale, sampling_ratio, coordinate_mode, pool_mode,
//                            layout, dtype) -> str
//       "" when the kernels serve that attribute set, else why not (selection's message); the Relax pass asks it
//       before rewriting a call.
//
// Built only against the apache-tvm-ffi wheel (headers and libtvm_ffi.so) and roialign's C API. Work runs on TVM's
// own thread pool (TVMBackendParallelLaunch, with TVM's thread count), found in the process when the function runs.
#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include "roialign/roialign.h"

namespace {

namespace ffi = tvm::ffi;

// ---- Attributes -> roialign_params ----

// The name TVM's attributes use for a value of the enum `kind`: the library's name (roialign_enum_name), lower-case
// except for layouts ("NCHW"); dtypes as TVM and numpy spell them ("F32" -> "float32", "BF16" -> "bfloat16").
std::string TvmName(roialign_enum_kind kind, const char* name) {
  std::string out;
  for (const char* c = name; *c != '\0'; ++c) {
    const char lower = static_cast<char>(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
    if (kind == ROIALIGN_ENUM_LAYOUT) {
      out += *c;
    } else if (kind == ROIALIGN_ENUM_DTYPE && lower == 'f') {
      out += "float";
    } else {
      out += lower;
    }
  }
  return out;
}

// The value of `kind` whose TvmName is `s`; else an error of type T that lists the names.
template <typename Enum>
Enum ParseName(roialign_enum_kind kind, const std::string& s, const char* what) {
  std::string names;
  for (int32_t v = 0; const char* name = roialign_enum_name(kind, v); ++v) {
    const std::string tvm_name = TvmName(kind, name);
    if (tvm_name == s) return static_cast<Enum>(v);
    names += (v ? ", \"" : "\"") + tvm_name + "\"";
  }
  if (kind == ROIALIGN_ENUM_DTYPE) {
    TVM_FFI_THROW(TypeError) << "roialign: dtype \"" << s << "\" is not served; expected one of " << names;
  }
  TVM_FFI_THROW(ValueError) << "roialign: unknown " << what << " \"" << s << "\"; expected one of " << names;
}

roialign_dtype ParseDTypeName(const std::string& s) {
  return ParseName<roialign_dtype>(ROIALIGN_ENUM_DTYPE, s, "dtype");
}

std::string DTypeText(DLDataType t) { return std::string(ffi::DLDataTypeToString(t)); }

// The feature map's DLPack dtype as roialign's, or a TypeError naming it.
roialign_dtype DTypeOf(DLDataType t, const char* what) {
  if (t.lanes == 1 && t.code == kDLFloat && t.bits == 32) return ROIALIGN_DTYPE_F32;
  if (t.lanes == 1 && t.code == kDLFloat && t.bits == 16) return ROIALIGN_DTYPE_F16;
  if (t.lanes == 1 && t.code == kDLBfloat && t.bits == 16) return ROIALIGN_DTYPE_BF16;
  TVM_FFI_THROW(TypeError) << "roialign: " << what << " has dtype " << DTypeText(t)
                           << "; roialign serves float32, float16 and bfloat16";
}

int32_t CheckedInt32(int64_t v, const char* what) {
  if (v < INT32_MIN || v > INT32_MAX) {
    TVM_FFI_THROW(ValueError) << "roialign: " << what << " " << v << " is out of range";
  }
  return static_cast<int32_t>(v);
}

roialign_params ParamsOf(int64_t pooled_h, int64_t pooled_w, double spatial_scale, int64_t sampling_ratio,
                         const std::string& coordinate_mode, const std::string& pool_mode, const std::string& layout,
                         roialign_dtype dtype) {
  roialign_params p;
  roialign_params_init(&p);
  p.pooled_height = pooled_h;
  p.pooled_width = pooled_w;
  p.spatial_scale = static_cast<float>(spatial_scale);
  p.sampling_ratio = CheckedInt32(sampling_ratio, "sampling_ratio");
  p.coordinate_mode =
      ParseName<roialign_coordinate_mode>(ROIALIGN_ENUM_COORDINATE_MODE, coordinate_mode, "coordinate_mode");
  p.pool_mode = ParseName<roialign_pool_mode>(ROIALIGN_ENUM_POOL_MODE, pool_mode, "pool_mode");
  p.layout = ParseName<roialign_layout>(ROIALIGN_ENUM_LAYOUT, layout, "layout");
  p.dtype = dtype;
  return p;
}

// ---- Kernel cache: one selection per attribute set, for the life of the process ----

struct KernelFree {
  void operator()(roialign_kernel* k) const { roialign_kernel_free(k); }
};

struct Selection {
  std::unique_ptr<roialign_kernel, KernelFree> kernel;  // null when refused
  std::string refusal;                                  // selection's message when refused
};

using Key = std::tuple<int64_t, int64_t, uint32_t, int32_t, int, int, int, int>;

Key KeyOf(const roialign_params& p) {
  uint32_t scale_bits;  // bitwise, so that -0.0/NaN scales are distinct keys and selection judges them
  std::memcpy(&scale_bits, &p.spatial_scale, sizeof scale_bits);
  return Key(p.pooled_height, p.pooled_width, scale_bits, p.sampling_ratio, p.coordinate_mode, p.pool_mode, p.layout,
             p.dtype);
}

// The selection for `p` on "host", made on first use. A model holds a handful of attribute sets, so the cache is
// never trimmed; entries are never erased, so the reference stays valid without the lock.
const Selection& Select(const roialign_params& p) {
  static std::mutex mu;
  static std::map<Key, Selection>* cache = new std::map<Key, Selection>();  // not destroyed: no exit-order issues
  std::lock_guard<std::mutex> lock(mu);
  auto [it, inserted] = cache->try_emplace(KeyOf(p));
  if (inserted) {
    roialign_kernel* k = nullptr;
    if (roialign_select("host", &p, &k) == ROIALIGN_OK) {
      it->second.kernel.reset(k);
    } else {
      it->second.refusal = roialign_last_error();
    }
  }
  return it->second;
}

// ---- TVM's thread pool as a roialign_threadpool ----

// TVM's C backend ABI (tvm/runtime/c_backend_api.h), stable across releases; declared here so that this library
// builds against tvm-ffi alone.
struct TvmParallelGroupEnv {
  void* sync_handle;
  int32_t num_task;
};
using TvmParallelLambda = int (*)(int task_id, TvmParallelGroupEnv* env, void* cdata);
using TvmParallelLaunch = int (*)(TvmParallelLambda lambda, void* cdata, int num_task);

struct TvmRuntime {
  TvmParallelLaunch launch = nullptr;
  std::optional<ffi::Function> num_threads;  // "runtime.NumThreads": the pool's current size
};

// Looked up once TVM's runtime is in the process (it registers runtime.NumThreads when it loads).
const TvmRuntime& Runtime() {
  static std::mutex mu;
  static TvmRuntime rt;
  std::lock_guard<std::mutex> lock(mu);
  if (rt.launch == nullptr) {
    auto launch = reinterpret_cast<TvmParallelLaunch>(dlsym(RTLD_DEFAULT, "TVMBackendParallelLaunch"));
    auto num_threads = ffi::Function::GetGlobal("runtime.NumThreads");
    if (launch == nullptr || !num_threads.has_value()) {
      TVM_FFI_THROW(RuntimeError) << "roialign.roi_align_dps runs on TVM's thread pool, but TVM's runtime "
                                     "(libtvm_runtime, TVMBackendParallelLaunch and runtime.NumThreads) is not "
                                     "loaded in this process; import tvm first";
    }
    rt.num_threads = std::move(num_threads);
    rt.launch = launch;
  }
  return rt;
}

struct ForClosure {
  int64_t count;
  roialign_task_fn task;
  void* task_context;
};

int RunStrided(int task_id, TvmParallelGroupEnv* env, void* cdata) {
  const auto* c = static_cast<const ForClosure*>(cdata);
  for (int64_t i = task_id; i < c->count; i += env->num_task) c->task(c->task_context, i);
  return 0;
}

void TvmParallelFor(void* pool_context, int64_t count, roialign_task_fn task, void* task_context) {
  const auto* rt = static_cast<const TvmRuntime*>(pool_context);
  ForClosure closure{count, task, task_context};
  // roialign tasks do not throw and return nothing, so TVM's launch cannot fail on their account.
  rt->launch(&RunStrided, &closure, 0);
}

// ---- Validation ----

void CheckCpuContiguous(const ffi::TensorView& t, const char* what) {
  if (t.device().device_type != kDLCPU) {
    TVM_FFI_THROW(ValueError) << "roialign: " << what << " is on device type " << t.device().device_type
                              << "; roialign runs on the CPU (kDLCPU) only";
  }
  if (!t.IsContiguous()) {
    TVM_FFI_THROW(ValueError) << "roialign: " << what << " is not contiguous (shape " << t.shape()
                              << ", strides " << t.strides() << "); pass a dense row-major tensor";
  }
}

void* DataOf(const ffi::TensorView& t) { return static_cast<char*>(t.data_ptr()) + t.byte_offset(); }

// The channel block of a blocked layout (4, 8, 16), 0 for NCHW and NHWC: the library's own fact.
int64_t BlockOf(roialign_layout layout) { return std::max<int32_t>(0, roialign_layout_channel_block(layout)); }

void RoiAlignDps(ffi::TensorView data, ffi::TensorView rois, int64_t pooled_h, int64_t pooled_w,
                 double spatial_scale, int64_t sampling_ratio, ffi::String coordinate_mode, ffi::String pool_mode,
                 ffi::String layout, ffi::TensorView out) {
  // The layout first: it says how many dimensions the tensors have.
  const roialign_params p = ParamsOf(pooled_h, pooled_w, spatial_scale, sampling_ratio, coordinate_mode, pool_mode,
                                     layout, DTypeOf(data.dtype(), "data"));
  const int64_t block = BlockOf(p.layout);
  const int ndim = block ? 5 : 4;
  if (data.ndim() != ndim) {
    TVM_FFI_THROW(ValueError) << "roialign: data must be " << ndim << "-D (" << std::string(layout)
                              << (block ? ": [N, C/b, H, W, b]" : "") << "); got shape " << data.shape();
  }
  if (block && data.size(4) != block) {
    TVM_FFI_THROW(ValueError) << "roialign: " << std::string(layout) << " data must have " << block
                              << " channels in its last dimension; got shape " << data.shape();
  }
  if (out.dtype() != data.dtype()) {
    TVM_FFI_THROW(TypeError) << "roialign: out has dtype " << DTypeText(out.dtype()) << ", data has "
                             << DTypeText(data.dtype()) << "; they must match";
  }
  if (rois.ndim() != 2 || rois.size(1) != 5) {
    TVM_FFI_THROW(ValueError) << "roialign: rois must be [K, 5] (batch_index, x1, y1, x2, y2); got shape "
                              << rois.shape();
  }
  if (!(rois.dtype().code == kDLFloat && rois.dtype().bits == 32 && rois.dtype().lanes == 1)) {
    TVM_FFI_THROW(TypeError) << "roialign: rois have dtype " << DTypeText(rois.dtype()) << "; expected float32";
  }
  CheckCpuContiguous(data, "data");
  CheckCpuContiguous(rois, "rois");
  CheckCpuContiguous(out, "out");

  // Blocked maps are [N, C/b, H, W, b] and give [K, C/b, PH, PW, b]. Every lane is a channel: the channel count is
  // C/b * b, as in the NCHW tensor that TVM's layout_transform from this layout makes (docs/tvm.md).
  const bool nhwc = p.layout == ROIALIGN_LAYOUT_NHWC;
  const int64_t n = data.size(0);
  const int64_t c = block ? data.size(1) * block : nhwc ? data.size(3) : data.size(1);
  const int64_t h = nhwc ? data.size(1) : data.size(2);
  const int64_t w = nhwc ? data.size(2) : data.size(3);
  const int64_t k = rois.size(0);
  // The result: NCHW [K, C, PH, PW], NHWC [K, PH, PW, C], blocked [K, C/b, PH, PW, b].
  int64_t expected[5] = {k, c, pooled_h, pooled_w, block};
  if (nhwc) {
    expected[1] = pooled_h;
    expected[2] = pooled_w;
    expected[3] = c;
  } else if (block) {
    expected[1] = data.size(1);
  }
  bool shape_ok = out.ndim() == ndim;
  for (int i = 0; shape_ok && i < ndim; ++i) shape_ok = out.size(i) == expected[i];
  if (!shape_ok) {
    std::string gives;
    for (int i = 0; i < ndim; ++i) gives += (i ? ", " : "") + std::to_string(expected[i]);
    TVM_FFI_THROW(ValueError) << "roialign: out has shape " << out.shape() << "; " << std::string(layout)
                              << " roi_align of these inputs gives [" << gives << "]";
  }

  const Selection& sel = Select(p);
  if (!sel.kernel) TVM_FFI_THROW(ValueError) << "roialign: " << sel.refusal;

  const TvmRuntime& rt = Runtime();
  const int64_t threads = (*rt.num_threads)().cast<int64_t>();
  roialign_threadpool pool;
  roialign_threadpool_init(&pool);
  pool.parallel_for = &TvmParallelFor;
  pool.pool_context = const_cast<TvmRuntime*>(&rt);
  pool.num_threads = CheckedInt32(threads < 1 ? 1 : threads, "TVM thread count");
  roialign_inputs in;
  roialign_inputs_init(&in);
  in.batch = n;
  in.channels = c;
  in.maps[0].data = DataOf(data);
  in.maps[0].height = h;
  in.maps[0].width = w;
  in.rois = static_cast<const float*>(DataOf(rois));
  in.num_rois = k;
  roialign_options options;
  roialign_options_init(&options);
  options.threadpool = &pool;
  const roialign_status s = roialign_run(sel.kernel.get(), &in, DataOf(out), &options);
  if (s != ROIALIGN_OK) TVM_FFI_THROW(ValueError) << "roialign: " << roialign_last_error();
}

ffi::String RoiAlignCheck(int64_t pooled_h, int64_t pooled_w, double spatial_scale, int64_t sampling_ratio,
                          ffi::String coordinate_mode, ffi::String pool_mode, ffi::String layout, ffi::String dtype) {
  const roialign_params p = ParamsOf(pooled_h, pooled_w, spatial_scale, sampling_ratio, coordinate_mode, pool_mode,
                                     layout, ParseDTypeName(dtype));
  return ffi::String(Select(p).refusal);
}

}  // namespace

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      .def("roialign.roi_align_dps", RoiAlignDps)
      .def("roialign.roi_align_check", RoiAlignCheck);
}
