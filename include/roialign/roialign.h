/* Copyright 2026 The roialign Authors
 * SPDX-License-Identifier: Apache-2.0 */
/* roialign: RoIAlign forward on CPUs. Stable C API (C99).
 *
 * Flow: roialign_select() validates the attributes and picks one implementation for a target (or refuses),
 * roialign_run() validates the data and runs it. A kernel is immutable and may be run from many threads.
 * On any failure the output buffer is left exactly as it was and roialign_last_error() explains why. */
#ifndef ROIALIGN_ROIALIGN_H_
#define ROIALIGN_ROIALIGN_H_

#include <stdint.h>

#if defined(_WIN32)
#define ROIALIGN_API
#elif defined(__GNUC__)
#define ROIALIGN_API __attribute__((visibility("default")))
#else
#define ROIALIGN_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  ROIALIGN_OK = 0,
  ROIALIGN_INVALID_ARGUMENT = 1, /* the request is malformed */
  ROIALIGN_UNSUPPORTED = 2,      /* well-formed, but nothing on this target serves it */
  ROIALIGN_OUT_OF_MEMORY = 3,
  ROIALIGN_INTERNAL = 4
} roialign_status;

typedef enum { ROIALIGN_LAYOUT_NCHW = 0, ROIALIGN_LAYOUT_NHWC = 1 } roialign_layout;
typedef enum { ROIALIGN_DTYPE_F32 = 0, ROIALIGN_DTYPE_F16 = 1, ROIALIGN_DTYPE_BF16 = 2 } roialign_dtype;
typedef enum { ROIALIGN_POOL_AVG = 0, ROIALIGN_POOL_MAX = 1, ROIALIGN_POOL_MAX_ONNX = 2 } roialign_pool_mode;
typedef enum {
  ROIALIGN_COORD_LEGACY = 0,
  ROIALIGN_COORD_HALF_PIXEL = 1,
  ROIALIGN_COORD_HALF_PIXEL_CENTERED = 2,
  ROIALIGN_COORD_LEGACY_UNCLAMPED = 3 /* LEGACY without the 1-pixel minimum size: TVM aligned=True */
} roialign_coordinate_mode;

typedef struct {
  int64_t pooled_height, pooled_width;
  float spatial_scale;
  int32_t sampling_ratio; /* > 0 fixed grid, <= 0 adaptive */
  roialign_coordinate_mode coordinate_mode;
  roialign_pool_mode pool_mode;
  roialign_layout layout;
  roialign_dtype dtype;
} roialign_params;

typedef struct roialign_kernel roialign_kernel;

/* Documented limits; requests beyond them are refused with ROIALIGN_INVALID_ARGUMENT. */
#define ROIALIGN_MAX_POOLED_SIZE 65536          /* pooled_height and pooled_width */
#define ROIALIGN_MAX_SAMPLING_GRID 1024         /* grid_h and grid_w, fixed or adaptive, per bin */
#define ROIALIGN_MAX_SAMPLES_PER_AXIS 1048576   /* pooled * grid, per RoI and axis */
#define ROIALIGN_MAX_WORK_PER_CALL (1LL << 36)  /* sum over RoIs of C * PH * PW * grid_h * grid_w */

/* Picks the best implementation of `params` for `target` ("host", "generic", "x86-avx2", a registered name...).
 * On success *kernel owns a new kernel (free it with roialign_kernel_free); on failure *kernel is set to NULL. */
ROIALIGN_API roialign_status roialign_select(const char* target, const roialign_params* params,
                                             roialign_kernel** kernel);
/* The implementation's name, e.g. "roi_align_nhwc.avx512"; valid as long as the kernel. */
ROIALIGN_API const char* roialign_kernel_name(const roialign_kernel* kernel);
/* Runs the kernel. `batch_indices` NULL: rois are [K,5] (batch, x1, y1, x2, y2); otherwise rois are [K,4] and
 * batch_indices holds K int64 values. `num_threads` <= 0: OpenMP's default (a build without OpenMP runs on the
 * calling thread). Output: K*C*PH*PW elements. */
ROIALIGN_API roialign_status roialign_run(const roialign_kernel* kernel, const void* input, int64_t batch,
                                          int64_t channels, int64_t height, int64_t width, const float* rois,
                                          const int64_t* batch_indices, int64_t num_rois, void* output,
                                          int32_t num_threads);
/* ---- Running on the caller's threads ----
 * Engines that run their own thread pool (TBB, pthreadpool, an inference runtime's workers) hand it to roialign
 * instead of letting it open OpenMP threads inside theirs. */

/* One task of a parallel loop. */
typedef void (*roialign_task_fn)(void* task_context, int64_t index);
/* Runs task(task_context, i) once for every i in [0, count), on any threads and in any order; returns when
 * all have finished. */
typedef void (*roialign_parallel_for_fn)(void* pool_context, int64_t count, roialign_task_fn task,
                                         void* task_context);
typedef struct {
  roialign_parallel_for_fn parallel_for;
  void* pool_context;
  int32_t num_threads; /* how many threads the pool runs tasks on; work is split for that many */
} roialign_threadpool;

/* roialign_run on the caller's pool: roialign starts no thread of its own and opens no OpenMP region; every
 * parallel step goes through pool->parallel_for, called from the calling thread after all validation. Results
 * are bit-identical to roialign_run at any thread count. A NULL pool, a NULL parallel_for or num_threads < 1 is
 * ROIALIGN_INVALID_ARGUMENT (output untouched). */
ROIALIGN_API roialign_status roialign_run_with_threadpool(
    const roialign_kernel* kernel, const void* input, int64_t batch, int64_t channels, int64_t height,
    int64_t width, const float* rois, const int64_t* batch_indices, int64_t num_rois, void* output,
    const roialign_threadpool* pool);

/* Frees a kernel; NULL is allowed. */
ROIALIGN_API void roialign_kernel_free(roialign_kernel* kernel);
/* Message of this thread's last failed call ("" if none; at most 1023 bytes); valid until this thread's next call. */
ROIALIGN_API const char* roialign_last_error(void);

/* ---- Multi-level RoIAlign (feature pyramids, docs/multi-level.md) ----
 * Each RoI is pooled from one of up to ROIALIGN_MAX_LEVELS feature maps (the levels of an FPN), chosen by a level
 * rule, in one call; outputs keep the RoIs' order. The maps share batch and channels; each has its own height,
 * width and spatial scale. Every other attribute applies as in roialign_params. */
#define ROIALIGN_MAX_LEVELS 8

typedef enum {
  /* torchvision MultiScaleRoIAlign: floor(canonical_level + log2(sqrt(area) / canonical_size) + 1e-6), clamped to
   * the levels the scales give; the scales must be consecutive powers of two, finest first (e.g. 1/4 .. 1/32). */
  ROIALIGN_LEVEL_RULE_SCALE = 0,
  /* The caller's level per RoI (int32 in [0, num_levels)): Detectron2's, TensorRT's or any other rule. */
  ROIALIGN_LEVEL_RULE_GIVEN = 1,
  /* OpenVINO ExperimentalDetectronROIFeatureExtractor: level 0 is P2, floor(canonical_level - 2 +
   * log2(sqrt(area) / canonical_size + 1e-6)) clamped to [0, num_levels); RoIs of zero or negative area are not
   * pooled and give zeros. */
  ROIALIGN_LEVEL_RULE_OPENVINO = 2
} roialign_level_rule;

typedef struct {
  roialign_params params;               /* params.spatial_scale is not used: each level has its own scale */
  int32_t num_levels;                   /* 1 .. ROIALIGN_MAX_LEVELS */
  float scales[ROIALIGN_MAX_LEVELS];    /* spatial scale of level i (finite, > 0); entries past num_levels unused */
  roialign_level_rule level_rule;
  float canonical_size;                 /* SCALE and OPENVINO rules; 224 in all four reference systems */
  int32_t canonical_level;              /* SCALE and OPENVINO rules; 4 (P4) in all four reference systems */
} roialign_multi_level_params;

/* One level's feature map: batch x channels x height x width in params.layout and params.dtype. */
typedef struct {
  const void* input;
  int64_t height, width;
} roialign_level_map;

typedef struct roialign_multi_level_kernel roialign_multi_level_kernel;

/* Validates the attributes (level count, scales, rule, and everything roialign_select checks) and picks the
 * implementation; built-in implementations only (a registered one is UNSUPPORTED). *kernel NULL on failure. */
ROIALIGN_API roialign_status roialign_multi_level_select(const char* target, const roialign_multi_level_params* params,
                                                         roialign_multi_level_kernel** kernel);
/* The implementation's name; valid as long as the kernel. */
ROIALIGN_API const char* roialign_multi_level_kernel_name(const roialign_multi_level_kernel* kernel);
/* Runs the kernel on `num_maps` maps (must equal num_levels). `levels`: one int32 per RoI with the GIVEN rule,
 * NULL otherwise. rois and batch_indices as in roialign_run. Output: K*C*PH*PW elements in the RoIs' order. */
ROIALIGN_API roialign_status roialign_multi_level_run(const roialign_multi_level_kernel* kernel,
                                                      const roialign_level_map* maps, int32_t num_maps, int64_t batch,
                                                      int64_t channels, const float* rois,
                                                      const int64_t* batch_indices, const int32_t* levels,
                                                      int64_t num_rois, void* output, int32_t num_threads);
/* The same on the caller's pool (rules as roialign_run_with_threadpool). */
ROIALIGN_API roialign_status roialign_multi_level_run_with_threadpool(
    const roialign_multi_level_kernel* kernel, const roialign_level_map* maps, int32_t num_maps, int64_t batch,
    int64_t channels, const float* rois, const int64_t* batch_indices, const int32_t* levels, int64_t num_rois,
    void* output, const roialign_threadpool* pool);
/* Frees a kernel; NULL is allowed. */
ROIALIGN_API void roialign_multi_level_kernel_free(roialign_multi_level_kernel* kernel);

/* ---- Strategy queries (layout planning) and custom targets ---- */

/* What a target can serve. Bit i of a mask is set when enum value i is supported. */
typedef struct {
  uint32_t layouts;          /* bits of roialign_layout */
  uint32_t dtypes;           /* bits of roialign_dtype */
  uint32_t pool_modes;       /* bits of roialign_pool_mode */
  uint32_t coordinate_modes; /* bits of roialign_coordinate_mode */
  roialign_layout preferred_layout; /* the layout of its highest-priority implementation */
} roialign_target_info;

/* Fills *info for `target`; UNSUPPORTED when the target exists but nothing serves it on this CPU/build,
 * INVALID_ARGUMENT when the name is unknown. */
ROIALIGN_API roialign_status roialign_query_target(const char* target, roialign_target_info* info);

/* Everything a registered implementation receives; data already validated (batch indices in range,
 * coordinates finite, sizes consistent). Output is K*C*PH*PW elements in `params->layout`. */
typedef struct {
  const roialign_params* params;
  const void* input;
  int64_t batch, channels, height, width;
  const float* rois;            /* [K,5] when batch_indices is NULL, else [K,4] */
  const int64_t* batch_indices; /* may be NULL */
  int64_t num_rois;
  void* output;
  int32_t num_threads;                 /* as the caller passed it to roialign_run (<= 0: its default) */
  const roialign_threadpool* threadpool; /* the caller's pool (roialign_run_with_threadpool), else NULL */
} roialign_problem;

/* A user implementation: returns ROIALIGN_OK or an error status (the caller sees it as returned). */
typedef roialign_status (*roialign_impl_fn)(const roialign_problem* problem, void* user_data);

typedef struct {
  const char* target;   /* the target it serves, e.g. "npu"; built-in target names are refused */
  const char* name;     /* e.g. "roi_align_nhwc.npu"; unique */
  int32_t priority;     /* higher wins among implementations that match a request */
  uint32_t layouts, dtypes, pool_modes, coordinate_modes; /* masks as in roialign_target_info */
  roialign_impl_fn fn;
  void* user_data;
} roialign_implementation;

/* Registers `impl` (copied; strings copied). Thread-safe; existing kernels stay valid. */
ROIALIGN_API roialign_status roialign_register(const roialign_implementation* impl);

/* ---- Layout transforms (for engines that convert around roi_align) ---- */

/* NCHW -> NHWC and back, float32, for the whole tensor. `num_threads` <= 0: OpenMP's default. */
ROIALIGN_API roialign_status roialign_nchw_to_nhwc_f32(const float* input, int64_t batch, int64_t channels,
                                                       int64_t height, int64_t width, float* output,
                                                       int32_t num_threads);
ROIALIGN_API roialign_status roialign_nhwc_to_nchw_f32(const float* input, int64_t batch, int64_t channels,
                                                       int64_t height, int64_t width, float* output,
                                                       int32_t num_threads);
/* The same on the caller's pool (rules as roialign_run_with_threadpool). */
ROIALIGN_API roialign_status roialign_nchw_to_nhwc_f32_with_threadpool(const float* input, int64_t batch,
                                                                       int64_t channels, int64_t height,
                                                                       int64_t width, float* output,
                                                                       const roialign_threadpool* pool);
ROIALIGN_API roialign_status roialign_nhwc_to_nchw_f32_with_threadpool(const float* input, int64_t batch,
                                                                       int64_t channels, int64_t height,
                                                                       int64_t width, float* output,
                                                                       const roialign_threadpool* pool);
/* The same for tensors of any dtype (F16 and BF16 elements are moved as they are, bit for bit). */
ROIALIGN_API roialign_status roialign_nchw_to_nhwc(roialign_dtype dtype, const void* input, int64_t batch,
                                                   int64_t channels, int64_t height, int64_t width, void* output,
                                                   int32_t num_threads);
ROIALIGN_API roialign_status roialign_nhwc_to_nchw(roialign_dtype dtype, const void* input, int64_t batch,
                                                   int64_t channels, int64_t height, int64_t width, void* output,
                                                   int32_t num_threads);
/* The same on the caller's pool (rules as roialign_run_with_threadpool). */
ROIALIGN_API roialign_status roialign_nchw_to_nhwc_with_threadpool(roialign_dtype dtype, const void* input,
                                                                   int64_t batch, int64_t channels, int64_t height,
                                                                   int64_t width, void* output,
                                                                   const roialign_threadpool* pool);
ROIALIGN_API roialign_status roialign_nhwc_to_nchw_with_threadpool(roialign_dtype dtype, const void* input,
                                                                   int64_t batch, int64_t channels, int64_t height,
                                                                   int64_t width, void* output,
                                                                   const roialign_threadpool* pool);

/* ---- Names of the enum values (the library's one list; bindings and engines read it instead of copies) ---- */

typedef enum {
  ROIALIGN_ENUM_LAYOUT = 0,          /* roialign_layout: "NCHW", "NHWC" */
  ROIALIGN_ENUM_DTYPE = 1,           /* roialign_dtype: "F32", "F16", "BF16" */
  ROIALIGN_ENUM_POOL_MODE = 2,       /* roialign_pool_mode: "AVG", "MAX", "MAX_ONNX" */
  ROIALIGN_ENUM_COORDINATE_MODE = 3, /* roialign_coordinate_mode: "LEGACY", "HALF_PIXEL", ... */
  ROIALIGN_ENUM_LEVEL_RULE = 4,      /* roialign_level_rule: "SCALE", "GIVEN", "OPENVINO" */
  ROIALIGN_ENUM_STATUS = 5           /* roialign_status: "OK", "INVALID_ARGUMENT", ... */
} roialign_enum_kind;

/* The name of `value` in the enum `kind` (a static string), or NULL when either is unknown. The values of each
   enum are 0, 1, 2, ... with no gaps, so counting up from 0 until NULL lists them all. */
ROIALIGN_API const char* roialign_enum_name(roialign_enum_kind kind, int32_t value);

/* The value of the enum `kind` named `name`, spelled exactly as roialign_enum_name spells it; -1 when `kind` is
   unknown, `name` is NULL or no value has that name. */
ROIALIGN_API int32_t roialign_enum_parse(roialign_enum_kind kind, const char* name);

#ifdef __cplusplus
}
#endif

#endif /* ROIALIGN_ROIALIGN_H_ */
