// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "execution/validate_data.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <type_traits>

#include "core/enums.h"
#include "core/messages.h"
#include "execution/pyramid_levels.h"
#include "kernels/roi_geometry.h"

namespace roialign {
namespace internal {
namespace {

// Product of non-negative factors in int64, also bounded so that the byte size of `element_bytes`-byte elements
// fits size_t.
bool ElementCount(std::initializer_list<int64_t> dims, int64_t* count, int64_t element_bytes = 4) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (__builtin_mul_overflow(n, d, &n)) return false;
  }
  int64_t bytes;
  if (__builtin_mul_overflow(n, element_bytes, &bytes)) return false;
  if (static_cast<uint64_t>(bytes) > std::numeric_limits<size_t>::max()) return false;
  *count = n;
  return true;
}

std::string RoiPrefix(int64_t k) { return "roi " + std::to_string(k) + ": "; }

}  // namespace

Status CheckShape(const Params& params, const Inputs& in, const void* output) {
  const int64_t N = in.batch, C = in.channels, H = in.height, W = in.width, K = in.num_rois;
  if (N < 0 || C < 0 || H < 0 || W < 0 || K < 0) {
    return Invalid("shape must be non-negative (batch=" + std::to_string(N) + ", channels=" + std::to_string(C) +
                   ", height=" + std::to_string(H) + ", width=" + std::to_string(W) +
                   ", num_rois=" + std::to_string(K) + ")");
  }
  int64_t input_elements = 0, output_elements = 0, roi_elements = 0;
  const int64_t element_bytes = BytesOf(params.dtype);
  const int64_t stored = StoredChannels(params.layout, C);  // blocked layouts pad the last block
  if (!ElementCount({N, stored, H, W}, &input_elements, element_bytes)) {
    return Invalid("input shape overflows: its byte size is too large");
  }
  if (!ElementCount({K, stored, params.pooled_height, params.pooled_width}, &output_elements, element_bytes)) {
    return Invalid("output shape overflows: its byte size is too large");
  }
  if (!ElementCount({K, RoiColumns(params.roi_kind, in.batch_indices != nullptr)}, &roi_elements)) {
    return Invalid("num_rois overflows");
  }
  if (K > 0 && (H == 0 || W == 0)) {
    return Invalid("height and width must be >= 1 when there are RoIs (got " + std::to_string(H) + " x " +
                   std::to_string(W) + ")");
  }
  // F64 reads its RoIs in double (docs/semantics.md#float64); every other dtype in float.
  const bool f64 = params.dtype == DType::kF64;
  if (f64 && in.rois != nullptr) {
    return Invalid("dtype F64 reads its RoIs in double from rois_f64; rois must be null");
  }
  if (!f64 && in.rois_f64 != nullptr) {
    return Invalid(std::string("rois_f64 is for dtype F64; dtype ") + EnumName(params.dtype) +
                   " reads its RoIs from rois (float)");
  }
  if (K > 0 && (f64 ? in.rois_f64 == nullptr : in.rois == nullptr)) {
    return Invalid(std::string(f64 ? "rois_f64" : "rois") + " is null but num_rois is " + std::to_string(K));
  }
  if (output_elements > 0 && output == nullptr) return Invalid("output is null");
  if (output_elements > 0 && in.input == nullptr) return Invalid("input is null");
  return Status::Ok();
}

// Why RoI k's sampling grid, or the call's work with it, is over a cap (CheckGridAndWork found one that is).
template <typename R>
[[gnu::cold, gnu::noinline]] Status GridOrWorkRefusal(const Params& params, int64_t k, const AxisGeometryOf<R>& gy,
                                                       const AxisGeometryOf<R>& gx) {
  if (gy.grid < 0 || gx.grid < 0 || gy.grid > ROIALIGN_MAX_SAMPLING_GRID || gx.grid > ROIALIGN_MAX_SAMPLING_GRID) {
    return Invalid(RoiPrefix(k) + "adaptive sampling grid " + std::to_string(gy.grid) + " x " +
                   std::to_string(gx.grid) + " exceeds the limit " + std::to_string(ROIALIGN_MAX_SAMPLING_GRID) +
                   " per axis (RoI " + FloatText(gy.roi) + " x " + FloatText(gx.roi) + " feature-map pixels)");
  }
  if (params.pooled_height * gy.grid > ROIALIGN_MAX_SAMPLES_PER_AXIS ||
      params.pooled_width * gx.grid > ROIALIGN_MAX_SAMPLES_PER_AXIS) {
    return Invalid(RoiPrefix(k) + "more than " + std::to_string(ROIALIGN_MAX_SAMPLES_PER_AXIS) +
                   " samples along one axis");
  }
  return Invalid(RoiPrefix(k) + "the call's work (channels x bins x samples summed over RoIs) exceeds the limit " +
                 std::to_string(ROIALIGN_MAX_WORK_PER_CALL) + "; split the call");
}

// The sampling grid of a RoI within the caps, and the call's work with it within its cap. Every RoI passes here, so
// the messages are built apart.
template <typename R>
Status CheckGridAndWork(const Params& params, int64_t C, int64_t k, const AxisGeometryOf<R>& gy,
                        const AxisGeometryOf<R>& gx, int64_t* work) {
  int64_t roi_work = 0;
  const bool within = gy.grid >= 0 && gx.grid >= 0 && gy.grid <= ROIALIGN_MAX_SAMPLING_GRID &&
                      gx.grid <= ROIALIGN_MAX_SAMPLING_GRID &&
                      params.pooled_height * gy.grid <= ROIALIGN_MAX_SAMPLES_PER_AXIS &&
                      params.pooled_width * gx.grid <= ROIALIGN_MAX_SAMPLES_PER_AXIS &&
                      !__builtin_mul_overflow(C, params.pooled_height * gy.grid * params.pooled_width * gx.grid,
                                              &roi_work) &&
                      roi_work <= ROIALIGN_MAX_WORK_PER_CALL && *work + roi_work <= ROIALIGN_MAX_WORK_PER_CALL;
  if (!within) return GridOrWorkRefusal(params, k, gy, gx);
  *work += roi_work;
  return Status::Ok();
}

// A rotated RoI (docs/semantics.md#rotated-rois), its batch index checked: every value finite, before and after
// scaling; no negative size when aligned (HALF_PIXEL; LEGACY raises sizes to 1); the grid and work within the caps.
template <typename R>
Status CheckRotatedRoi(const Params& params, const Inputs& in, int64_t k, int64_t batch, RoiTotals* totals,
                       int64_t* work, RoiAxesOf<R>* axes) {
  const R* const rois = std::is_same_v<R, double> ? reinterpret_cast<const R*>(in.rois_f64)
                                                  : reinterpret_cast<const R*>(in.rois);
  const R* const box = RoiRowAt(rois, in.batch_indices, RoiKind::kRotated, k).values;  // cx, cy, w, h, angle
  static const char* const kNames[5] = {"cx", "cy", "w", "h", "angle"};
  for (int i = 0; i < 5; ++i) {
    if (!std::isfinite(box[i])) return Invalid(RoiPrefix(k) + kNames[i] + " is not finite (" + FloatText(box[i]) + ")");
  }
  const RoiAxesOf<R> a = RotatedAxesOf(box, batch, params.pooled_height, params.pooled_width, params);
  const RotationOf<R>& t = a.rotation;
  if (!std::isfinite(t.centre_y) || !std::isfinite(t.centre_x) || !std::isfinite(a.gy.roi) ||
      !std::isfinite(a.gx.roi)) {
    return Invalid(RoiPrefix(k) + "coordinates overflow " + (std::is_same_v<R, double> ? "float64" : "float32") +
                   " after scaling by spatial_scale");
  }
  if (a.gy.roi < R(0) || a.gx.roi < R(0)) {
    return Invalid(RoiPrefix(k) + "size " + FloatText(box[2]) + " x " + FloatText(box[3]) +
                   " (w x h) is negative; an aligned (HALF_PIXEL) rotated RoI needs w >= 0 and h >= 0");
  }
  Status s = CheckGridAndWork(params, in.channels, k, a.gy, a.gx, work);
  if (!s.ok()) return s;
  // The turned box's bounding rectangle (+2 for interpolation), or the samples' taps if fewer.
  const double hh = static_cast<double>(a.gy.roi), ww = static_cast<double>(a.gx.roi);
  const double c = std::fabs(static_cast<double>(t.cos)), sn = std::fabs(static_cast<double>(t.sin));
  const double samples = 4.0 * static_cast<double>(params.pooled_height * a.gy.grid) *
                         static_cast<double>(params.pooled_width * a.gx.grid);
  const double rows = std::min(static_cast<double>(in.height), hh * c + ww * sn + 2.0);
  const double cols = std::min(static_cast<double>(in.width), hh * sn + ww * c + 2.0);
  totals->footprint += std::min(rows * cols, samples);
  totals->max_grid_h = std::max(totals->max_grid_h, a.gy.grid);
  totals->max_grid_w = std::max(totals->max_grid_w, a.gx.grid);
  *axes = a;
  return Status::Ok();
}

// RoI k checked (batch index, finite coordinates, sampling limits under params.spatial_scale on in's map), added
// to `totals` and its geometry written to `axes`; `work` is the call's running work, capped by
// ROIALIGN_MAX_WORK_PER_CALL. Inlined into the loops over every RoI.
template <typename R>
[[gnu::always_inline]] inline Status CheckOneRoi(const Params& params, const Inputs& in, int64_t k, RoiTotals* totals,
                                                 int64_t* work, RoiAxesOf<R>* axes) {
  const R* const rois = std::is_same_v<R, double> ? reinterpret_cast<const R*>(in.rois_f64)
                                                  : reinterpret_cast<const R*>(in.rois);
  const int64_t N = in.batch, C = in.channels, H = in.height, W = in.width;
  int64_t batch = 0;
  if (in.batch_indices != nullptr) {
    batch = in.batch_indices[k];
    if (batch < 0 || batch >= N) {
      return Invalid(RoiPrefix(k) + "batch index " + std::to_string(batch) + " is outside [0, " +
                     std::to_string(N) + ")");
    }
  } else {
    const R b = rois[RoiColumns(params.roi_kind, false) * k];
    if (!std::isfinite(b) || b != std::floor(b)) {
      return Invalid(RoiPrefix(k) + "batch index " + FloatText(b) + " is not an integer");
    }
    if (b < R(0) || static_cast<double>(b) >= static_cast<double>(N)) {
      return Invalid(RoiPrefix(k) + "batch index " + FloatText(b) + " is outside [0, " + std::to_string(N) + ")");
    }
    batch = static_cast<int64_t>(b);
  }
  if (params.roi_kind == RoiKind::kRotated) return CheckRotatedRoi(params, in, k, batch, totals, work, axes);
  const R* const coords = rois + (in.batch_indices != nullptr ? 4 * k : 5 * k + 1);  // x1, y1, x2, y2
  for (int i = 0; i < 4; ++i) {
    if (!std::isfinite(coords[i])) {
      static const char* const kNames[4] = {"x1", "y1", "x2", "y2"};
      return Invalid(RoiPrefix(k) + kNames[i] + " is not finite (" + FloatText(coords[i]) + ")");
    }
  }
  const AxisGeometryOf<R> gy = AxisOf(coords[1], coords[3], params.pooled_height, params);
  const AxisGeometryOf<R> gx = AxisOf(coords[0], coords[2], params.pooled_width, params);
  // Scaled coordinates can overflow to inf although the inputs were finite.
  if (!std::isfinite(gy.start) || !std::isfinite(gy.roi) || !std::isfinite(gx.start) || !std::isfinite(gx.roi)) {
    return Invalid(RoiPrefix(k) + "coordinates overflow " + (std::is_same_v<R, double> ? "float64" : "float32") +
                   " after scaling by spatial_scale");
  }
  if (Status s = CheckGridAndWork(params, C, k, gy, gx, work); !s.ok()) return s;
  // Taps read at most 2 rows per sample row and the rows the box spans (+2 for interpolation).
  const double rows = std::min({static_cast<double>(H), 2.0 * static_cast<double>(params.pooled_height * gy.grid),
                                std::fabs(static_cast<double>(gy.roi)) + 2.0});
  const double cols = std::min({static_cast<double>(W), 2.0 * static_cast<double>(params.pooled_width * gx.grid),
                                std::fabs(static_cast<double>(gx.roi)) + 2.0});
  totals->footprint += rows * cols;
  totals->max_grid_h = std::max(totals->max_grid_h, gy.grid);
  totals->max_grid_w = std::max(totals->max_grid_w, gx.grid);
  *axes = {batch, gy, gx, {}};
  return Status::Ok();
}

template <typename R>
Status CheckRois(const Params& params, const Inputs& in, RoiTotals* totals, int64_t* work, RoiAxesOf<R>* axes) {
  for (int64_t k = 0; k < in.num_rois; ++k) {
    Status s = CheckOneRoi(params, in, k, totals, work, &axes[k]);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}
template Status CheckRois<float>(const Params&, const Inputs&, RoiTotals*, int64_t*, RoiAxesOf<float>*);
template Status CheckRois<double>(const Params&, const Inputs&, RoiTotals*, int64_t*, RoiAxesOf<double>*);

template <typename R>
Status CheckRoisOnLevels(const RoiLevels& maps, const int32_t* levels, int64_t num_rois, int64_t* work,
                         RoiAxesOf<R>* axes) {
  for (int64_t k = 0; k < num_rois; ++k) {
    const int32_t l = levels[k];
    RoiTotals unused;  // a RoI no map pools is checked on map 0, adding nothing
    int64_t no_work = 0;
    const bool pooled = l != kNotPooled;
    const size_t m = pooled ? static_cast<size_t>(l) : 0;
    Status s = CheckOneRoi(*maps.params[m], *maps.inputs[m], k, pooled ? maps.totals[m] : &unused,
                           pooled ? work : &no_work, &axes[k]);
    if (!s.ok()) return s;
    ++maps.counts[pooled ? m : maps.num_maps];
  }
  return Status::Ok();
}
template Status CheckRoisOnLevels<float>(const RoiLevels&, const int32_t*, int64_t, int64_t*, RoiAxesOf<float>*);
template Status CheckRoisOnLevels<double>(const RoiLevels&, const int32_t*, int64_t, int64_t*, RoiAxesOf<double>*);

void FillProblem(const Params& params, const Inputs& in, void* output, const RoiTotals& totals, const RoiAxes* axes,
                 const RoiAxesOf<double>* axes_f64, Problem* problem) {
  problem->params = params;
  problem->input = in.input;
  problem->batch = in.batch;
  problem->channels = in.channels;
  problem->height = in.height;
  problem->width = in.width;
  problem->rois = in.rois;
  problem->batch_indices = in.batch_indices;
  problem->num_rois = in.num_rois;
  problem->axes = axes;
  problem->rois_f64 = in.rois_f64;
  problem->axes_f64 = axes_f64;
  problem->output = output;
  problem->max_grid_h = totals.max_grid_h;
  problem->max_grid_w = totals.max_grid_w;
  problem->footprint_pixels = totals.footprint;
}

template <typename R>
Status ValidateData(const Params& params, const Inputs& in, void* output, std::pmr::vector<RoiAxesOf<R>>* axes,
                    Problem* problem) {
  if (std::is_same_v<R, double> != (params.dtype == DType::kF64)) {
    return Invalid("the RoIs' geometry is computed in double for dtype F64 only");
  }
  Status s = CheckShape(params, in, output);
  if (!s.ok()) return s;
  axes->resize(static_cast<size_t>(in.num_rois));
  RoiTotals totals;
  int64_t work = 0;
  s = CheckRois(params, in, &totals, &work, axes->data());
  if (!s.ok()) return s;
  if constexpr (std::is_same_v<R, double>) {
    FillProblem(params, in, output, totals, nullptr, axes->data(), problem);
  } else {
    FillProblem(params, in, output, totals, axes->data(), nullptr, problem);
  }
  return Status::Ok();
}
template Status ValidateData<float>(const Params&, const Inputs&, void*, std::pmr::vector<RoiAxesOf<float>>*,
                                    Problem*);
template Status ValidateData<double>(const Params&, const Inputs&, void*, std::pmr::vector<RoiAxesOf<double>>*,
                                     Problem*);

}  // namespace internal
}  // namespace roialign
