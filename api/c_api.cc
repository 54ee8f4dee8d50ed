// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The C API: reads the caller's growable structs (docs/api.md, "ABI"), converts them to the internal C++ API
// (core/library.h) and never lets an exception cross the boundary.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory_resource>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "core/enums.h"
#include "core/library.h"
#include "execution/arena.h"
#include "execution/layout_transforms.h"
#include "execution/run.h"
#include "execution/strided_maps.h"
#include "roialign/roialign.h"

struct roialign_kernel {
  roialign::KernelHandle kernel;
};

struct roialign_multi_level_kernel {
  roialign::PyramidKernelHandle kernel;
};

namespace {

// The calling thread's last message. A plain array: a thread_local std::string would make glibc register a
// destructor on the thread's first error, which aborts the process when that allocation fails.
constexpr size_t kMaxErrorBytes = 1024;
thread_local char g_last_error[kMaxErrorBytes];

roialign_status Report(const roialign::Status& s) {
  if (!s.ok()) {
    // Truncated to kMaxErrorBytes - 1 bytes (docs/errors-and-limits.md).
    const size_t n = std::min(s.message().size(), kMaxErrorBytes - 1);
    std::memcpy(g_last_error, s.message().data(), n);
    g_last_error[n] = '\0';
  }
  return static_cast<roialign_status>(s.code());
}

// Runs f() and converts exceptions into statuses with a message.
template <typename F>
roialign_status Guard(F&& f) {
  try {
    return Report(f());
  } catch (const std::bad_alloc&) {
    return Report(roialign::Status(roialign::StatusCode::kOutOfMemory, "out of memory"));
  } catch (const std::exception& e) {
    return Report(roialign::Status(roialign::StatusCode::kInternal, std::string("internal error: ") + e.what()));
  } catch (...) {
    return Report(roialign::Status(roialign::StatusCode::kInternal, "internal error"));
  }
}

// The int inside a C enum field. C callers may store any int there; loading it as the C++ view of the C enum
// type would be undefined behaviour for values outside the enumerators (found by the fuzzer), so copy bytes.
template <typename CEnum>
int RawEnum(const CEnum& e) {
  static_assert(sizeof(CEnum) == sizeof(int), "C enums are int-sized on supported ABIs");
  int v;
  std::memcpy(&v, &e, sizeof(v));
  return v;
}

roialign::Status Null(const char* what) {
  return roialign::Status(roialign::StatusCode::kInvalidArgument, std::string(what) + " is null");
}

roialign::Status Invalid(const std::string& message) {
  return roialign::Status(roialign::StatusCode::kInvalidArgument, message);
}

roialign::Status Unsupported(const std::string& message) {
  return roialign::Status(roialign::StatusCode::kUnsupported, message);
}

// ---- Growable structs: what this library knows of each ----
// The library's view of a caller's struct: the public struct, and in the test-only "future" build
// (tests/abi_test.c) one more field, as a later 1.x would append it. The 1.0 size of each struct is fixed: the end
// of its last 1.0 field.
#define ROIALIGN_END_OF(type, field) (offsetof(type, field) + sizeof(static_cast<type*>(nullptr)->field))
#ifdef ROIALIGN_TEST_FUTURE_FIELDS
#define ROIALIGN_FUTURE_FIELD int64_t test_future_field = 0;
#else
#define ROIALIGN_FUTURE_FIELD
#endif

template <typename Public>
struct Known {
  Public v;
  ROIALIGN_FUTURE_FIELD
  static constexpr uint32_t kFlags = 0;  // the flag bits defined for the struct
};
template <typename Public>
struct KnownOnly {  // structs the future build leaves as they are
  Public v;
  static constexpr uint32_t kFlags = 0;
};

struct ParamsView : Known<roialign_params> {
  static constexpr const char* kWhat = "params";
  static constexpr size_t kSize10 = ROIALIGN_END_OF(roialign_params, dtype);
  static constexpr uint32_t kFlags = ROIALIGN_PARAMS_BACKWARD;
  ParamsView() { roialign_params_init(&v); }
};
struct InputsView : Known<roialign_inputs> {
  static constexpr const char* kWhat = "inputs";
  static constexpr size_t kSize10 = ROIALIGN_END_OF(roialign_inputs, num_rois);
  InputsView() { roialign_inputs_init(&v); }
};
struct OptionsView : Known<roialign_options> {
  static constexpr const char* kWhat = "options";
  static constexpr size_t kSize10 = ROIALIGN_END_OF(roialign_options, workspace_size);
  OptionsView() { roialign_options_init(&v); }
};
struct ThreadPoolView : KnownOnly<roialign_threadpool> {
  static constexpr const char* kWhat = "options->threadpool";
  static constexpr size_t kSize10 = ROIALIGN_END_OF(roialign_threadpool, reserved);
  ThreadPoolView() { roialign_threadpool_init(&v); }
};
struct MultiLevelParamsView : KnownOnly<roialign_multi_level_params> {
  static constexpr const char* kWhat = "levels";
  static constexpr size_t kSize10 = ROIALIGN_END_OF(roialign_multi_level_params, canonical_level);
  MultiLevelParamsView() { roialign_multi_level_params_init(&v); }
};
struct ImplementationView : KnownOnly<roialign_implementation> {
  static constexpr const char* kWhat = "impl";
  static constexpr size_t kSize10 = ROIALIGN_END_OF(roialign_implementation, user_data);
  ImplementationView() { roialign_implementation_init(&v); }
};
struct TargetInfoView : KnownOnly<roialign_target_info> {
  static constexpr const char* kWhat = "info";
  static constexpr size_t kSize10 = ROIALIGN_END_OF(roialign_target_info, preferred_layout);
  TargetInfoView() { roialign_target_info_init(&v); }
};

// The caller's struct_size, checked against the 1.0 size and the cap.
template <typename View>
roialign::Status CallerSize(const void* caller, uint32_t* size) {
  std::memcpy(size, caller, sizeof(*size));
  if (*size < View::kSize10 || *size > ROIALIGN_MAX_STRUCT_SIZE) {
    return Invalid(std::string(View::kWhat) + "->struct_size is " + std::to_string(*size) + "; it must be " +
                   std::to_string(View::kSize10) + " (roialign 1.0's size) to " +
                   std::to_string(ROIALIGN_MAX_STRUCT_SIZE) + ": set it with roialign_*_init()");
  }
  return roialign::Status::Ok();
}

// Reads the prefix of `caller` its struct_size covers over `view`'s defaults. Bytes past what this library knows
// must be zero (a newer caller that asks for nothing new), and flags within the view's kFlags.
template <typename View>
roialign::Status Read(const void* caller, View* view) {
  uint32_t size = 0;
  roialign::Status s = CallerSize<View>(caller, &size);
  if (!s.ok()) return s;
  const auto* bytes = static_cast<const unsigned char*>(caller);
  for (size_t i = sizeof(View); i < size; ++i) {
    if (bytes[i] != 0) {
      return Unsupported(std::string(View::kWhat) + " sets byte " + std::to_string(i) + " of its " +
                         std::to_string(size) + "; this roialign (" + std::to_string(ROIALIGN_VERSION) +
                         ") knows the first " + std::to_string(sizeof(View)) + ": it needs a newer roialign");
    }
  }
  std::memcpy(static_cast<void*>(view), caller, std::min<size_t>(size, sizeof(View)));
  if ((view->v.flags & ~View::kFlags) != 0) {
    return Unsupported(std::string(View::kWhat) + "->flags is " + std::to_string(view->v.flags) + "; this roialign " +
                       (View::kFlags == 0 ? std::string("defines no flag for it")
                                          : "defines the bits " + std::to_string(View::kFlags) + " only"));
  }
  return roialign::Status::Ok();
}

// What the test-only future field of a view asks for: the future build refuses any value but its default, so that
// the ABI test sees whether the library read it.
template <typename View>
roialign::Status CheckFuture(const View& view) {
#ifdef ROIALIGN_TEST_FUTURE_FIELDS
  if (view.test_future_field != 0) {
    return Invalid(std::string(View::kWhat) + "->test_future_field is " + std::to_string(view.test_future_field));
  }
#else
  (void)view;
#endif
  return roialign::Status::Ok();
}

template <typename View>
roialign::Status ReadChecked(const void* caller, View* view) {
  roialign::Status s = Read(caller, view);
  return s.ok() ? CheckFuture(*view) : s;
}

roialign::Params ToParams(const roialign_params& p) {
  roialign::Params out;
  out.pooled_height = p.pooled_height;
  out.pooled_width = p.pooled_width;
  out.spatial_scale = p.spatial_scale;
  out.sampling_ratio = p.sampling_ratio;
  out.coordinate_mode = static_cast<roialign::CoordinateMode>(RawEnum(p.coordinate_mode));
  out.pool_mode = static_cast<roialign::PoolMode>(RawEnum(p.pool_mode));
  out.layout = static_cast<roialign::Layout>(RawEnum(p.layout));
  out.dtype = static_cast<roialign::DType>(RawEnum(p.dtype));
  out.backward = (p.flags & ROIALIGN_PARAMS_BACKWARD) != 0;
  out.spatial_scale_f64 = p.spatial_scale_f64;
  out.roi_kind = static_cast<roialign::RoiKind>(RawEnum(p.roi_kind));
  out.angle_unit = static_cast<roialign::AngleUnit>(RawEnum(p.angle_unit));
  out.rotation = static_cast<roialign::Rotation>(RawEnum(p.rotation));
  return out;
}

roialign::Status ReadParams(const roialign_params* params, roialign::Params* out) {
  if (params == nullptr) return Null("params");
  ParamsView view;
  roialign::Status s = ReadChecked(params, &view);
  if (!s.ok()) return s;
  if (view.v.reserved != 0) return Invalid("params->reserved is " + std::to_string(view.v.reserved) + "; it must be 0");
  *out = ToParams(view.v);
  return s;
}

// How a call runs: roialign's threads, or the caller's pool (copied into `pool`, which must outlive the call), and
// the caller's workspace (NULL: none).
struct Threads {
  int32_t num_threads = 0;
  const roialign_threadpool* pool = nullptr;
  void* workspace = nullptr;
  size_t workspace_size = 0;
  // The caller's pool when it passed one, else num_threads of roialign's own.
  roialign::internal::Threading threading() const { return {pool != nullptr ? 0 : num_threads, pool}; }
};

roialign::Status ReadOptions(const roialign_options* options, ThreadPoolView* pool, Threads* out) {
  *out = Threads();
  if (options == nullptr) return roialign::Status::Ok();
  OptionsView view;
  roialign::Status s = ReadChecked(options, &view);
  if (!s.ok()) return s;
  if (view.v.reserved != 0) return Invalid("options->reserved is " + std::to_string(view.v.reserved) + "; it must be 0");
  if (view.v.workspace == nullptr && view.v.workspace_size != 0) {
    return Invalid("options->workspace is NULL but workspace_size is " + std::to_string(view.v.workspace_size) +
                   "; pass both or neither");
  }
  if (view.v.workspace != nullptr && view.v.workspace_size == 0) {
    return Invalid("options->workspace is set but workspace_size is 0; give its size (roialign_workspace_size)");
  }
  out->workspace = view.v.workspace;
  out->workspace_size = view.v.workspace_size;
  out->num_threads = view.v.num_threads;
  if (view.v.threadpool != nullptr) {
    s = Read(view.v.threadpool, pool);
    if (!s.ok()) return s;
    if (pool->v.reserved != 0) return Invalid("options->threadpool->reserved must be 0");
    out->pool = &pool->v;
  }
  return roialign::Status::Ok();
}

// Every bit of a C mask as a value, unknown ones included, so that registration refuses them by name.
template <typename Enum>
std::vector<Enum> FromMask(uint32_t mask) {
  std::vector<Enum> out;
  for (int i = 0; i < 32; ++i) {
    if (mask & (1u << i)) out.push_back(static_cast<Enum>(i));
  }
  return out;
}

roialign::Status ReadInputs(const roialign_inputs* inputs, InputsView* view) {
  if (inputs == nullptr) return Null("inputs");
  roialign::Status s = ReadChecked(inputs, view);
  if (!s.ok()) return s;
  if (view->v.reserved != 0) return Invalid("inputs->reserved is " + std::to_string(view->v.reserved) + "; it must be 0");
  if (view->v.num_maps < 0 || view->v.num_maps > ROIALIGN_MAX_LEVELS) {
    return Invalid("inputs->num_maps is " + std::to_string(view->v.num_maps) + "; it must be 0 to " +
                   std::to_string(ROIALIGN_MAX_LEVELS));
  }
  return roialign::Status::Ok();
}

// Names as the C list: each followed by a NUL, then one more NUL.
roialign_status WriteNames(const std::vector<std::string>& names, char* buffer, size_t size, size_t* needed) {
  size_t bytes = 1;
  for (const std::string& n : names) bytes += n.size() + 1;
  *needed = bytes;
  if (size < bytes) return ROIALIGN_OK;
  for (const std::string& n : names) {
    std::memcpy(buffer, n.c_str(), n.size() + 1);
    buffer += n.size() + 1;
  }
  *buffer = '\0';
  return ROIALIGN_OK;
}

// One run through either entry point (measure: a workspace query, which writes nothing): the C structs read and
// checked, strided maps made dense, then the one run path on roialign's heap and pool or all in the caller's
// workspace. A single-level kernel takes one map and no levels.
roialign::Status Call(const roialign::internal::Operator& op, const roialign_inputs* inputs, void* output,
                      const roialign_options* options, size_t* measured,
                      const roialign::internal::Gradients* gradients = nullptr) {
  InputsView view;
  roialign::Status s = ReadInputs(inputs, &view);
  if (!s.ok()) return s;
  const roialign_inputs& c = view.v;
  if (op.pyramid == nullptr) {
    if (c.num_maps != 1) {
      return Invalid("inputs->num_maps is " + std::to_string(c.num_maps) + "; roialign_run takes 1 map");
    }
    if (c.levels != nullptr) return Invalid("inputs->levels is for multi-level kernels; it must be NULL here");
  }
  ThreadPoolView pool;
  Threads threads;
  s = ReadOptions(options, &pool, &threads);
  if (!s.ok()) return s;
  const bool measure = measured != nullptr;
  const bool in_arena = measure || threads.workspace != nullptr;
  roialign::internal::Arena arena(measure ? nullptr : threads.workspace, measure ? 0 : threads.workspace_size);
  std::pmr::memory_resource* const heap = in_arena ? &arena : std::pmr::new_delete_resource();
  roialign::LevelMap maps[ROIALIGN_MAX_LEVELS];
  std::pmr::vector<unsigned char> dense_copies[ROIALIGN_MAX_LEVELS] = {
      std::pmr::vector<unsigned char>(heap), std::pmr::vector<unsigned char>(heap),
      std::pmr::vector<unsigned char>(heap), std::pmr::vector<unsigned char>(heap),
      std::pmr::vector<unsigned char>(heap), std::pmr::vector<unsigned char>(heap),
      std::pmr::vector<unsigned char>(heap), std::pmr::vector<unsigned char>(heap)};
  static_assert(ROIALIGN_MAX_LEVELS == 8, "one dense copy per level");
  for (int32_t l = 0; l < c.num_maps; ++l) {
    const void* data = nullptr;
    char what[32];
    std::snprintf(what, sizeof(what), "inputs->maps[%d]", static_cast<int>(l));
    s = roialign::internal::DenseMapData(c.maps[l], c.batch, c.channels, op.params.layout, op.params.dtype, what,
                                         &dense_copies[l], !measure, &data);
    if (!s.ok()) return s;
    maps[l] = {data, c.maps[l].height, c.maps[l].width};
  }
  roialign::internal::CallInputs in;
  in.maps = maps;
  in.num_maps = c.num_maps;
  in.batch = c.batch;
  in.channels = c.channels;
  in.rois = c.rois;
  in.batch_indices = c.batch_indices;
  in.levels = c.levels;
  in.num_rois = c.num_rois;
  in.rois_f64 = c.rois_f64;
  s = roialign::internal::StatusOrOutOfMemory([&] {
    return roialign::internal::RunCall(op, in, output, threads.threading(), in_arena ? &arena : nullptr, measure,
                                       gradients);
  });
  if (measure && s.ok()) *measured = arena.needed();
  return s;
}

template <typename CKernel>
roialign::Status Call(const CKernel* kernel, const roialign_inputs* inputs, void* output,
                      const roialign_options* options, size_t* measured,
                      const roialign::internal::Gradients* gradients = nullptr) {
  if (kernel == nullptr) return Null("kernel");
  return Call(roialign::internal::OperatorOf(kernel->kernel), inputs, output, options, measured, gradients);
}

// A query's stand-in for the output, which it never writes (the run's validation wants one where the output
// has elements).
unsigned char g_no_output;

}  // namespace

extern "C" {

int32_t roialign_version(void) { return ROIALIGN_VERSION; }

roialign_status roialign_select(const char* target, const roialign_params* params, roialign_kernel** kernel) {
  if (kernel != nullptr) *kernel = nullptr;
  return Guard([&]() -> roialign::Status {
    if (target == nullptr) return Null("target");
    if (kernel == nullptr) return Null("kernel");
    roialign::Params p;
    roialign::Status s = ReadParams(params, &p);
    if (!s.ok()) return s;
    roialign::Selection r = roialign::SelectKernel(target, p);
    if (!r.ok()) return r.status();
    *kernel = new roialign_kernel{r.value()};
    return roialign::Status::Ok();
  });
}

roialign_status roialign_multi_level_select(const char* target, const roialign_params* params,
                                           const roialign_multi_level_params* levels,
                                           roialign_multi_level_kernel** kernel) {
  if (kernel != nullptr) *kernel = nullptr;
  return Guard([&]() -> roialign::Status {
    if (target == nullptr) return Null("target");
    if (levels == nullptr) return Null("levels");
    if (kernel == nullptr) return Null("kernel");
    roialign::MultiLevelParams mp;
    roialign::Status s = ReadParams(params, &mp.params);
    if (!s.ok()) return s;
    MultiLevelParamsView view;
    s = Read(levels, &view);
    if (!s.ok()) return s;
    const roialign_multi_level_params& l = view.v;
    if (l.num_levels < 1 || l.num_levels > ROIALIGN_MAX_LEVELS) {
      return Invalid("num_levels must be 1 to " + std::to_string(ROIALIGN_MAX_LEVELS) + " (got " +
                     std::to_string(l.num_levels) + ")");
    }
    mp.scales.assign(l.scales, l.scales + l.num_levels);
    mp.level_rule = static_cast<roialign::LevelRule>(RawEnum(l.level_rule));
    mp.canonical_size = l.canonical_size;
    mp.canonical_level = l.canonical_level;
    roialign::PyramidSelection r = roialign::SelectPyramidKernel(target, mp);
    if (!r.ok()) return r.status;
    *kernel = new roialign_multi_level_kernel{r.kernel};
    return roialign::Status::Ok();
  });
}

const char* roialign_multi_level_kernel_name(const roialign_multi_level_kernel* kernel) {
  return kernel == nullptr ? "" : kernel->kernel.name().c_str();
}

roialign_status roialign_multi_level_run(const roialign_multi_level_kernel* kernel, const roialign_inputs* inputs,
                                         void* output, const roialign_options* options) {
  return Guard([&] { return Call(kernel, inputs, output, options, nullptr); });
}

roialign_status roialign_multi_level_workspace_size(const roialign_multi_level_kernel* kernel,
                                                    const roialign_inputs* inputs, const roialign_options* options,
                                                    size_t* bytes) {
  return Guard([&]() -> roialign::Status {
    if (bytes == nullptr) return Null("bytes");
    return Call(kernel, inputs, &g_no_output, options, bytes);
  });
}

roialign_status roialign_workspace_size(const roialign_kernel* kernel, const roialign_inputs* inputs,
                                        const roialign_options* options, size_t* bytes) {
  return Guard([&]() -> roialign::Status {
    if (bytes == nullptr) return Null("bytes");
    return Call(kernel, inputs, &g_no_output, options, bytes);
  });
}

void roialign_multi_level_kernel_free(roialign_multi_level_kernel* kernel) { delete kernel; }

void roialign_multi_level_kernel_trim(roialign_multi_level_kernel* kernel) {
  if (kernel != nullptr) kernel->kernel.ReleaseWorkingMemory();
}

const char* roialign_kernel_name(const roialign_kernel* kernel) {
  return kernel == nullptr ? "" : kernel->kernel.name().c_str();
}

roialign_status roialign_run_backward(const roialign_kernel* kernel, const roialign_inputs* inputs,
                                      const void* grad_output, void* grad_input, const roialign_options* options) {
  void* const grad_inputs[1] = {grad_input};
  const roialign::internal::Gradients gradients = {grad_output, grad_inputs};
  return Guard([&] { return Call(kernel, inputs, nullptr, options, nullptr, &gradients); });
}

roialign_status roialign_backward_workspace_size(const roialign_kernel* kernel, const roialign_inputs* inputs,
                                                 const roialign_options* options, size_t* bytes) {
  void* const grad_inputs[1] = {&g_no_output};
  const roialign::internal::Gradients gradients = {&g_no_output, grad_inputs};
  return Guard([&]() -> roialign::Status {
    if (bytes == nullptr) return Null("bytes");
    return Call(kernel, inputs, nullptr, options, bytes, &gradients);
  });
}

roialign_status roialign_multi_level_run_backward(const roialign_multi_level_kernel* kernel,
                                                  const roialign_inputs* inputs, const void* grad_output,
                                                  void* const* grad_inputs, const roialign_options* options) {
  const roialign::internal::Gradients gradients = {grad_output, grad_inputs};
  return Guard([&] { return Call(kernel, inputs, nullptr, options, nullptr, &gradients); });
}

roialign_status roialign_multi_level_backward_workspace_size(const roialign_multi_level_kernel* kernel,
                                                             const roialign_inputs* inputs,
                                                             const roialign_options* options, size_t* bytes) {
  // A query writes nothing: stand-ins for every level's dX, which it never touches.
  static void* const kNoGradients[ROIALIGN_MAX_LEVELS] = {&g_no_output, &g_no_output, &g_no_output, &g_no_output,
                                                          &g_no_output, &g_no_output, &g_no_output, &g_no_output};
  const roialign::internal::Gradients gradients = {&g_no_output, kNoGradients};
  return Guard([&]() -> roialign::Status {
    if (bytes == nullptr) return Null("bytes");
    return Call(kernel, inputs, nullptr, options, bytes, &gradients);
  });
}

roialign_status roialign_run(const roialign_kernel* kernel, const roialign_inputs* inputs, void* output,
                             const roialign_options* options) {
  return Guard([&] { return Call(kernel, inputs, output, options, nullptr); });
}

void roialign_kernel_free(roialign_kernel* kernel) { delete kernel; }

void roialign_kernel_trim(roialign_kernel* kernel) {
  if (kernel != nullptr) kernel->kernel.ReleaseWorkingMemory();
}

const char* roialign_last_error(void) { return g_last_error; }

roialign_status roialign_query_target(const char* target, roialign_target_info* info) {
  return Guard([&]() -> roialign::Status {
    if (target == nullptr) return Null("target");
    if (info == nullptr) return Null("info");
    uint32_t size = 0;
    roialign::Status s = CallerSize<TargetInfoView>(info, &size);
    if (!s.ok()) return s;
    roialign::TargetInfo t;
    s = roialign::DescribeTarget(target, &t);
    if (!s.ok()) return s;
    TargetInfoView out;
    out.v.struct_size = size;
    out.v.layouts = roialign::internal::MaskOf(t.layouts);
    out.v.dtypes = roialign::internal::MaskOf(t.dtypes);
    out.v.pool_modes = roialign::internal::MaskOf(t.pool_modes);
    out.v.coordinate_modes = roialign::internal::MaskOf(t.coordinate_modes);
    out.v.preferred_layout = static_cast<roialign_layout>(t.preferred_layout);
    out.v.preferred_block = t.preferred_block;
    out.v.roi_kinds = roialign::internal::MaskOf(t.roi_kinds);
    // Only what the caller's struct holds; fields this library does not know keep the caller's values.
    std::memcpy(static_cast<void*>(info), &out, std::min<size_t>(size, sizeof(out)));
    return s;
  });
}

roialign_status roialign_known_targets(char* buffer, size_t size, size_t* needed) {
  return Guard([&]() -> roialign::Status {
    if (needed == nullptr) return Null("needed");
    if (buffer == nullptr && size != 0) return Null("buffer");
    WriteNames(roialign::TargetNames(), buffer, size, needed);
    return roialign::Status::Ok();
  });
}

roialign_status roialign_implementation_names(const char* target, char* buffer, size_t size, size_t* needed) {
  return Guard([&]() -> roialign::Status {
    if (target == nullptr) return Null("target");
    if (needed == nullptr) return Null("needed");
    if (buffer == nullptr && size != 0) return Null("buffer");
    WriteNames(roialign::ImplementationsOf(target), buffer, size, needed);
    return roialign::Status::Ok();
  });
}

roialign_status roialign_register(const roialign_implementation* caller) {
  return Guard([&]() -> roialign::Status {
    if (caller == nullptr) return Null("impl");
    ImplementationView view;
    roialign::Status s = Read(caller, &view);
    if (!s.ok()) return s;
    const roialign_implementation* impl = &view.v;
    if (impl->target == nullptr || impl->name == nullptr) return Null("impl->target or impl->name");
    if (impl->fn == nullptr) return Null("impl->fn");
    roialign::CustomImplementation c;
    c.target = impl->target;
    c.name = impl->name;
    c.priority = impl->priority;
    c.layouts = FromMask<roialign::Layout>(impl->layouts);
    c.dtypes = FromMask<roialign::DType>(impl->dtypes);
    c.pool_modes = FromMask<roialign::PoolMode>(impl->pool_modes);
    c.coordinate_modes = FromMask<roialign::CoordinateMode>(impl->coordinate_modes);
    const roialign_impl_fn fn = impl->fn;
    void* const user_data = impl->user_data;
    c.fn = [fn, user_data](const roialign_problem& p) -> roialign::Status {
      const roialign_status st = fn(&p, user_data);
      if (st == ROIALIGN_OK) return roialign::Status::Ok();
      return roialign::Status(
          static_cast<roialign::StatusCode>(st >= 0 && st <= ROIALIGN_INTERNAL ? st : ROIALIGN_INTERNAL),
          "registered implementation failed with status " + std::to_string(static_cast<int>(st)));
    };
    return roialign::RegisterCustomImplementation(std::move(c));
  });
}

}  // extern "C"

namespace {

// Every transform: the options read (a workspace is refused: a transform needs no working memory), then the
// internal transform, which validates everything else. The enum values come as the ints a C caller passed (RawEnum
// of the parameters): passing a C enum parameter on by value would load a value outside the enum's range, undefined
// in C++ (found by tests/fuzz/fuzz_transform_layout.cc).
roialign_status Transform(int dtype, int from, int to, const void* input, int64_t batch, int64_t channels,
                          int64_t height, int64_t width, void* output, const roialign_options* options) {
  const auto d = static_cast<roialign::DType>(dtype);
  const auto f = static_cast<roialign::Layout>(from), t = static_cast<roialign::Layout>(to);
  return Guard([&]() -> roialign::Status {
    ThreadPoolView pool;
    Threads threads;
    roialign::Status s = ReadOptions(options, &pool, &threads);
    if (!s.ok()) return s;
    if (threads.workspace != nullptr) {
      return Invalid("options->workspace is set, but layout transforms use no working memory: pass NULL and 0");
    }
    return roialign::internal::TransformTensorLayout(d, f, t, input, batch, channels, height, width, output,
                                                     threads.threading());
  });
}

}  // namespace

extern "C" {

roialign_status roialign_nchw_to_nhwc(roialign_dtype dtype, const void* input, int64_t batch, int64_t channels,
                                      int64_t height, int64_t width, void* output, const roialign_options* options) {
  return Transform(RawEnum(dtype), ROIALIGN_LAYOUT_NCHW, ROIALIGN_LAYOUT_NHWC, input, batch, channels, height, width,
                   output, options);
}

roialign_status roialign_nhwc_to_nchw(roialign_dtype dtype, const void* input, int64_t batch, int64_t channels,
                                      int64_t height, int64_t width, void* output, const roialign_options* options) {
  return Transform(RawEnum(dtype), ROIALIGN_LAYOUT_NHWC, ROIALIGN_LAYOUT_NCHW, input, batch, channels, height, width,
                   output, options);
}

roialign_status roialign_transform_layout(roialign_dtype dtype, roialign_layout from, roialign_layout to,
                                          const void* input, int64_t batch, int64_t channels, int64_t height,
                                          int64_t width, void* output, const roialign_options* options) {
  return Transform(RawEnum(dtype), RawEnum(from), RawEnum(to), input, batch, channels, height, width, output,
                   options);
}

}  // extern "C"

// ---- Names of the enum values, from core/enums.h's tables ----

namespace {

template <typename Enum>
const char* NameIn(int32_t value) {
  if (value < 0 || value >= roialign::internal::EnumCount<Enum>()) return nullptr;
  return roialign::internal::EnumName(static_cast<Enum>(value));
}

template <typename Enum>
int32_t ParseIn(const char* name) {
  Enum e{};
  return name != nullptr && roialign::internal::ParseEnum(name, &e) ? static_cast<int32_t>(e) : -1;
}

// Calls f.template operator()<Enum>() for the enum `kind` names; `unknown` when it names none.
template <typename R, typename F>
R ForKind(int kind, R unknown, F&& f) {
  switch (kind) {
    case ROIALIGN_ENUM_LAYOUT: return f(roialign::Layout{});
    case ROIALIGN_ENUM_DTYPE: return f(roialign::DType{});
    case ROIALIGN_ENUM_POOL_MODE: return f(roialign::PoolMode{});
    case ROIALIGN_ENUM_COORDINATE_MODE: return f(roialign::CoordinateMode{});
    case ROIALIGN_ENUM_LEVEL_RULE: return f(roialign::LevelRule{});
    case ROIALIGN_ENUM_STATUS: return f(roialign::StatusCode{});
    case ROIALIGN_ENUM_ROI_KIND: return f(roialign::RoiKind{});
    case ROIALIGN_ENUM_ANGLE_UNIT: return f(roialign::AngleUnit{});
    case ROIALIGN_ENUM_ROTATION: return f(roialign::Rotation{});
    default: return unknown;
  }
}

}  // namespace

extern "C" {

const char* roialign_enum_name(roialign_enum_kind kind, int32_t value) {
  return ForKind<const char*>(RawEnum(kind), nullptr,
                              [&](auto e) { return NameIn<decltype(e)>(value); });
}

int32_t roialign_enum_parse(roialign_enum_kind kind, const char* name) {
  return ForKind<int32_t>(RawEnum(kind), -1, [&](auto e) { return ParseIn<decltype(e)>(name); });
}

int32_t roialign_layout_channel_block(roialign_layout layout) {
  const int value = RawEnum(layout);
  const auto& blocks = roialign::internal::EnumTraits<roialign::Layout>::kChannelBlock;
  if (value < 0 || static_cast<size_t>(value) >= blocks.size()) return -1;
  return roialign::internal::IsBlocked(static_cast<roialign::Layout>(value))
             ? static_cast<int32_t>(blocks[static_cast<size_t>(value)])
             : 0;
}

}  // extern "C"
