// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "bench/workload_dump.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <ostream>

#include "bench/report_checks.h"

namespace roialign {
namespace bench {
namespace {

void WriteFile(const std::string& path, const void* data, size_t bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!f) {
    std::fprintf(stderr, "error: cannot write %s\n", path.c_str());
    std::exit(1);
  }
}

// The description's last field, the thread counts the report ran, which the peers run too.
void WriteThreads(std::ostream& j, const std::vector<int>& threads) {
  j << ", \"threads\": [";
  for (size_t i = 0; i < threads.size(); ++i) j << (i ? ", " : "") << threads[i];
  j << "]}\n";
}

}  // namespace

void DumpWorkload(const std::string& dir, const WorkloadSpec& spec, const Workload& w, const char* target,
                  const std::vector<int>& threads) {
  const std::string base = dir + "/" + spec.name;
  AlignedBuffer out(w.OutputSize());
  const Selection ref = SelectKernel(target, w.ParamsFor(Layout::kNCHW));
  RunOrExit([&] { return ref.ok() ? ref->Run(w.InputsFor(Layout::kNCHW), out.data(), 0) : ref.status(); });
  WriteFile(base + ".map.f32", w.nchw.data(), w.nchw.size() * 4);
  WriteFile(base + ".rois.f32", w.rois.data(), w.rois.size() * 4);  // [K,6] rows for rotated RoIs
  WriteFile(base + ".ref.f32", out.data(), w.OutputSize() * 4);
  const bool rotated = spec.roi_kind == RoiKind::kRotated;
  if (rotated) {  // the same boxes axis-aligned and our axis-aligned result on them, for axis-aligned peers
    const Selection axis = SelectKernel(target, w.AxisAlignedParamsFor(Layout::kNCHW));
    RunOrExit([&] {
      return axis.ok() ? axis->Run(w.AxisAlignedInputsFor(Layout::kNCHW), out.data(), 0) : axis.status();
    });
    WriteFile(base + ".rois_axis.f32", w.rois_axis.data(), w.rois_axis.size() * 4);
    WriteFile(base + ".ref_axis.f32", out.data(), w.OutputSize() * 4);
  }
  std::ofstream j(base + ".json");
  j << "{\"name\": \"" << spec.name << "\", \"batch\": 1, \"channels\": " << spec.channels
    << ", \"height\": " << spec.height << ", \"width\": " << spec.width << ", \"num_rois\": " << spec.num_rois
    << ", \"pooled_height\": " << spec.pooled << ", \"pooled_width\": " << spec.pooled
    << ", \"spatial_scale\": " << spec.spatial_scale << ", \"sampling_ratio\": " << spec.sampling_ratio
    << ", \"coordinate_mode\": \"" << ToString(spec.coordinate_mode) << "\", \"pool_mode\": \""
    << ToString(spec.pool_mode) << "\"";
  if (rotated) {
    const Params p = w.ParamsFor(Layout::kNCHW);
    j << ", \"roi_kind\": \"" << ToString(p.roi_kind) << "\", \"angle_unit\": \"" << ToString(p.angle_unit)
      << "\", \"rotation\": \"" << ToString(p.rotation) << "\"";
  }
  WriteThreads(j, threads);
}

void DumpPyramid(const std::string& dir, const PyramidWorkload& w, const char* target,
                 const std::vector<int>& threads) {
  const std::string base = dir + "/fpn";
  AlignedBuffer out(w.OutputSize());
  const PyramidSelection ref = SelectPyramidKernel(target, w.ParamsFor(Layout::kNCHW));
  const std::vector<LevelMap> maps = w.MapsFor(Layout::kNCHW);
  const MultiLevelInputs in = w.InputsFor(maps);
  if (!ref.ok() || !ref.kernel.Run(in, out.data(), 0).ok()) std::exit(1);
  std::ofstream j(base + ".json");
  j << "{\"name\": \"fpn\", \"batch\": 1, \"channels\": " << w.channels << ", \"num_rois\": " << w.num_rois
    << ", \"pooled_height\": " << w.pooled << ", \"pooled_width\": " << w.pooled
    << ", \"sampling_ratio\": " << w.sampling_ratio
    << ", \"coordinate_mode\": \"LEGACY\", \"pool_mode\": \"AVG\", \"image_height\": 800, \"image_width\": 1088"
    << ", \"levels\": [";
  for (size_t l = 0; l < maps.size(); ++l) {
    WriteFile(base + ".map" + std::to_string(l) + ".f32", w.nchw[l].data(), w.nchw[l].size() * 4);
    j << (l ? ", " : "") << "{\"height\": " << w.heights[l] << ", \"width\": " << w.widths[l]
      << ", \"spatial_scale\": " << w.scales[l] << "}";
  }
  j << "]";
  WriteThreads(j, threads);
  WriteFile(base + ".rois.f32", w.rois.data(), w.rois.size() * 4);
  WriteFile(base + ".ref.f32", out.data(), out.size() * 4);
}

}  // namespace bench
}  // namespace roialign
