// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "bench/backward_kernel.h"

namespace roialign {
namespace bench {
namespace {

Status FromC(roialign_status s) {
  return s == ROIALIGN_OK ? Status::Ok() : Status(static_cast<StatusCode>(s), roialign_last_error());
}

roialign_options Options(int threads) {
  roialign_options o;
  roialign_options_init(&o);
  o.num_threads = threads;
  return o;
}

}  // namespace

roialign_params ToC(const Params& params) {
  roialign_params c;
  roialign_params_init(&c);
  c.pooled_height = params.pooled_height;
  c.pooled_width = params.pooled_width;
  c.spatial_scale = params.spatial_scale;
  c.spatial_scale_f64 = params.spatial_scale_f64;
  c.sampling_ratio = params.sampling_ratio;
  c.coordinate_mode = static_cast<roialign_coordinate_mode>(params.coordinate_mode);
  c.pool_mode = static_cast<roialign_pool_mode>(params.pool_mode);
  c.layout = static_cast<roialign_layout>(params.layout);
  c.dtype = static_cast<roialign_dtype>(params.dtype);
  c.roi_kind = static_cast<roialign_roi_kind>(params.roi_kind);
  c.angle_unit = static_cast<roialign_angle_unit>(params.angle_unit);
  c.rotation = static_cast<roialign_rotation>(params.rotation);
  if (params.backward) c.flags |= ROIALIGN_PARAMS_BACKWARD;
  return c;
}

BackwardKernel::BackwardKernel(const std::string& target, const Params& params) {
  Params p = params;
  p.backward = true;
  const roialign_params c = ToC(p);
  roialign_kernel* raw = nullptr;
  status_ = FromC(roialign_select(target.c_str(), &c, &raw));
  if (status_.ok()) kernel_.reset(raw, &roialign_kernel_free);
}

std::string BackwardKernel::name() const { return ok() ? roialign_kernel_name(kernel_.get()) : ""; }

Status BackwardKernel::Run(const Inputs& in, const void* dy, void* dx, int threads) const {
  roialign_inputs c;
  roialign_inputs_init(&c);
  c.batch = in.batch;
  c.channels = in.channels;
  c.maps[0].data = in.input;
  c.maps[0].height = in.height;
  c.maps[0].width = in.width;
  c.rois = in.rois;
  c.rois_f64 = in.rois_f64;
  c.batch_indices = in.batch_indices;
  c.num_rois = in.num_rois;
  const roialign_options options = Options(threads);
  return FromC(roialign_run_backward(kernel_.get(), &c, dy, dx, &options));
}

MultiLevelBackwardKernel::MultiLevelBackwardKernel(const std::string& target, const MultiLevelParams& params) {
  Params p = params.params;
  p.backward = true;
  const roialign_params c = ToC(p);
  roialign_multi_level_params levels;
  roialign_multi_level_params_init(&levels);
  if (params.scales.size() > ROIALIGN_MAX_LEVELS) {
    status_ = Status(StatusCode::kInvalidArgument, "too many levels");
    return;
  }
  levels.num_levels = static_cast<int32_t>(params.scales.size());
  for (size_t l = 0; l < params.scales.size(); ++l) levels.scales[l] = params.scales[l];
  levels.level_rule = static_cast<roialign_level_rule>(params.level_rule);
  levels.canonical_size = params.canonical_size;
  levels.canonical_level = params.canonical_level;
  roialign_multi_level_kernel* raw = nullptr;
  status_ = FromC(roialign_multi_level_select(target.c_str(), &c, &levels, &raw));
  if (status_.ok()) kernel_.reset(raw, &roialign_multi_level_kernel_free);
}

Status MultiLevelBackwardKernel::Run(const MultiLevelInputs& in, const void* dy, void* const* dx, int threads) const {
  roialign_inputs c;
  roialign_inputs_init(&c);
  c.batch = in.batch;
  c.channels = in.channels;
  c.num_maps = in.num_maps;
  for (int32_t l = 0; l < in.num_maps && l < ROIALIGN_MAX_LEVELS; ++l) {
    c.maps[l].data = in.maps[l].input;
    c.maps[l].height = in.maps[l].height;
    c.maps[l].width = in.maps[l].width;
  }
  c.rois = in.rois;
  c.rois_f64 = in.rois_f64;
  c.batch_indices = in.batch_indices;
  c.levels = in.levels;
  c.num_rois = in.num_rois;
  const roialign_options options = Options(threads);
  return FromC(roialign_multi_level_run_backward(kernel_.get(), &c, dy, dx, &options));
}

}  // namespace bench
}  // namespace roialign
