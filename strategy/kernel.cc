// Kernel::Run: data validation, then the selected implementation, threaded over (RoI, channel block) tasks.
#include <algorithm>
#include <memory>
#include <new>
#include <vector>

#include "kernels/layout_transform.h"
#include "kernels/parallel.h"
#include "kernels/roi_geometry.h"
#include "kernels/row_bands.h"
#include "kernels/scratch.h"
#include "roialign/roialign.hpp"
#include "strategy/kernel_access.h"
#include "strategy/validation.h"

namespace roialign {
namespace {

// RoIs sorted by image, then by the rows they cover: consecutive RoIs read overlapping rows, which are then
// still in cache (a detector's RoIs arrive in score order, scattered over the map). Outputs keep their order,
// and each output is computed the same way whatever the order, so results do not change.
std::vector<int64_t> LocalityOrder(const internal::Problem& p) {
  std::vector<int64_t> order(static_cast<size_t>(p.num_rois));
  std::vector<std::pair<int64_t, float>> keys(order.size());
  for (int64_t k = 0; k < p.num_rois; ++k) {
    const internal::RoiRecord r = internal::RoiAt(p.rois, p.batch_indices, k);
    keys[static_cast<size_t>(k)] = {r.batch, r.y1 + r.y2};
    order[static_cast<size_t>(k)] = k;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return keys[static_cast<size_t>(a)] < keys[static_cast<size_t>(b)]; });
  return order;
}

// Planar kernels: when the RoIs' tap pixels (their footprint) reach a quarter of the map's pixels, turn the map
// channels-last once for all RoIs instead of copying each RoI's taps into a tile, one band of rows at a time, and
// run the channels-last bin loop on whole pixels over each band as the NHWC kernels do. The band (a few MB plus
// one row) is written just before the RoIs read it, so it is still in the last-level cache. A tile copy pays a
// cache line of every plane per run of tap columns, so the transform pays before the footprint reaches the map.
// Measured (issue 5): on the default workload faster than tiles, and than 64-channel blocks of the whole map,
// whose 256-byte pieces of a pixel the hardware prefetcher does not follow; the quarter, against the whole map,
// made the 100-RoI workload 1.10x / 1.36x faster at 1 / 2 threads and left 10 and 30 RoIs on tiles (always
// transforming made those 2-4x slower).
constexpr double kBandTransformFootprint = 0.25;
constexpr double kMaxBandBufferBytes = 64.0 * 1024 * 1024;
bool UseBandTransform(const internal::Implementation& impl, const internal::Problem& p, int64_t band_rows) {
  if (!impl.needs_tile) return false;
  const double pixels = static_cast<double>(p.batch) * static_cast<double>(p.height * p.width);
  const double rows = static_cast<double>(std::min(p.height, band_rows + 1));
  return p.footprint_pixels >= kBandTransformFootprint * pixels &&
         rows * static_cast<double>(p.width * p.channels) * 4.0 <= kMaxBandBufferBytes;
}

// Outputs larger than this do not stay in the last-level cache (32 MB here, shared with the map's bands), so
// channels-last kernels write finished bins with non-temporal stores.
constexpr double kStreamOutputBytes = 16.0 * 1024 * 1024;

// Channels per task. Planar kernels on per-RoI tiles: a fixed block of channels for all RoIs before the next
// block, so the block's planes (64 of the default 200x272 map: 14 MB) stay in the last-level cache while every
// RoI reads them. Channels-last loops read each tap pixel's channels contiguously, which the prefetchers
// stream; they keep whole pixels per task and split channels (in multiples of 64, a multiple of every vector
// width) only as far as needed for about 4 tasks per thread. Measured on the default workload: 64-channel
// blocks for all RoIs were 2x slower than whole pixels.
int64_t ChannelsPerTask(const internal::Implementation& impl, const internal::Problem& p, bool channels_last,
                        int32_t num_threads) {
  if (!channels_last && impl.channel_block > 0) return impl.channel_block;
  const int64_t K = p.num_rois, C = p.channels;
  const int64_t max_blocks = (C + 63) / 64;
  const int max_threads = internal::ResolveThreadCount(num_threads, K * max_blocks);
  const int64_t blocks = std::min<int64_t>(max_blocks, std::max<int64_t>(1, (4 * max_threads + K - 1) / K));
  return ((C + blocks - 1) / blocks + 63) / 64 * 64;
}

// Each RoI's first and last band, and whether its rows can be split by band at all (row_bands.h).
struct BandPlan {
  int64_t band_rows = 0, num_bands = 1;
  std::vector<int64_t> first, last;
  std::vector<char> split;
};
BandPlan PlanBands(const internal::Problem& p, int64_t band_rows) {
  BandPlan plan;
  const int64_t K = p.num_rois, PH = p.params.pooled_height;
  plan.band_rows = band_rows;
  plan.num_bands = (p.height + band_rows - 1) / band_rows;
  plan.first.resize(static_cast<size_t>(K));
  plan.last.resize(static_cast<size_t>(K));
  plan.split.resize(static_cast<size_t>(K));
  std::vector<internal::AxisTap> taps(static_cast<size_t>(PH * p.max_grid_h));
  for (int64_t k = 0; k < K; ++k) {
    const internal::RoiRecord r = internal::RoiAt(p.rois, p.batch_indices, k);
    const internal::AxisGeometry gy = internal::AxisOf(r.y1, r.y2, PH, p.params);
    internal::FillAxisTaps(gy, PH, p.height, taps.data());
    const size_t i = static_cast<size_t>(k);
    plan.split[i] = internal::RoiBands(gy, PH, taps.data(), band_rows, plan.num_bands, &plan.first[i], &plan.last[i]);
  }
  return plan;
}

Status RunBuiltin(const internal::Implementation& impl, const internal::Problem& problem, int32_t num_threads) {
  const int64_t K = problem.num_rois, C = problem.channels, H = problem.height, W = problem.width;
  const int64_t band_rows = internal::BandRows(W, C);
  const bool band_transform = UseBandTransform(impl, problem, band_rows);
  // Bands pay when RoIs share pixels: only when together they read more pixels than the map holds (the
  // planar path's rule too). A few RoIs go straight over the map in one parallel region instead of one per band.
  const bool banded = band_transform || (impl.row_bands && (H + band_rows - 1) / band_rows > 1 &&
                                         problem.footprint_pixels > static_cast<double>(problem.batch * H * W));
  const int64_t block_size = ChannelsPerTask(impl, problem, banded || impl.row_bands, num_threads);
  const int64_t num_blocks = (C + block_size - 1) / block_size;
  const int threads = internal::ResolveThreadCount(num_threads, K * num_blocks);
  const bool stream_output = impl.row_bands && static_cast<double>(K) * static_cast<double>(
      problem.params.pooled_height * problem.params.pooled_width * C) * 4.0 > kStreamOutputBytes;

  std::vector<internal::Scratch> scratch;
  std::vector<int64_t> order;
  BandPlan plan;
  std::unique_ptr<float[]> band_buffer;
  try {
    scratch.resize(static_cast<size_t>(threads));
    for (internal::Scratch& s : scratch) s.Prepare(problem, impl.needs_tile);
    order = LocalityOrder(problem);
    if (banded) plan = PlanBands(problem, band_rows);
    if (band_transform) band_buffer.reset(new float[static_cast<size_t>(std::min(H, band_rows + 1) * W * C)]);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kOutOfMemory, "out of memory allocating working memory for " + impl.name);
  }
  // Tasks are (channel block, RoI), block-major: consecutive tasks share a block and visit RoIs in locality
  // order.
  auto run = [&](const internal::Problem& p, const std::vector<int64_t>& rois) {
    const int64_t n = static_cast<int64_t>(rois.size());
    internal::ParallelFor(n * num_blocks, threads, [&](int64_t task, int thread) {
      const int64_t block = task / n, k = rois[static_cast<size_t>(task % n)];
      const int64_t c_begin = block * block_size, c_end = std::min(C, c_begin + block_size);
      impl.builtin(p, k, k + 1, c_begin, c_end, scratch[static_cast<size_t>(thread)]);
    });
  };
  internal::Problem p = problem;
  p.stream_output = stream_output;
  if (!banded) {
    run(p, order);
    return Status::Ok();
  }
  // All RoIs go over one band of map rows at a time (row_bands.h). A RoI's bins carry partial state from band
  // to band, so bands run one after another. Channels-last kernels read the bands in place (RoIs that cannot be
  // split run whole in band 0); planar kernels read each image's band from the channels-last copy, and the RoIs
  // that cannot be split run afterwards on per-RoI tiles.
  p.band_rows = plan.band_rows;
  p.num_bands = plan.num_bands;
  std::vector<int64_t> rois;
  rois.reserve(static_cast<size_t>(K));
  const int64_t images = band_transform ? problem.batch : 1;
  for (int64_t image = 0; image < images; ++image) {
    for (int64_t band = 0; band < plan.num_bands; ++band) {
      rois.clear();
      for (int64_t k : order) {
        const size_t i = static_cast<size_t>(k);
        if (plan.first[i] > band || band > plan.last[i]) continue;
        if (band_transform && (!plan.split[i] || internal::RoiAt(p.rois, p.batch_indices, k).batch != image)) {
          continue;
        }
        rois.push_back(k);
      }
      if (rois.empty()) continue;
      p.band = band;
      if (band_transform) {
        int64_t row_begin = 0, row_end = 0;
        internal::BandMapRows(band, plan.band_rows, plan.num_bands, H, &row_begin, &row_end);
        internal::PlanesToChannelsLast(problem.input + (image * C * H + row_begin) * W, C, H * W,
                                       (row_end - row_begin) * W, band_buffer.get(), threads);
        p.shared_nhwc = band_buffer.get();
        p.shared_image = image;
        p.shared_row_begin = row_begin;
        p.shared_row_end = row_end;
      }
      run(p, rois);
    }
  }
  if (band_transform) {
    rois.clear();
    for (int64_t k : order) {
      if (!plan.split[static_cast<size_t>(k)]) rois.push_back(k);
    }
    if (!rois.empty()) run(problem, rois);
  }
  return Status::Ok();
}

}  // namespace

const std::string& Kernel::name() const {
  static const std::string kEmpty;
  return impl_ ? impl_->name : kEmpty;
}

Status Kernel::Run(const Inputs& inputs, void* output, int32_t num_threads) const {
  if (!impl_) return Status(StatusCode::kInvalidArgument, "kernel is empty (not obtained from a successful Select)");
  internal::Problem problem;
  Status s = internal::ValidateData(params_, inputs, output, &problem);
  if (!s.ok()) return s;
  if (problem.num_rois == 0 || problem.channels == 0) return Status::Ok();  // nothing to write
  if (impl_->custom) {
    roialign_params p;
    p.pooled_height = params_.pooled_height;
    p.pooled_width = params_.pooled_width;
    p.spatial_scale = params_.spatial_scale;
    p.sampling_ratio = params_.sampling_ratio;
    p.coordinate_mode = static_cast<roialign_coordinate_mode>(params_.coordinate_mode);
    p.pool_mode = static_cast<roialign_pool_mode>(params_.pool_mode);
    p.layout = static_cast<roialign_layout>(params_.layout);
    p.dtype = static_cast<roialign_dtype>(params_.dtype);
    const roialign_problem rp = {&p,     inputs.input, inputs.batch, inputs.channels, inputs.height, inputs.width,
                                 inputs.rois, inputs.batch_indices, inputs.num_rois, output, num_threads};
    return impl_->custom(rp);
  }
  return RunBuiltin(*impl_, problem, num_threads);
}

}  // namespace roialign
