/* Copyright 2026 The roialign Authors
 * SPDX-License-Identifier: Apache-2.0 */
/* roialign: RoIAlign forward on CPUs. The C API (C99), stable within a major version (docs/api.md, "ABI").
 *
 * Flow: roialign_select() validates the attributes and picks one implementation for a target (or refuses),
 * roialign_run() validates the data and runs it. A kernel is immutable and may be run from many threads.
 * On any failure the output buffer is left exactly as it was and roialign_last_error() explains why.
 *
 * Every struct a caller passes starts with `struct_size`, the sizeof() the caller was compiled with, and
 * `flags`; its roialign_*_init() writes both and the defaults. The library reads only the bytes struct_size
 * covers and gives every field past them its default, so a binary built against 1.0 keeps working with 1.x. */
#ifndef ROIALIGN_ROIALIGN_H_
#define ROIALIGN_ROIALIGN_H_

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define ROIALIGN_API
#elif defined(__GNUC__)
#define ROIALIGN_API __attribute__((visibility("default")))
#else
#define ROIALIGN_API
#endif

/* The version of this header; roialign_version() gives the library's. */
#define ROIALIGN_VERSION_MAJOR 1
#define ROIALIGN_VERSION_MINOR 4
#define ROIALIGN_VERSION_PATCH 0
#define ROIALIGN_VERSION (ROIALIGN_VERSION_MAJOR * 10000 + ROIALIGN_VERSION_MINOR * 100 + ROIALIGN_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  ROIALIGN_OK = 0,
  ROIALIGN_INVALID_ARGUMENT = 1, /* the request is malformed */
  ROIALIGN_UNSUPPORTED = 2,      /* well-formed, but nothing on this target (or in this version) serves it */
  ROIALIGN_OUT_OF_MEMORY = 3,
  ROIALIGN_INTERNAL = 4
} roialign_status;

/* NCHW [N][C][H][W] and NHWC [N][H][W][C]; the channel-blocked layouts NCHW4c, NCHW8c and NCHW16c are
 * [N][ceil(C/b)][H][W][b] for b = 4, 8, 16 (oneDNN's nChw8c/nChw16c, TVM's NCHW[x]c, MNN's NC4HW4): the padded
 * lanes of the last block (C not a multiple of b) are never read into a result, and are written as 0 in the output
 * (docs/semantics.md). Since 1.1. */
typedef enum {
  ROIALIGN_LAYOUT_NCHW = 0,
  ROIALIGN_LAYOUT_NHWC = 1,
  ROIALIGN_LAYOUT_NCHW4C = 2,
  ROIALIGN_LAYOUT_NCHW8C = 3,
  ROIALIGN_LAYOUT_NCHW16C = 4
} roialign_layout;
/* F64 (since 1.3): float64 maps and outputs, computed in double, with the RoIs (roialign_inputs.rois_f64) and
 * the spatial scale (roialign_params.spatial_scale_f64) in double too (docs/semantics.md#float64). */
typedef enum {
  ROIALIGN_DTYPE_F32 = 0,
  ROIALIGN_DTYPE_F16 = 1,
  ROIALIGN_DTYPE_BF16 = 2,
  ROIALIGN_DTYPE_F64 = 3
} roialign_dtype;
typedef enum { ROIALIGN_POOL_AVG = 0, ROIALIGN_POOL_MAX = 1, ROIALIGN_POOL_MAX_ONNX = 2 } roialign_pool_mode;
typedef enum {
  ROIALIGN_COORD_LEGACY = 0,
  ROIALIGN_COORD_HALF_PIXEL = 1,
  ROIALIGN_COORD_HALF_PIXEL_CENTERED = 2,
  ROIALIGN_COORD_LEGACY_UNCLAMPED = 3 /* LEGACY without the 1-pixel minimum size: TVM aligned=True */
} roialign_coordinate_mode;

/* Rotated RoIs (since 1.4; docs/semantics.md#rotated-rois): a RoI is a box (cx, cy, w, h, angle) turned about its
 * centre (detectron2's and mmcv's ROIAlignRotated, OpenVINO's ROIAlignRotated-15). The angle's unit and the
 * direction it turns are attributes; `aligned` is the coordinate mode: HALF_PIXEL (aligned: the centre moves by
 * -0.5 pixel) or LEGACY (mmcv's aligned=False: w and h at least 1 pixel). */
typedef enum { ROIALIGN_ROI_AXIS_ALIGNED = 0, ROIALIGN_ROI_ROTATED = 1 } roialign_roi_kind;
typedef enum { ROIALIGN_ANGLE_RADIANS = 0, ROIALIGN_ANGLE_DEGREES = 1 } roialign_angle_unit;
typedef enum { ROIALIGN_ROTATION_COUNTER_CLOCKWISE = 0, ROIALIGN_ROTATION_CLOCKWISE = 1 } roialign_rotation;

/* ROIALIGN_VERSION of the library that is running (a 1.0 binary may run on a 1.3 library). */
ROIALIGN_API int32_t roialign_version(void);

/* ---- Growable structs ----
 * struct_size: the caller's sizeof(the struct); below the struct's 1.0 size is INVALID_ARGUMENT, above what
 *              this library knows is accepted when every byte the library does not know is zero (a newer
 *              caller asking for nothing new), else UNSUPPORTED. At most ROIALIGN_MAX_STRUCT_SIZE.
 * flags:       bits of options; none in 1.0, ROIALIGN_PARAMS_BACKWARD since 1.2; an unknown bit is UNSUPPORTED.
 * reserved:    0. */
#define ROIALIGN_MAX_STRUCT_SIZE 4096

/* Operator attributes (docs/semantics.md). */
typedef struct {
  uint32_t struct_size;
  uint32_t flags;
  int64_t pooled_height, pooled_width; /* default 7 x 7 */
  float spatial_scale;                 /* default 1 */
  int32_t sampling_ratio;              /* > 0 fixed grid, <= 0 adaptive (default 0) */
  roialign_coordinate_mode coordinate_mode; /* default LEGACY */
  roialign_pool_mode pool_mode;        /* default AVG */
  roialign_layout layout;              /* default NCHW */
  roialign_dtype dtype;                /* default F32 */
  /* Since 1.3. The spatial scale of an F64 kernel, which reads it in double; 0 (the default) takes spatial_scale.
   * Other dtypes read spatial_scale and require this to be 0. */
  double spatial_scale_f64;
  /* Since 1.4. ROTATED: the RoIs are rotated boxes, rows of 6 (batch, cx, cy, w, h, angle) or of 5 with batch
   * indices, in coordinate mode HALF_PIXEL or LEGACY. angle_unit and rotation are read for ROTATED only and must be
   * 0 otherwise. */
  roialign_roi_kind roi_kind;     /* default AXIS_ALIGNED */
  roialign_angle_unit angle_unit; /* default RADIANS */
  roialign_rotation rotation;     /* default COUNTER_CLOCKWISE: a positive angle turns x towards y */
  int32_t reserved;               /* 0 */
} roialign_params;

/* roialign_params.flags (since 1.2): the kernel must also run the backward (roialign_run_backward). Selection then
 * picks the best implementation of the target that has one for the dtype, or refuses (UNSUPPORTED, naming the
 * targets that have one). */
#define ROIALIGN_PARAMS_BACKWARD 1u

static inline void roialign_params_init(roialign_params* params) {
  const roialign_params defaults = {sizeof(roialign_params), 0u, 7, 7, 1.0f, 0, ROIALIGN_COORD_LEGACY,
                                    ROIALIGN_POOL_AVG, ROIALIGN_LAYOUT_NCHW, ROIALIGN_DTYPE_F32, 0.0,
                                    ROIALIGN_ROI_AXIS_ALIGNED, ROIALIGN_ANGLE_RADIANS,
                                    ROIALIGN_ROTATION_COUNTER_CLOCKWISE, 0};
  *params = defaults;
}

#define ROIALIGN_MAX_LEVELS 8

/* One feature map: batch x channels x height x width elements in the kernel's layout and dtype. Its size is fixed
 * in 1.x (roialign_inputs holds an array of them); later per-map attributes come as new fields at the end of
 * roialign_inputs.
 * strides: element strides of the dimensions in the layout's order (NCHW: n, c, h, w; NHWC: n, h, w, c; the
 * blocked layouts: n, channel block, h, w, a block's b channels contiguous), each
 * >= 0; all four 0 (the default) means dense. A view (a channel slice, padded rows, a batch of crops) is read
 * through them: roialign copies a map whose strides are not dense into a dense buffer of its own before the run
 * (one pass over the map, memory of the map's dense size; docs/api.md). */
typedef struct {
  const void* data;
  int64_t height, width;
  int64_t strides[4];
} roialign_map;

/* One call's data. */
typedef struct {
  uint32_t struct_size;
  uint32_t flags;
  int64_t batch, channels; /* shared by every map */
  int32_t num_maps;        /* roialign_run: 1 (the default); roialign_multi_level_run: the kernel's num_levels */
  int32_t reserved;
  roialign_map maps[ROIALIGN_MAX_LEVELS]; /* maps[0 .. num_maps) */
  /* [K,5] (batch, x1, y1, x2, y2) when batch_indices is NULL, else [K,4]; rotated RoIs (roi_kind ROTATED): [K,6]
   * (batch, cx, cy, w, h, angle) when batch_indices is NULL, else [K,5] (cx, cy, w, h, angle). */
  const float* rois;
  const int64_t* batch_indices; /* NULL, or K int64 values */
  const int32_t* levels;        /* multi-level with ROIALIGN_LEVEL_RULE_GIVEN: one level per RoI; else NULL */
  int64_t num_rois;             /* K */
  /* Since 1.3. An F64 kernel's RoIs, in double, shaped as `rois` is; `rois` is then NULL. Other dtypes read
   * `rois` and require this to be NULL. */
  const double* rois_f64;
} roialign_inputs;

static inline void roialign_inputs_init(roialign_inputs* inputs) {
  const roialign_inputs defaults = {sizeof(roialign_inputs), 0u, 0, 0, 1, 0, {{0, 0, 0, {0, 0, 0, 0}}}, 0, 0, 0, 0, 0};
  *inputs = defaults;
}

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
  uint32_t struct_size;
  uint32_t flags;
  roialign_parallel_for_fn parallel_for;
  void* pool_context;
  int32_t num_threads; /* how many threads the pool runs tasks on; work is split for that many */
  int32_t reserved;
} roialign_threadpool;

static inline void roialign_threadpool_init(roialign_threadpool* pool) {
  const roialign_threadpool defaults = {sizeof(roialign_threadpool), 0u, 0, 0, 0, 0};
  *pool = defaults;
}

/* How a call runs. NULL wherever roialign_options is taken means the defaults. */
typedef struct {
  uint32_t struct_size;
  uint32_t flags;
  /* roialign's own threads: > 0 at most that many, <= 0 OpenMP's default (the default; a build without OpenMP
   * runs on the calling thread). Not used with a threadpool. */
  int32_t num_threads;
  int32_t reserved;
  /* The caller's pool, or NULL (the default) for roialign's own threads. With a pool, roialign starts no thread
   * and opens no OpenMP region: every parallel step goes through pool->parallel_for, called from the calling
   * thread after all validation. A NULL parallel_for or num_threads < 1 is INVALID_ARGUMENT. */
  const roialign_threadpool* threadpool;
  /* Caller-owned working memory (docs/api.md, "Workspace"): NULL and 0 (the default) for roialign's own, kept
   * with the kernel between runs; else a block of workspace_size >= roialign_workspace_size() bytes, any
   * alignment, that the run lays everything out in: it then allocates nothing. Too small is INVALID_ARGUMENT
   * naming the bytes needed; NULL with a size, or a block with size 0, INVALID_ARGUMENT. The caller leaves it
   * untouched until the run returns, and gives each concurrent run its own. Transforms take none (NULL, else
   * INVALID_ARGUMENT). */
  void* workspace;
  size_t workspace_size;
} roialign_options;

static inline void roialign_options_init(roialign_options* options) {
  const roialign_options defaults = {sizeof(roialign_options), 0u, 0, 0, 0, 0, 0};
  *options = defaults;
}

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
/* Runs the kernel on inputs->maps[0] (num_maps 1, levels NULL). Output: K*C*PH*PW elements in the layout.
 * Results are bit-identical for any thread count and any pool. */
ROIALIGN_API roialign_status roialign_run(const roialign_kernel* kernel, const roialign_inputs* inputs, void* output,
                                          const roialign_options* options);
/* *bytes = the exact workspace a roialign_run with these inputs and options (thread count, pool) needs: its plan,
 * per-thread scratch, band buffer, partial state and strided-map copy, plus alignment slack. Validates as
 * roialign_run does (same errors, same messages; options->workspace is not used) and writes nothing else.
 * Since 1.1. */
ROIALIGN_API roialign_status roialign_workspace_size(const roialign_kernel* kernel, const roialign_inputs* inputs,
                                                     const roialign_options* options, size_t* bytes);
/* Frees a kernel; NULL is allowed. */
ROIALIGN_API void roialign_kernel_free(roialign_kernel* kernel);
/* Frees the working memory the kernel keeps between runs (per-thread scratch, the NCHW band buffer, partial
 * state: up to tens of MB after a large call). Safe while other threads run the kernel: their runs keep what they
 * hold. The next run allocates it again. NULL is allowed. */
ROIALIGN_API void roialign_kernel_trim(roialign_kernel* kernel);
/* Message of this thread's last failed call ("" if none; at most 1023 bytes); valid until this thread's next call. */
ROIALIGN_API const char* roialign_last_error(void);

/* ---- Multi-level RoIAlign (feature pyramids, docs/multi-level.md) ----
 * Each RoI is pooled from one of up to ROIALIGN_MAX_LEVELS feature maps (the levels of an FPN), chosen by a level
 * rule, in one call; outputs keep the RoIs' order. The maps share batch and channels; each has its own height,
 * width and spatial scale. Every other attribute comes from a roialign_params. */

typedef enum {
  /* torchvision MultiScaleRoIAlign: floor(canonical_level + log2(sqrt(area) / canonical_size) + 1e-6), clamped to
   * the levels the first and last scales give, as torchvision's LevelMapper; the scales must be powers of two
   * (e.g. 1/4 .. 1/32; repeated scales allowed). */
  ROIALIGN_LEVEL_RULE_SCALE = 0,
  /* The caller's level per RoI (int32 in [0, num_levels)): Detectron2's, TensorRT's or any other rule. */
  ROIALIGN_LEVEL_RULE_GIVEN = 1,
  /* OpenVINO ExperimentalDetectronROIFeatureExtractor: level 0 is P2, floor(canonical_level - 2 +
   * log2(sqrt(area) / canonical_size + 1e-6)) clamped to [0, num_levels); RoIs of zero or negative area are not
   * pooled and give zeros. */
  ROIALIGN_LEVEL_RULE_OPENVINO = 2
} roialign_level_rule;

/* The levels' attributes. */
typedef struct {
  uint32_t struct_size;
  uint32_t flags;
  int32_t num_levels;                   /* 1 .. ROIALIGN_MAX_LEVELS (default 1) */
  float scales[ROIALIGN_MAX_LEVELS];    /* spatial scale of level i (finite, > 0); entries past num_levels unused */
  roialign_level_rule level_rule;       /* default SCALE */
  float canonical_size;                 /* SCALE and OPENVINO rules; 224 (the default) in all four reference systems */
  int32_t canonical_level;              /* SCALE and OPENVINO rules; 4 (P4, the default) in all four */
} roialign_multi_level_params;

static inline void roialign_multi_level_params_init(roialign_multi_level_params* params) {
  const roialign_multi_level_params defaults = {sizeof(roialign_multi_level_params), 0u, 1, {1.0f},
                                                ROIALIGN_LEVEL_RULE_SCALE, 224.0f, 4};
  *params = defaults;
}

typedef struct roialign_multi_level_kernel roialign_multi_level_kernel;

/* Validates the attributes (`params` as roialign_select does, its spatial_scale unused; the level count, scales
 * and rule of `levels`) and picks the implementation; built-in implementations only (a registered one is
 * UNSUPPORTED). *kernel NULL on failure. */
ROIALIGN_API roialign_status roialign_multi_level_select(const char* target, const roialign_params* params,
                                                         const roialign_multi_level_params* levels,
                                                         roialign_multi_level_kernel** kernel);
/* The implementation's name; valid as long as the kernel. */
ROIALIGN_API const char* roialign_multi_level_kernel_name(const roialign_multi_level_kernel* kernel);
/* Runs the kernel on inputs->maps[0 .. num_maps) (num_maps must equal num_levels); inputs->levels one int32 per
 * RoI with the GIVEN rule, NULL otherwise. Output: K*C*PH*PW elements in the RoIs' order. */
ROIALIGN_API roialign_status roialign_multi_level_run(const roialign_multi_level_kernel* kernel,
                                                      const roialign_inputs* inputs, void* output,
                                                      const roialign_options* options);
/* As roialign_workspace_size, for roialign_multi_level_run (every level's plan and the level bookkeeping). */
ROIALIGN_API roialign_status roialign_multi_level_workspace_size(const roialign_multi_level_kernel* kernel,
                                                                 const roialign_inputs* inputs,
                                                                 const roialign_options* options, size_t* bytes);
/* Frees a kernel; NULL is allowed. */
ROIALIGN_API void roialign_multi_level_kernel_free(roialign_multi_level_kernel* kernel);
/* As roialign_kernel_trim. */
ROIALIGN_API void roialign_multi_level_kernel_trim(roialign_multi_level_kernel* kernel);

/* ---- Backward (since 1.2; docs/semantics.md#backward) ----
 * The gradient of a run: dX (grad_input: the map's shape, layout and dtype, dense) from dY (grad_output: the
 * output's). The kernel must have been selected with ROIALIGN_PARAMS_BACKWARD. `inputs` are the forward's: the maps
 * (read by the MAX modes, which find each bin's argmax again; their shapes for AVG), the RoIs and, multi-level, the
 * levels, validated as roialign_run validates them. Every element of dX is written (+0 where nothing reaches it),
 * each as a sum in one fixed order: the bits are the same for any thread count and any pool. grad_output and
 * grad_input must not overlap each other or a map (INVALID_ARGUMENT). On error dX is untouched. */
ROIALIGN_API roialign_status roialign_run_backward(const roialign_kernel* kernel, const roialign_inputs* inputs,
                                                   const void* grad_output, void* grad_input,
                                                   const roialign_options* options);
/* *bytes = the workspace roialign_run_backward needs with these inputs and options; as roialign_workspace_size. */
ROIALIGN_API roialign_status roialign_backward_workspace_size(const roialign_kernel* kernel,
                                                              const roialign_inputs* inputs,
                                                              const roialign_options* options, size_t* bytes);
/* Multi-level: grad_inputs[l] is level l's dX (num_maps pointers); each RoI's gradient goes to the level its forward
 * pooled from, and a RoI no level pools gives none. */
ROIALIGN_API roialign_status roialign_multi_level_run_backward(const roialign_multi_level_kernel* kernel,
                                                               const roialign_inputs* inputs,
                                                               const void* grad_output, void* const* grad_inputs,
                                                               const roialign_options* options);
ROIALIGN_API roialign_status roialign_multi_level_backward_workspace_size(const roialign_multi_level_kernel* kernel,
                                                                          const roialign_inputs* inputs,
                                                                          const roialign_options* options,
                                                                          size_t* bytes);

/* ---- Strategy queries (layout planning) and custom targets ---- */

/* What a target can serve (written by the library, up to the caller's struct_size). Bit i of a mask is set when
 * enum value i is supported. */
typedef struct {
  uint32_t struct_size;
  uint32_t flags;            /* 0 */
  uint32_t layouts;          /* bits of roialign_layout */
  uint32_t dtypes;           /* bits of roialign_dtype */
  uint32_t pool_modes;       /* bits of roialign_pool_mode */
  uint32_t coordinate_modes; /* bits of roialign_coordinate_mode */
  roialign_layout preferred_layout; /* the layout of its highest-priority implementation */
  /* Since 1.1: the channel block of the blocked layout that matches its f32 vectors (16 on AVX-512, 8 on AVX2, 4 on
   * SSE4 and NEON, by vector length on SVE, at most 16); 0 when its best implementation has no vectors (the
   * scalar reference, a registered implementation). */
  int32_t preferred_block;
  uint32_t roi_kinds; /* since 1.4: bits of roialign_roi_kind */
  uint32_t reserved;
} roialign_target_info;

static inline void roialign_target_info_init(roialign_target_info* info) {
  const roialign_target_info defaults = {sizeof(roialign_target_info), 0u, 0u, 0u, 0u, 0u, ROIALIGN_LAYOUT_NCHW, 0,
                                         0u, 0u};
  *info = defaults;
}

/* Fills *info for `target`; UNSUPPORTED when the target exists but nothing serves it on this CPU/build,
 * INVALID_ARGUMENT when the name is unknown. */
ROIALIGN_API roialign_status roialign_query_target(const char* target, roialign_target_info* info);

/* Names as a list: each name followed by a NUL, then one more NUL. *needed gets the bytes of the whole list; the
 * list is written only when `size` holds it (else nothing is written and the call still returns OK).
 * roialign_known_targets: every target name, the built-in ones then registered ones. roialign_implementation_names:
 * the implementations `target` can run on this CPU and build, best first (empty for an unknown target). */
ROIALIGN_API roialign_status roialign_known_targets(char* buffer, size_t size, size_t* needed);
ROIALIGN_API roialign_status roialign_implementation_names(const char* target, char* buffer, size_t size,
                                                           size_t* needed);

/* Everything a registered implementation receives, filled by the library (struct_size: the library's sizeof, at
 * least 1.0's); data already validated (batch indices in range, coordinates finite, sizes consistent). Output is
 * K*C*PH*PW elements in `params->layout`. */
typedef struct {
  uint32_t struct_size;
  uint32_t flags;
  const roialign_params* params;
  const void* input;
  int64_t batch, channels, height, width;
  const float* rois;            /* [K,5] when batch_indices is NULL, else [K,4] */
  const int64_t* batch_indices; /* may be NULL */
  int64_t num_rois;
  void* output;
  int32_t num_threads;                   /* as the caller passed it (<= 0: its default); with a pool, the pool's */
  int32_t reserved;
  const roialign_threadpool* threadpool; /* the caller's pool, else NULL */
  const double* rois_f64;                /* since 1.3: an F64 call's RoIs (rois is then NULL) */
} roialign_problem;

/* Registered implementations serve axis-aligned RoIs: a kernel for rotated ones (roi_kind ROTATED) never selects
 * one. */
/* A user implementation: returns ROIALIGN_OK or an error status (the caller sees it as returned). */
typedef roialign_status (*roialign_impl_fn)(const roialign_problem* problem, void* user_data);

typedef struct {
  uint32_t struct_size;
  uint32_t flags;
  const char* target;   /* the target it serves, e.g. "npu"; built-in target names are refused */
  const char* name;     /* e.g. "roi_align_nhwc.npu"; unique */
  int32_t priority;     /* higher wins among implementations that match a request */
  uint32_t layouts, dtypes, pool_modes, coordinate_modes; /* masks as in roialign_target_info */
  roialign_impl_fn fn;
  void* user_data;
} roialign_implementation;

static inline void roialign_implementation_init(roialign_implementation* impl) {
  const roialign_implementation defaults = {sizeof(roialign_implementation), 0u, 0, 0, 0, 0u, 0u, 0u, 0u, 0, 0};
  *impl = defaults;
}

/* Registers `impl` (copied; strings copied). Thread-safe; existing kernels stay valid. */
ROIALIGN_API roialign_status roialign_register(const roialign_implementation* impl);

/* ---- Layout transforms (for engines that convert around roi_align) ----
 * A whole tensor of `dtype` from layout `from` to layout `to`, any of the five (F16 and BF16 elements are moved as
 * they are, bit for bit). batch, channels, height and width are the logical dimensions (channels not padded);
 * `input` holds the tensor in `from`, `output` receives it in `to`. Blocked layouts: the output's padded lanes are
 * written 0, the input's are never read (they may hold anything, NaN included). from == to is a copy. `options` as
 * for roialign_run (NULL: defaults; threads or the caller's pool, bit-identical results for any), except that a
 * transform uses no working memory: options->workspace must be NULL. INVALID_ARGUMENT, the output untouched, for an
 * unknown dtype or layout value, a negative dimension, a size that overflows int64, a NULL input or output of a
 * non-empty tensor, an output that overlaps the input, a workspace, or a bad pool. Since 1.1. */
ROIALIGN_API roialign_status roialign_transform_layout(roialign_dtype dtype, roialign_layout from, roialign_layout to,
                                                       const void* input, int64_t batch, int64_t channels,
                                                       int64_t height, int64_t width, void* output,
                                                       const roialign_options* options);
/* roialign_transform_layout from NCHW to NHWC and back (1.0). */
ROIALIGN_API roialign_status roialign_nchw_to_nhwc(roialign_dtype dtype, const void* input, int64_t batch,
                                                   int64_t channels, int64_t height, int64_t width, void* output,
                                                   const roialign_options* options);
ROIALIGN_API roialign_status roialign_nhwc_to_nchw(roialign_dtype dtype, const void* input, int64_t batch,
                                                   int64_t channels, int64_t height, int64_t width, void* output,
                                                   const roialign_options* options);

/* ---- Names of the enum values (the library's one list; bindings and engines read it instead of copies) ---- */

typedef enum {
  ROIALIGN_ENUM_LAYOUT = 0,          /* roialign_layout: "NCHW", "NHWC" */
  ROIALIGN_ENUM_DTYPE = 1,           /* roialign_dtype: "F32", "F16", "BF16" */
  ROIALIGN_ENUM_POOL_MODE = 2,       /* roialign_pool_mode: "AVG", "MAX", "MAX_ONNX" */
  ROIALIGN_ENUM_COORDINATE_MODE = 3, /* roialign_coordinate_mode: "LEGACY", "HALF_PIXEL", ... */
  ROIALIGN_ENUM_LEVEL_RULE = 4,      /* roialign_level_rule: "SCALE", "GIVEN", "OPENVINO" */
  ROIALIGN_ENUM_STATUS = 5,          /* roialign_status: "OK", "INVALID_ARGUMENT", ... */
  ROIALIGN_ENUM_ROI_KIND = 6,        /* roialign_roi_kind: "AXIS_ALIGNED", "ROTATED" (since 1.4) */
  ROIALIGN_ENUM_ANGLE_UNIT = 7,      /* roialign_angle_unit: "RADIANS", "DEGREES" (since 1.4) */
  ROIALIGN_ENUM_ROTATION = 8         /* roialign_rotation: "COUNTER_CLOCKWISE", "CLOCKWISE" (since 1.4) */
} roialign_enum_kind;

/* The name of `value` in the enum `kind` (a static string), or NULL when either is unknown. The values of each
   enum are 0, 1, 2, ... with no gaps, so counting up from 0 until NULL lists them all. */
ROIALIGN_API const char* roialign_enum_name(roialign_enum_kind kind, int32_t value);

/* The value of the enum `kind` named `name`, spelled exactly as roialign_enum_name spells it; -1 when `kind` is
   unknown, `name` is NULL or no value has that name. */
ROIALIGN_API int32_t roialign_enum_parse(roialign_enum_kind kind, const char* name);

/* The channel block b of `layout`: 4, 8 or 16 for NCHW4c, NCHW8c and NCHW16c ([N][ceil(C/b)][H][W][b]), 0 for NCHW and
   NHWC, whose channels are not in blocks; -1 for a value that is no layout. Bindings read it instead of a copy.
   Since 1.1. */
ROIALIGN_API int32_t roialign_layout_channel_block(roialign_layout layout);

#ifdef __cplusplus
}
#endif

#endif /* ROIALIGN_ROIALIGN_H_ */
