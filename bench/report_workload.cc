// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "bench/report_workload.h"

#include <cstdio>
#include <map>
#include <utility>

#include "bench/workload_dump.h"
#include "core/enums.h"

namespace roialign {
namespace bench {
namespace {

// A selected single-level kernel on `in` (the conversion rows give it other maps), named `name`.
ForwardKernel OnInputs(std::string name, const Selection& selected, const Inputs& in) {
  ForwardKernel f{std::move(name), selected.status(), nullptr, nullptr};
  if (!f.ok()) return f;
  const KernelHandle k = selected.value();
  f.run = [k, in](void* out, int threads) { return k.Run(in, out, threads); };
  f.run_on = [k, in](const std::vector<const void*>& maps, void* out, int threads) {
    Inputs with_map = in;
    with_map.input = maps[0];
    return k.Run(with_map, out, threads);
  };
  return f;
}

class SingleLevel final : public ReportWorkload {
 public:
  explicit SingleLevel(Workload w)
      : ReportWorkload(w.spec.name, MapShape{w.spec.channels, {w.spec.height}, {w.spec.width}}, w.spec.num_rois,
                       w.spec.pooled, "NHWC->NCHW->NHWC ms", "NCHW->NHWC->NCHW ms", "winner"),
        w_(std::move(w)) {}

  const Accounting& accounting() const override { return w_; }
  std::vector<DType> Dtypes(const std::vector<DType>& asked) const override { return asked; }
  std::vector<const void*> Maps(Layout layout, DType dtype) const override { return {w_.Map(layout, dtype)}; }
  const AlignedVector<float>& DyValues() const override { return w_.nchw; }

  ForwardKernel Forward(const std::string& target, Layout layout, DType dtype) const override {
    return OnInputs(ToString(layout), SelectKernel(target, w_.ParamsFor(layout, dtype)), w_.InputsFor(layout, dtype));
  }

  // The backward through the C API (roialign.hpp's Kernel).
  BackwardCall Backward(const std::string& target, Layout layout, DType dtype) const override {
    Params params = w_.ParamsFor(layout, dtype);
    params.backward = true;
    const SelectResult selected = Select(target, params);
    if (!selected.ok()) return {selected.status(), nullptr};
    const Kernel k = selected.value();
    const Inputs in = w_.InputsFor(layout, dtype);
    return {Status::Ok(),
            [k, in](const void* dy, void* const* dx, int threads) { return k.RunBackward(in, dy, dx[0], threads); }};
  }

  std::vector<ForwardKernel> ColumnKernels(const std::string&) const override { return {}; }

  // Only for aligned (HALF_PIXEL) RoIs, the mode in which angle 0 is the axis-aligned box; not in F64, whose RoIs the
  // workload keeps in double for its own angles only.
  std::vector<ForwardKernel> Comparison(const std::string& target, DType dtype) const override {
    if (w_.spec.roi_kind != RoiKind::kRotated || dtype == DType::kF64 ||
        w_.spec.coordinate_mode != CoordinateMode::kHalfPixel) {
      return {};
    }
    return {OnInputs("NHWC angles 0", SelectKernel(target, w_.ParamsFor(Layout::kNHWC, dtype)),
                     w_.Angle0InputsFor(Layout::kNHWC, dtype)),
            OnInputs("axis-aligned NHWC", SelectKernel(target, w_.AxisAlignedParamsFor(Layout::kNHWC, dtype)),
                     w_.AxisAlignedInputsFor(Layout::kNHWC, dtype))};
  }

  // Which of the NCHW and NHWC kernels is faster, at the minimum.
  std::string Last(const std::vector<Row>& rows) const override {
    const double s_nchw = rows[0].ms_min / 1e3, s_nhwc = rows[1].ms_min / 1e3;
    const bool nhwc_wins = s_nhwc < s_nchw;
    char winner[96];
    std::snprintf(winner, sizeof(winner), "%s %.2fx faster%s", nhwc_wins ? "NHWC" : "NCHW",
                  nhwc_wins ? s_nchw / s_nhwc : s_nhwc / s_nchw,
                  rows[0].stable() && rows[1].stable() ? "" : " (unstable)");
    return winner;
  }

  void Dump(const std::string& dir, const char* target, const std::vector<int>& threads) const override {
    DumpWorkload(dir, w_.spec, w_, target, threads);
  }

 private:
  Workload w_;
};

class Pyramid final : public ReportWorkload {
 public:
  explicit Pyramid(PyramidWorkload w)
      : ReportWorkload(w.name, MapShape{w.channels, w.heights, w.widths}, w.num_rois, w.pooled, "NCHW by level ms",
                       "NHWC by level ms", "one call vs by level (min)"),
        w_(std::move(w)) {
    for (Layout layout : {Layout::kNCHW, Layout::kNHWC, Layout::kNCHW4c, Layout::kNCHW8c, Layout::kNCHW16c}) {
      maps_[layout] = w_.MapsFor(layout);
    }
  }

  const Accounting& accounting() const override { return w_; }
  std::vector<DType> Dtypes(const std::vector<DType>&) const override { return {DType::kF32}; }

  std::vector<const void*> Maps(Layout layout, DType) const override {
    std::vector<const void*> p;
    for (const LevelMap& m : maps_.at(layout)) p.push_back(m.input);
    return p;
  }

  const AlignedVector<float>& DyValues() const override { return w_.nchw[0]; }

  ForwardKernel Forward(const std::string& target, Layout layout, DType) const override {
    const PyramidSelection selected = SelectPyramidKernel(target, w_.ParamsFor(layout));
    ForwardKernel f{ToString(layout), selected.status, nullptr, nullptr};
    if (!f.ok()) return f;
    const PyramidKernelHandle k = selected.kernel;
    const MultiLevelInputs in = w_.InputsFor(maps_.at(layout));
    f.run = [k, in](void* out, int threads) { return k.Run(in, out, threads); };
    f.run_on = [k, w = &w_](const std::vector<const void*>& maps, void* out, int threads) {
      std::vector<LevelMap> level_maps;
      for (size_t l = 0; l < maps.size(); ++l) level_maps.push_back({maps[l], w->heights[l], w->widths[l]});
      return k.Run(w->InputsFor(level_maps), out, threads);
    };
    return f;
  }

  // The backward through the C API (roialign.hpp's MultiLevelKernel).
  BackwardCall Backward(const std::string& target, Layout layout, DType) const override {
    MultiLevelParams params = w_.ParamsFor(layout);
    params.params.backward = true;
    const MultiLevelSelectResult selected = SelectMultiLevel(target, params);
    if (!selected.ok()) return {selected.status, nullptr};
    const MultiLevelKernel k = selected.kernel;
    const MultiLevelInputs in = w_.InputsFor(maps_.at(layout));
    return {Status::Ok(),
            [k, in](const void* dy, void* const* dx, int threads) { return k.RunBackward(in, dy, dx, threads); }};
  }

  std::vector<ForwardKernel> ColumnKernels(const std::string& target) const override {
    std::vector<ForwardKernel> columns;
    for (Layout layout : {Layout::kNCHW, Layout::kNHWC}) {
      auto levels = std::make_shared<LevelByLevel>();
      ForwardKernel f{std::string(ToString(layout)) + " level by level", levels->Init(w_, target, layout), nullptr,
                      nullptr};
      f.run = [levels](void* out, int threads) { return levels->Run(out, threads); };
      columns.push_back(f);
    }
    return columns;
  }

  std::vector<ForwardKernel> Comparison(const std::string&, DType) const override { return {}; }

  // Each layout's RoIs level by level over its one call, at the minimum.
  std::string Last(const std::vector<Row>& rows) const override {
    char last[64];
    std::snprintf(last, sizeof(last), "NCHW %.2fx, NHWC %.2fx", rows[2].ms_min / rows[0].ms_min,
                  rows[3].ms_min / rows[1].ms_min);
    return last;
  }

  void Dump(const std::string& dir, const char* target, const std::vector<int>& threads) const override {
    DumpPyramid(dir, w_, target, threads);
  }

 private:
  PyramidWorkload w_;
  std::map<Layout, std::vector<LevelMap>> maps_;  // per layout, the levels the calls' inputs point into
};

}  // namespace

ReportWorkload::ReportWorkload(std::string name, MapShape shape, int64_t num_rois, int64_t pooled, const char* third,
                               const char* fourth, const char* last)
    : name_(std::move(name)), shape_(std::move(shape)), num_rois_(num_rois), pooled_(pooled),
      columns_{third, fourth, last} {}

std::unique_ptr<ReportWorkload> MakeReportWorkload(const WorkloadSpec& spec) {
  std::fprintf(stderr, "building workload %s...\n", spec.name.c_str());
  return std::make_unique<SingleLevel>(MakeWorkload(spec));
}

std::unique_ptr<ReportWorkload> MakeReportPyramid() {
  std::fprintf(stderr, "building workload fpn...\n");
  return std::make_unique<Pyramid>(MakePyramidWorkload());
}

}  // namespace bench
}  // namespace roialign
