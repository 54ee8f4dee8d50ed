// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The C API: a thin wrapper over the C++ API that never lets an exception cross the boundary.
#include <algorithm>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <utility>

#include "core/enums.h"
#include "roialign/roialign.h"
#include "roialign/roialign.hpp"

struct roialign_kernel {
  roialign::Kernel kernel;
};

struct roialign_multi_level_kernel {
  roialign::MultiLevelKernel kernel;
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
  return out;
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

roialign::Inputs InputsOf(const void* input, int64_t batch, int64_t channels, int64_t height, int64_t width,
                         const float* rois, const int64_t* batch_indices, int64_t num_rois) {
  roialign::Inputs in;
  in.input = input;
  in.batch = batch;
  in.channels = channels;
  in.height = height;
  in.width = width;
  in.rois = rois;
  in.batch_indices = batch_indices;
  in.num_rois = num_rois;
  return in;
}

roialign::MultiLevelInputs MultiLevelInputsOf(const roialign_level_map* maps, int32_t num_maps, int64_t batch,
                                              int64_t channels, const float* rois, const int64_t* batch_indices,
                                              const int32_t* levels, int64_t num_rois) {
  roialign::MultiLevelInputs in;
  in.maps = maps;
  in.num_maps = num_maps;
  in.batch = batch;
  in.channels = channels;
  in.rois = rois;
  in.batch_indices = batch_indices;
  in.levels = levels;
  in.num_rois = num_rois;
  return in;
}

roialign::Status Null(const char* what) {
  return roialign::Status(roialign::StatusCode::kInvalidArgument, std::string(what) + " is null");
}

}  // namespace

extern "C" {

roialign_status roialign_select(const char* target, const roialign_params* params, roialign_kernel** kernel) {
  if (kernel != nullptr) *kernel = nullptr;
  return Guard([&]() -> roialign::Status {
    if (target == nullptr) return Null("target");
    if (params == nullptr) return Null("params");
    if (kernel == nullptr) return Null("kernel");
    roialign::SelectResult r = roialign::Select(target, ToParams(*params));
    if (!r.ok()) return r.status();
    *kernel = new roialign_kernel{r.value()};
    return roialign::Status::Ok();
  });
}

roialign_status roialign_multi_level_select(const char* target, const roialign_multi_level_params* params,
                                           roialign_multi_level_kernel** kernel) {
  if (kernel != nullptr) *kernel = nullptr;
  return Guard([&]() -> roialign::Status {
    if (target == nullptr) return Null("target");
    if (params == nullptr) return Null("params");
    if (kernel == nullptr) return Null("kernel");
    if (params->num_levels < 1 || params->num_levels > ROIALIGN_MAX_LEVELS) {
      return roialign::Status(roialign::StatusCode::kInvalidArgument,
                              "num_levels must be 1 to " + std::to_string(ROIALIGN_MAX_LEVELS) + " (got " +
                                  std::to_string(params->num_levels) + ")");
    }
    roialign::MultiLevelParams mp;
    mp.params = ToParams(params->params);
    mp.scales.assign(params->scales, params->scales + params->num_levels);
    mp.level_rule = static_cast<roialign::LevelRule>(RawEnum(params->level_rule));
    mp.canonical_size = params->canonical_size;
    mp.canonical_level = params->canonical_level;
    roialign::MultiLevelSelectResult r = roialign::SelectMultiLevel(target, mp);
    if (!r.ok()) return r.status;
    *kernel = new roialign_multi_level_kernel{r.kernel};
    return roialign::Status::Ok();
  });
}

const char* roialign_multi_level_kernel_name(const roialign_multi_level_kernel* kernel) {
  return kernel == nullptr ? "" : kernel->kernel.name().c_str();
}

roialign_status roialign_multi_level_run(const roialign_multi_level_kernel* kernel, const roialign_level_map* maps,
                                         int32_t num_maps, int64_t batch, int64_t channels, const float* rois,
                                         const int64_t* batch_indices, const int32_t* levels, int64_t num_rois,
                                         void* output, int32_t num_threads) {
  return Guard([&]() -> roialign::Status {
    if (kernel == nullptr) return Null("kernel");
    return kernel->kernel.Run(
        MultiLevelInputsOf(maps, num_maps, batch, channels, rois, batch_indices, levels, num_rois), output,
        num_threads);
  });
}

roialign_status roialign_multi_level_run_with_threadpool(const roialign_multi_level_kernel* kernel,
                                                         const roialign_level_map* maps, int32_t num_maps,
                                                         int64_t batch, int64_t channels, const float* rois,
                                                         const int64_t* batch_indices, const int32_t* levels,
                                                         int64_t num_rois, void* output,
                                                         const roialign_threadpool* pool) {
  return Guard([&]() -> roialign::Status {
    if (kernel == nullptr) return Null("kernel");
    if (pool == nullptr) return Null("pool");
    return kernel->kernel.Run(
        MultiLevelInputsOf(maps, num_maps, batch, channels, rois, batch_indices, levels, num_rois), output, *pool);
  });
}

void roialign_multi_level_kernel_free(roialign_multi_level_kernel* kernel) { delete kernel; }

const char* roialign_kernel_name(const roialign_kernel* kernel) {
  return kernel == nullptr ? "" : kernel->kernel.name().c_str();
}

roialign_status roialign_run(const roialign_kernel* kernel, const void* input, int64_t batch, int64_t channels,
                             int64_t height, int64_t width, const float* rois, const int64_t* batch_indices,
                             int64_t num_rois, void* output, int32_t num_threads) {
  return Guard([&]() -> roialign::Status {
    if (kernel == nullptr) return Null("kernel");
    return kernel->kernel.Run(InputsOf(input, batch, channels, height, width, rois, batch_indices, num_rois),
                              output, num_threads);
  });
}

roialign_status roialign_run_with_threadpool(const roialign_kernel* kernel, const void* input, int64_t batch,
                                             int64_t channels, int64_t height, int64_t width, const float* rois,
                                             const int64_t* batch_indices, int64_t num_rois, void* output,
                                             const roialign_threadpool* pool) {
  return Guard([&]() -> roialign::Status {
    if (kernel == nullptr) return Null("kernel");
    if (pool == nullptr) return Null("pool");
    return kernel->kernel.Run(InputsOf(input, batch, channels, height, width, rois, batch_indices, num_rois),
                              output, *pool);
  });
}

void roialign_kernel_free(roialign_kernel* kernel) { delete kernel; }

const char* roialign_last_error(void) { return g_last_error; }

roialign_status roialign_query_target(const char* target, roialign_target_info* info) {
  return Guard([&]() -> roialign::Status {
    if (target == nullptr) return Null("target");
    if (info == nullptr) return Null("info");
    roialign::TargetInfo t;
    roialign::Status s = roialign::QueryTarget(target, &t);
    if (!s.ok()) return s;
    info->layouts = roialign::internal::MaskOf(t.layouts);
    info->dtypes = roialign::internal::MaskOf(t.dtypes);
    info->pool_modes = roialign::internal::MaskOf(t.pool_modes);
    info->coordinate_modes = roialign::internal::MaskOf(t.coordinate_modes);
    info->preferred_layout = static_cast<roialign_layout>(t.preferred_layout);
    return s;
  });
}

roialign_status roialign_register(const roialign_implementation* impl) {
  return Guard([&]() -> roialign::Status {
    if (impl == nullptr) return Null("impl");
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
      const roialign_status s = fn(&p, user_data);
      if (s == ROIALIGN_OK) return roialign::Status::Ok();
      return roialign::Status(static_cast<roialign::StatusCode>(s >= 0 && s <= ROIALIGN_INTERNAL ? s : ROIALIGN_INTERNAL),
                              "registered implementation failed with status " + std::to_string(static_cast<int>(s)));
    };
    return roialign::Register(std::move(c));
  });
}

roialign_status roialign_nchw_to_nhwc_f32(const float* input, int64_t batch, int64_t channels, int64_t height,
                                          int64_t width, float* output, int32_t num_threads) {
  return Guard([&] { return roialign::NchwToNhwc(input, batch, channels, height, width, output, num_threads); });
}

roialign_status roialign_nhwc_to_nchw_f32(const float* input, int64_t batch, int64_t channels, int64_t height,
                                          int64_t width, float* output, int32_t num_threads) {
  return Guard([&] { return roialign::NhwcToNchw(input, batch, channels, height, width, output, num_threads); });
}

roialign_status roialign_nchw_to_nhwc_f32_with_threadpool(const float* input, int64_t batch, int64_t channels,
                                                          int64_t height, int64_t width, float* output,
                                                          const roialign_threadpool* pool) {
  return Guard([&] {
    return pool == nullptr ? Null("pool")
                           : roialign::NchwToNhwc(input, batch, channels, height, width, output, *pool);
  });
}

roialign_status roialign_nhwc_to_nchw_f32_with_threadpool(const float* input, int64_t batch, int64_t channels,
                                                          int64_t height, int64_t width, float* output,
                                                          const roialign_threadpool* pool) {
  return Guard([&] {
    return pool == nullptr ? Null("pool")
                           : roialign::NhwcToNchw(input, batch, channels, height, width, output, *pool);
  });
}

roialign_status roialign_nchw_to_nhwc(roialign_dtype dtype, const void* input, int64_t batch, int64_t channels,
                                      int64_t height, int64_t width, void* output, int32_t num_threads) {
  const auto d = static_cast<roialign::DType>(RawEnum(dtype));
  return Guard([&] { return roialign::NchwToNhwc(d, input, batch, channels, height, width, output, num_threads); });
}

roialign_status roialign_nhwc_to_nchw(roialign_dtype dtype, const void* input, int64_t batch, int64_t channels,
                                      int64_t height, int64_t width, void* output, int32_t num_threads) {
  const auto d = static_cast<roialign::DType>(RawEnum(dtype));
  return Guard([&] { return roialign::NhwcToNchw(d, input, batch, channels, height, width, output, num_threads); });
}

roialign_status roialign_nchw_to_nhwc_with_threadpool(roialign_dtype dtype, const void* input, int64_t batch,
                                                      int64_t channels, int64_t height, int64_t width, void* output,
                                                      const roialign_threadpool* pool) {
  const auto d = static_cast<roialign::DType>(RawEnum(dtype));
  return Guard([&] {
    return pool == nullptr ? Null("pool")
                           : roialign::NchwToNhwc(d, input, batch, channels, height, width, output, *pool);
  });
}

roialign_status roialign_nhwc_to_nchw_with_threadpool(roialign_dtype dtype, const void* input, int64_t batch,
                                                      int64_t channels, int64_t height, int64_t width, void* output,
                                                      const roialign_threadpool* pool) {
  const auto d = static_cast<roialign::DType>(RawEnum(dtype));
  return Guard([&] {
    return pool == nullptr ? Null("pool")
                           : roialign::NhwcToNchw(d, input, batch, channels, height, width, output, *pool);
  });
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
    default: return unknown;
  }
}

}  // namespace

extern "C" {

const char* roialign_enum_name(roialign_enum_kind kind, int32_t value) {
  return ForKind<const char*>(static_cast<int>(kind), nullptr,
                              [&](auto e) { return NameIn<decltype(e)>(value); });
}

int32_t roialign_enum_parse(roialign_enum_kind kind, const char* name) {
  return ForKind<int32_t>(static_cast<int>(kind), -1, [&](auto e) { return ParseIn<decltype(e)>(name); });
}

}  // extern "C"
