// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "bench/workloads.h"

#include <algorithm>
#include <cmath>

#include "bench/limit.h"
#include "core/enums.h"
#include "execution/plan.h"
#include "execution/pyramid_levels.h"
#include "kernels/half_float.h"
#include "kernels/merged_taps.h"
#include "kernels/problem.h"
#include "kernels/roi_geometry.h"

namespace roialign {
namespace bench {
namespace {

// SplitMix64: the same numbers on every platform and standard library.
struct Rng {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  float Uniform() { return static_cast<float>(Next() >> 40) / static_cast<float>(1 << 24); }  // [0, 1)
};

// Pixels one RoI's bin loops load (see Accounting::loaded_bytes).
double LoadedPixels(const internal::AxisGeometry& gy, const internal::AxisGeometry& gx, const WorkloadSpec& spec,
                    int64_t H, int64_t W) {
  const int64_t P = spec.pooled;
  std::vector<internal::AxisTap> ty(static_cast<size_t>(P * gy.grid)), tx(static_cast<size_t>(P * gx.grid));
  internal::FillAxisTaps(gy, P, H, ty.data());
  internal::FillAxisTaps(gx, P, W, tx.data());
  std::vector<internal::MergedTap> merged(static_cast<size_t>(2 * std::max(gy.grid, gx.grid)));
  double rows = 0, cols = 0;  // summed over bins along each axis
  for (int64_t b = 0; b < P; ++b) {
    if (spec.pool_mode == PoolMode::kAvg) {
      rows += static_cast<double>(internal::MergeTaps(ty.data() + b * gy.grid, gy.grid, 1, merged.data()));
      cols += static_cast<double>(internal::MergeTaps(tx.data() + b * gx.grid, gx.grid, 1, merged.data()));
    } else {  // 2 taps per valid sample along each axis
      for (int64_t i = 0; i < gy.grid; ++i) rows += ty[static_cast<size_t>(b * gy.grid + i)].valid ? 2 : 0;
      for (int64_t i = 0; i < gx.grid; ++i) cols += tx[static_cast<size_t>(b * gx.grid + i)].valid ? 2 : 0;
    }
  }
  return rows * cols;  // every bin row pairs with every bin column
}

// Along one axis of `size` pixels: the bins with at least one valid sample (`any`), and those with samples, every
// one valid (`all`).
void AxisValidBins(const internal::AxisGeometry& g, int64_t pooled, int64_t size, int64_t* any, int64_t* all) {
  *any = *all = 0;
  for (int64_t b = 0; b < pooled; ++b) {
    int64_t valid = 0;
    for (int64_t i = 0; i < g.grid; ++i) valid += internal::TapOf(internal::SamplePosition(g, b, i), size).valid ? 1 : 0;
    *any += valid > 0 ? 1 : 0;
    *all += valid > 0 && valid == g.grid ? 1 : 0;
  }
}

// The bins of one RoI whose dY the backward's dX depends on (BackwardAccounting::dy_bytes): a sample is valid when
// both its axes are, so the bins are products of the axes' counts.
double BackwardDyBins(const internal::AxisGeometry& gy, const internal::AxisGeometry& gx, const WorkloadSpec& spec,
                      int64_t H, int64_t W) {
  int64_t any_y, all_y, any_x, all_x;
  AxisValidBins(gy, spec.pooled, H, &any_y, &all_y);
  AxisValidBins(gx, spec.pooled, W, &any_x, &all_x);
  return static_cast<double>(spec.pool_mode == PoolMode::kAvg ? any_y * any_x : all_y * all_x);
}

// The backward's accounting from the forward's of the same RoIs: `dy_bins` from BackwardDyBins summed over them,
// `dx_pixels` the map's H * W (summed over the levels).
BackwardAccounting BackwardOf(PoolMode pool, int64_t C, double dy_bins, double dx_pixels, double fmas,
                              double ops_bound, double distinct_input_bytes, double loaded_bytes) {
  const bool avg = pool == PoolMode::kAvg;
  BackwardAccounting b;
  b.fmas = fmas;
  b.ops_bound = avg ? 0.0 : ops_bound;
  b.dy_bytes = dy_bins * static_cast<double>(C) * 4.0;
  b.dx_bytes = dx_pixels * static_cast<double>(C) * 4.0;
  b.map_bytes = avg ? 0.0 : distinct_input_bytes;
  b.loaded_bytes = avg ? 2.0 * loaded_bytes : loaded_bytes;
  b.loaded_bytes_f32 = avg;
  return b;
}

// Roofline accounting of one RoI (x1 at r[1]) with the library's own geometry: its FMAs, loaded bytes and bin
// lines, the bins whose dY its backward reads, and the map pixels its taps touch.
void AccountRoi(const Params& params, const float* r, const WorkloadSpec& spec, int64_t H, int64_t W,
                std::vector<char>* touched, double* fmas, double* ops_bound, double* loaded_bytes,
                double* bin_lines, double* dy_bins) {
  const int64_t C = spec.channels;
  const internal::AxisGeometry gy = internal::AxisOf(r[2], r[4], spec.pooled, params);
  const internal::AxisGeometry gx = internal::AxisOf(r[1], r[3], spec.pooled, params);
  *dy_bins += BackwardDyBins(gy, gx, spec, H, W);
  *fmas += static_cast<double>(C * spec.pooled * spec.pooled * 4 * gy.grid * gx.grid);
  *ops_bound += static_cast<double>(C) * RoiOpsLowerBound(gy, gx, spec.pooled, H, W);
  *loaded_bytes += static_cast<double>(C) * 4.0 * LoadedPixels(gy, gx, spec, H, W);
  bin_lines[0] += RoiBinLines(gy, gx, spec.pooled, H, W, C, Layout::kNHWC);
  for (Layout b : kBlockedLayouts) bin_lines[1 + BlockedIndex(b)] += RoiBinLines(gy, gx, spec.pooled, H, W, C, b);
  for (int64_t ph = 0; ph < spec.pooled; ++ph) {
    for (int64_t iy = 0; iy < gy.grid; ++iy) {
      const internal::AxisTap ty = internal::TapOf(internal::SamplePosition(gy, ph, iy), H);
      if (!ty.valid) continue;
      for (int64_t pw = 0; pw < spec.pooled; ++pw) {
        for (int64_t ix = 0; ix < gx.grid; ++ix) {
          const internal::AxisTap tx = internal::TapOf(internal::SamplePosition(gx, pw, ix), W);
          if (!tx.valid) continue;
          for (int64_t y : {ty.lo, ty.hi}) {
            for (int64_t x : {tx.lo, tx.hi}) (*touched)[static_cast<size_t>(y * W + x)] = 1;
          }
        }
      }
    }
  }
}

// As execution/pool_rotated.cc hands a rotated AVG bin to the microkernel: its samples kBinTaps / 4 at a time, each
// piece's taps sorted and equal pixels of nonzero weight merged when the piece has at most 64 taps (its
// kSortedTaps), left as they are otherwise. Returns the pixels the bin's pieces load.
constexpr int64_t kRotatedPieceSamples = internal::kBinTaps / 4;
int64_t MergedRotatedLoads(std::vector<std::vector<std::pair<int64_t, float>>>* pieces) {
  int64_t loads = 0;
  for (auto& piece : *pieces) {
    if (piece.size() > 64) {
      loads += static_cast<int64_t>(piece.size());
      continue;
    }
    std::stable_sort(piece.begin(), piece.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (size_t i = 0; i < piece.size(); ++i) {
      const bool merges = i > 0 && piece[i - 1].first == piece[i].first && piece[i].second != 0.0f &&
                          piece[i - 1].second != 0.0f;
      loads += merges ? 0 : 1;
    }
  }
  return loads;
}

// The same accounting for one rotated RoI (row (batch, cx, cy, w, h, angle) at r): its samples are not separable, so
// every count is over each sample's own four taps (RotatedSample, TapOf per axis, as execution/pool_rotated.cc):
// D - B from the pixels of nonzero weight (a bin's weights are non-negative, so a pixel's summed weight is nonzero
// when one of its taps' is), the loads as the AVG driver reads a bin's taps (MergedRotatedLoads where the plan merges
// them, else 4 per valid sample) or 4 per valid sample (MAX modes), the lines of each bin's distinct tap pixels, and
// the dY bins as BackwardDyBins.
void AccountRotatedRoi(const Params& params, const float* r, const WorkloadSpec& spec, int64_t H, int64_t W,
                       std::vector<char>* touched, double* fmas, double* ops_bound, double* loaded_bytes,
                       double* bin_lines, double* dy_bins) {
  const int64_t C = spec.channels, P = spec.pooled;
  const internal::RoiAxes a = internal::RotatedAxesOf(r + 1, 0, P, P, params);
  const int64_t samples = a.gy.grid * a.gx.grid;
  *fmas += static_cast<double>(C * P * P * 4 * samples);
  std::vector<int64_t> depends, bin;
  std::vector<std::pair<int64_t, float>> taps;
  std::vector<std::vector<std::pair<int64_t, float>>> pieces;  // the bin's taps, kRotatedPieceSamples samples each
  int64_t bins_depending = 0;
  double loaded = 0;
  for (int64_t ph = 0; ph < P; ++ph) {
    for (int64_t pw = 0; pw < P; ++pw) {
      taps.clear();
      pieces.assign(1, {});
      int64_t valid = 0;
      for (int64_t s = 0; s < samples; ++s) {
        if (s > 0 && s % kRotatedPieceSamples == 0) pieces.emplace_back();
        const internal::MapPointOf<float> pt = internal::RotatedSample(a, ph, pw, s / a.gx.grid, s % a.gx.grid);
        const internal::AxisTap ty = internal::TapOf(pt.y, H), tx = internal::TapOf(pt.x, W);
        if (!ty.valid || !tx.valid) continue;
        ++valid;
        for (int64_t i = 0; i < 4; ++i) {
          const int64_t y = i < 2 ? ty.lo : ty.hi, x = i % 2 ? tx.hi : tx.lo;
          const float wy = i < 2 ? ty.w_lo : ty.w_hi, wx = i % 2 ? tx.w_hi : tx.w_lo;
          pieces.back().push_back({y * W + x, wy * wx});
        }
        taps.push_back({ty.lo * W + tx.lo, ty.w_lo * tx.w_lo});
        taps.push_back({ty.lo * W + tx.hi, ty.w_lo * tx.w_hi});
        taps.push_back({ty.hi * W + tx.lo, ty.w_hi * tx.w_lo});
        taps.push_back({ty.hi * W + tx.hi, ty.w_hi * tx.w_hi});
      }
      const size_t before = depends.size();
      bin.clear();
      for (const auto& t : taps) {
        (*touched)[static_cast<size_t>(t.first)] = 1;
        bin.push_back(t.first);
        if (t.second != 0.0f) depends.push_back(t.first);
      }
      bins_depending += depends.size() > before ? 1 : 0;
      if (spec.pool_mode == PoolMode::kAvg) {
        *dy_bins += valid > 0 ? 1 : 0;
        loaded += static_cast<double>(internal::MergesRotatedPixels(C) ? MergedRotatedLoads(&pieces) : 4 * valid);
      } else {
        *dy_bins += valid > 0 && valid == samples ? 1 : 0;
        loaded += static_cast<double>(4 * valid);
      }
      std::sort(bin.begin(), bin.end());
      bin.erase(std::unique(bin.begin(), bin.end()), bin.end());
      bin_lines[0] += BinPixelLines(bin, H, W, C, Layout::kNHWC);
      for (Layout b : kBlockedLayouts) bin_lines[1 + BlockedIndex(b)] += BinPixelLines(bin, H, W, C, b);
    }
  }
  std::sort(depends.begin(), depends.end());
  const int64_t d = std::unique(depends.begin(), depends.end()) - depends.begin();
  *ops_bound += static_cast<double>(C) * static_cast<double>(std::max<int64_t>(0, d - bins_depending));
  *loaded_bytes += static_cast<double>(C) * 4.0 * loaded;
}

}  // namespace

const std::vector<WorkloadSpec>& StandardWorkloads() {
  static const std::vector<WorkloadSpec> kWorkloads = {
      {"default", 256, 200, 272, 1000, 7, 2, CoordinateMode::kLegacy, PoolMode::kAvg, 0.25f, 1088, 800, 16, 512},
      {"pooled14", 256, 200, 272, 1000, 14, 2, CoordinateMode::kLegacy, PoolMode::kAvg, 0.25f, 1088, 800, 16, 512},
      {"adaptive", 256, 200, 272, 1000, 7, 0, CoordinateMode::kHalfPixel, PoolMode::kAvg, 0.25f, 1088, 800, 16, 512},
      {"rois100", 256, 200, 272, 100, 7, 2, CoordinateMode::kLegacy, PoolMode::kAvg, 0.25f, 1088, 800, 16, 512},
      {"rois20", 256, 200, 272, 20, 7, 2, CoordinateMode::kLegacy, PoolMode::kAvg, 0.25f, 1088, 800, 16, 512},
      {"l3", 256, 50, 68, 1000, 7, 2, CoordinateMode::kLegacy, PoolMode::kAvg, 0.25f, 272, 200, 16, 128},
      {"rotated", 256, 200, 272, 1000, 7, 2, CoordinateMode::kHalfPixel, PoolMode::kAvg, 0.25f, 1088, 800, 16, 512,
       RoiKind::kRotated, 90},
  };
  return kWorkloads;
}

const WorkloadSpec* FindWorkload(const std::string& name) {
  for (const WorkloadSpec& w : StandardWorkloads()) {
    if (w.name == name) return &w;
  }
  return nullptr;
}

Params Workload::ParamsFor(Layout layout, DType dtype) const {
  Params p;
  p.pooled_height = p.pooled_width = spec.pooled;
  p.spatial_scale = spec.spatial_scale;
  p.sampling_ratio = spec.sampling_ratio;
  p.coordinate_mode = spec.coordinate_mode;
  p.pool_mode = spec.pool_mode;
  p.layout = layout;
  p.dtype = dtype;
  p.roi_kind = spec.roi_kind;
  if (spec.roi_kind == RoiKind::kRotated) p.angle_unit = AngleUnit::kDegrees;  // detectron2: counter-clockwise
  return p;
}

Params Workload::AxisAlignedParamsFor(Layout layout, DType dtype) const {
  Params p = ParamsFor(layout, dtype);
  p.roi_kind = RoiKind::kAxisAligned;
  p.angle_unit = AngleUnit::kRadians;
  p.rotation = Rotation::kCounterClockwise;
  p.coordinate_mode = CoordinateMode::kHalfPixel;
  return p;
}

Inputs Workload::AxisAlignedInputsFor(Layout layout, DType dtype) const {
  Inputs in = InputsFor(layout, dtype);
  in.rois = rois_axis.data();
  in.rois_f64 = nullptr;
  return in;
}

Inputs Workload::Angle0InputsFor(Layout layout, DType dtype) const {
  Inputs in = InputsFor(layout, dtype);
  in.rois = rois_angle0.data();
  in.rois_f64 = nullptr;
  return in;
}

size_t BlockedIndex(Layout layout) {
  for (size_t i = 0; i < 3; ++i) {
    if (kBlockedLayouts[i] == layout) return i;
  }
  return 0;
}

AlignedVector<float> FromNchw(const float* nchw, int64_t n, int64_t c, int64_t h, int64_t w, Layout to) {
  const internal::MapStrides s = internal::StridesOf(to, c, h, w);
  AlignedVector<float> out(static_cast<size_t>(n * s.image), 0.0f);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* src = nchw + (b * c + ch) * h * w;
      for (int64_t y = 0; y < h; ++y) {
        for (int64_t x = 0; x < w; ++x) out[static_cast<size_t>(s.Offset(b, ch, y, x))] = src[y * w + x];
      }
    }
  }
  return out;
}

double MaxAbsDiff(const float* a, Layout la, const float* b, Layout lb, int64_t n, int64_t c, int64_t h, int64_t w) {
  const internal::MapStrides sa = internal::StridesOf(la, c, h, w), sb = internal::StridesOf(lb, c, h, w);
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t y = 0; y < h; ++y) {
        for (int64_t x = 0; x < w; ++x) {
          const double d = static_cast<double>(a[sa.Offset(i, ch, y, x)]) - b[sb.Offset(i, ch, y, x)];
          worst = std::max(worst, std::fabs(d));
        }
      }
    }
  }
  return worst;
}

const void* Workload::Map(Layout layout, DType dtype) const {
  if (internal::IsBlocked(layout)) return dtype == DType::kF32 ? blocked[BlockedIndex(layout)].data() : nullptr;
  const bool nhwc_map = layout == Layout::kNHWC;
  switch (dtype) {
    case DType::kF32:
      return nhwc_map ? nhwc.data() : nchw.data();
    case DType::kF16:
      return nhwc_map ? nhwc_f16.data() : nchw_f16.data();
    case DType::kBF16:
      return nhwc_map ? nhwc_bf16.data() : nchw_bf16.data();
    case DType::kF64:
      return nhwc_map ? nhwc_f64.data() : nchw_f64.data();
  }
  return nullptr;
}

Inputs Workload::InputsFor(Layout layout, DType dtype) const {
  Inputs in;
  in.input = Map(layout, dtype);
  in.batch = 1;
  in.channels = spec.channels;
  in.height = spec.height;
  in.width = spec.width;
  in.rois = dtype == DType::kF64 ? nullptr : rois.data();  // f64 reads its RoIs in double
  in.rois_f64 = dtype == DType::kF64 ? rois_f64.data() : nullptr;
  in.num_rois = spec.num_rois;
  return in;
}

Workload MakeWorkload(const WorkloadSpec& spec) {
  Workload w;
  w.spec = spec;
  const int64_t C = spec.channels, H = spec.height, W = spec.width;
  Rng rng{0x5EED0000ull + static_cast<uint64_t>(spec.num_rois)};
  w.nchw.resize(static_cast<size_t>(C * H * W));
  for (float& v : w.nchw) v = rng.Uniform() * 2.0f - 1.0f;
  w.nhwc.resize(w.nchw.size());
  NchwToNhwc(w.nchw.data(), 1, C, H, W, w.nhwc.data());
  for (const AlignedVector<float>* map : {&w.nchw, &w.nhwc}) {
    AlignedVector<uint16_t>& f16 = map == &w.nchw ? w.nchw_f16 : w.nhwc_f16;
    AlignedVector<uint16_t>& bf16 = map == &w.nchw ? w.nchw_bf16 : w.nhwc_bf16;
    for (float v : *map) {
      f16.push_back(internal::F16BitsFromF32(v));
      bf16.push_back(internal::BF16BitsFromF32(v));
    }
    (map == &w.nchw ? w.nchw_f64 : w.nhwc_f64).assign(map->begin(), map->end());
  }
  const float lo = std::log(spec.min_roi), hi = std::log(spec.max_roi);
  const bool rotated = spec.roi_kind == RoiKind::kRotated;
  Rng angles{0x5EED0A6Eull};  // its own stream, so that the boxes are the axis-aligned workload's
  for (int64_t k = 0; k < spec.num_rois; ++k) {
    const float bw = std::min(std::exp(lo + (hi - lo) * rng.Uniform()), spec.image_width);
    const float bh = std::min(std::exp(lo + (hi - lo) * rng.Uniform()), spec.image_height);
    const float x1 = rng.Uniform() * (spec.image_width - bw), y1 = rng.Uniform() * (spec.image_height - bh);
    if (!rotated) {
      w.rois.insert(w.rois.end(), {0.0f, x1, y1, x1 + bw, y1 + bh});
      continue;
    }
    const float cx = x1 + bw / 2, cy = y1 + bh / 2;
    const float angle = (2.0f * angles.Uniform() - 1.0f) * spec.max_angle;
    w.rois.insert(w.rois.end(), {0.0f, cx, cy, bw, bh, angle});
    w.rois_angle0.insert(w.rois_angle0.end(), {0.0f, cx, cy, bw, bh, 0.0f});
    w.rois_axis.insert(w.rois_axis.end(), {0.0f, cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2});
  }
  w.rois_f64.assign(w.rois.begin(), w.rois.end());
  const Params params = w.ParamsFor(Layout::kNCHW);
  std::vector<char> touched(static_cast<size_t>(H * W), 0);
  double dy_bins = 0;
  const size_t columns = rotated ? 6 : 5;
  for (int64_t k = 0; k < spec.num_rois; ++k) {
    (rotated ? AccountRotatedRoi : AccountRoi)(params, &w.rois[columns * static_cast<size_t>(k)], spec, H, W,
                                               &touched, &w.fmas, &w.ops_bound, &w.loaded_bytes, w.bin_lines,
                                               &dy_bins);
  }
  const double pixels = static_cast<double>(std::count(touched.begin(), touched.end(), 1));
  w.distinct_input_bytes = pixels * static_cast<double>(C) * 4.0;
  w.output_bytes = static_cast<double>(w.OutputSize()) * 4.0;
  w.backward = BackwardOf(spec.pool_mode, C, dy_bins, static_cast<double>(H * W), w.fmas, w.ops_bound,
                          w.distinct_input_bytes, w.loaded_bytes);
  for (size_t i = 0; i < 3; ++i) w.blocked[i] = FromNchw(w.nchw.data(), 1, C, H, W, kBlockedLayouts[i]);
  return w;
}

MultiLevelParams PyramidWorkload::ParamsFor(Layout layout) const {
  MultiLevelParams mp;
  mp.params.pooled_height = mp.params.pooled_width = pooled;
  mp.params.sampling_ratio = sampling_ratio;
  mp.params.layout = layout;
  mp.scales = scales;
  mp.level_rule = LevelRule::kScale;
  return mp;
}

Params PyramidWorkload::LevelParams(Layout layout, size_t l) const {
  Params p = ParamsFor(layout).params;
  p.spatial_scale = scales[l];
  return p;
}

std::vector<LevelMap> PyramidWorkload::MapsFor(Layout layout) const {
  std::vector<LevelMap> maps;
  for (size_t l = 0; l < scales.size(); ++l) {
    const float* map = internal::IsBlocked(layout)             ? blocked[BlockedIndex(layout)][l].data()
                       : layout == Layout::kNHWC ? nhwc[l].data()
                                                 : nchw[l].data();
    maps.push_back({map, heights[l], widths[l]});
  }
  return maps;
}

MultiLevelInputs PyramidWorkload::InputsFor(const std::vector<LevelMap>& maps) const {
  MultiLevelInputs in;
  in.maps = maps.data();
  in.num_maps = static_cast<int32_t>(maps.size());
  in.batch = 1;
  in.channels = channels;
  in.rois = rois.data();
  in.num_rois = num_rois;
  return in;
}

PyramidWorkload MakePyramidWorkload() {
  PyramidWorkload w;
  w.scales = {0.25f, 0.125f, 0.0625f, 0.03125f};
  w.heights = {200, 100, 50, 25};
  w.widths = {272, 136, 68, 34};
  const float image_w = 1088, image_h = 800, lo = std::log(16.0f), hi = std::log(512.0f);
  Rng rng{0x5EED0F9Eull};
  const int64_t C = w.channels;
  for (size_t l = 0; l < w.scales.size(); ++l) {
    AlignedVector<float> map(static_cast<size_t>(C * w.heights[l] * w.widths[l]));
    for (float& v : map) v = rng.Uniform() * 2.0f - 1.0f;
    AlignedVector<float> nhwc(map.size());
    NchwToNhwc(map.data(), 1, C, w.heights[l], w.widths[l], nhwc.data());
    for (size_t i = 0; i < 3; ++i) {
      w.blocked[i].push_back(FromNchw(map.data(), 1, C, w.heights[l], w.widths[l], kBlockedLayouts[i]));
    }
    w.nchw.push_back(std::move(map));
    w.nhwc.push_back(std::move(nhwc));
  }
  const MultiLevelParams mp = w.ParamsFor(Layout::kNCHW);
  double dy_bins = 0, dx_pixels = 0;
  for (int64_t k = 0; k < w.num_rois; ++k) {
    const float bw = std::exp(lo + (hi - lo) * rng.Uniform()), bh = std::exp(lo + (hi - lo) * rng.Uniform());
    const float x1 = rng.Uniform() * (image_w - bw), y1 = rng.Uniform() * (image_h - bh);
    w.rois.insert(w.rois.end(), {0.0f, x1, y1, x1 + bw, y1 + bh});
    w.levels.push_back(internal::LevelOfBox(mp, internal::FinestLevel(mp), x1, y1, x1 + bw, y1 + bh));
  }
  for (size_t l = 0; l < w.scales.size(); ++l) {
    WorkloadSpec spec = {"fpn", C, w.heights[l], w.widths[l], w.num_rois, w.pooled, w.sampling_ratio,
                         CoordinateMode::kLegacy, PoolMode::kAvg, w.scales[l], image_w, image_h, 16, 512};
    const Params params = w.LevelParams(Layout::kNCHW, l);
    std::vector<char> touched(static_cast<size_t>(w.heights[l] * w.widths[l]), 0);
    for (int64_t k = 0; k < w.num_rois; ++k) {
      if (w.levels[static_cast<size_t>(k)] != static_cast<int32_t>(l)) continue;
      AccountRoi(params, &w.rois[static_cast<size_t>(5 * k)], spec, w.heights[l], w.widths[l], &touched, &w.fmas,
                 &w.ops_bound, &w.loaded_bytes, w.bin_lines, &dy_bins);
    }
    w.distinct_input_bytes +=
        static_cast<double>(std::count(touched.begin(), touched.end(), 1)) * static_cast<double>(C) * 4.0;
    dx_pixels += static_cast<double>(w.heights[l] * w.widths[l]);
  }
  w.output_bytes = static_cast<double>(w.OutputSize()) * 4.0;
  w.backward = BackwardOf(PoolMode::kAvg, C, dy_bins, dx_pixels, w.fmas, w.ops_bound, w.distinct_input_bytes,
                          w.loaded_bytes);
  return w;
}

Status LevelByLevel::Init(const PyramidWorkload& w, const std::string& target, Layout layout) {
  const std::vector<LevelMap> maps = w.MapsFor(layout);
  rois_.assign(maps.size(), {});
  for (size_t k = 0; k < w.levels.size(); ++k) {
    std::vector<float>& r = rois_[static_cast<size_t>(w.levels[k])];
    r.insert(r.end(), w.rois.begin() + static_cast<std::ptrdiff_t>(5 * k),
             w.rois.begin() + static_cast<std::ptrdiff_t>(5 * k + 5));
  }
  kernels_.clear();
  inputs_.clear();
  for (size_t l = 0; l < maps.size(); ++l) {
    Selection k = SelectKernel(target, w.LevelParams(layout, l));
    if (!k.ok()) return k.status();
    kernels_.push_back(k.value());
    Inputs in;
    in.input = maps[l].input;
    in.batch = 1;
    in.channels = w.channels;
    in.height = maps[l].height;
    in.width = maps[l].width;
    in.rois = rois_[l].data();
    in.num_rois = static_cast<int64_t>(rois_[l].size() / 5);
    inputs_.push_back(in);
  }
  per_roi_ = static_cast<size_t>(w.channels * w.pooled * w.pooled) * sizeof(float);
  return Status::Ok();
}

Status LevelByLevel::Run(void* out, int32_t threads) const {
  unsigned char* slice = static_cast<unsigned char*>(out);
  for (size_t l = 0; l < kernels_.size(); ++l) {
    const Status s = kernels_[l].Run(inputs_[l], slice, threads);
    if (!s.ok()) return s;
    slice += static_cast<size_t>(inputs_[l].num_rois) * per_roi_;
  }
  return Status::Ok();
}

double Bytes(double f32_bytes, DType dtype) {
  return f32_bytes * static_cast<double>(internal::BytesOf(dtype)) / 4.0;
}

}  // namespace bench
}  // namespace roialign
