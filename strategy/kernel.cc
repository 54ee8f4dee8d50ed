// Kernel::Run: data validation, then the selected implementation, threaded over (RoI, channel block) tasks.
#include <algorithm>
#include <memory>
#include <new>
#include <vector>

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

// Planar kernels: transform each channel block to channels-last once for all RoIs when the RoIs together would
// copy more pixels into per-RoI tiles than the map holds (many or large RoIs), and the block fits a bounded
// buffer. The results are the same either way: both paths feed the same values to the same arithmetic.
constexpr double kMaxSharedBytes = 64.0 * 1024 * 1024;
bool UseSharedTransform(const internal::Implementation& impl, const internal::Problem& p, int64_t block_size) {
  if (!impl.needs_tile) return false;
  const double pixels = static_cast<double>(p.batch) * static_cast<double>(p.height * p.width);
  return p.footprint_pixels > pixels && pixels * static_cast<double>(block_size) * 4.0 <= kMaxSharedBytes;
}

Status RunBuiltin(const internal::Implementation& impl, const internal::Problem& problem, int32_t num_threads) {
  const int64_t K = problem.num_rois, C = problem.channels;
  int64_t block_size;
  if (impl.channel_block > 0) {
    // Planar kernels: a fixed block of channels for all RoIs before the next block, so the block's planes
    // (64 of the default 200x272 map: 14 MB) stay in the last-level cache while every RoI reads them.
    block_size = impl.channel_block;
  } else {
    // Channels-last kernels read each tap pixel's channels contiguously, which the prefetchers stream; keep
    // whole pixels per task and split channels (in multiples of 64, a multiple of every vector width) only as
    // far as needed for about 4 tasks per thread. Measured on the default workload: 64-channel blocks for
    // all RoIs were 2x slower than whole pixels.
    const int64_t max_blocks = (C + 63) / 64;
    const int max_threads = internal::ResolveThreadCount(num_threads, K * max_blocks);
    const int64_t blocks = std::min<int64_t>(max_blocks, std::max<int64_t>(1, (4 * max_threads + K - 1) / K));
    block_size = ((C + blocks - 1) / blocks + 63) / 64 * 64;
  }
  const int64_t num_blocks = (C + block_size - 1) / block_size;
  const int threads = internal::ResolveThreadCount(num_threads, K * num_blocks);
  const int64_t HW = problem.height * problem.width;

  std::vector<internal::Scratch> scratch;
  std::vector<int64_t> order;
  std::unique_ptr<float[]> shared;
  const bool transform_blocks = UseSharedTransform(impl, problem, block_size);
  try {
    scratch.resize(static_cast<size_t>(threads));
    for (internal::Scratch& s : scratch) s.Prepare(problem, impl.needs_tile);
    order = LocalityOrder(problem);
    if (transform_blocks) shared.reset(new float[static_cast<size_t>(problem.batch * HW * block_size)]);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kOutOfMemory, "out of memory allocating per-thread scratch for " + impl.name);
  }
  const int64_t band_rows = internal::BandRows(problem.width, C);
  const int64_t num_bands = (problem.height + band_rows - 1) / band_rows;
  if (impl.row_bands && num_bands > 1) {
    // The map exceeds a band: all RoIs go over one band of rows at a time (row_bands.h). A RoI's bins carry
    // partial state from band to band, so bands run one after another; within a band, tasks are (channel
    // block, RoI) as below.
    std::vector<int64_t> first(static_cast<size_t>(K)), last(static_cast<size_t>(K));
    try {
      std::vector<internal::AxisTap> taps(static_cast<size_t>(problem.params.pooled_height * problem.max_grid_h));
      for (int64_t k = 0; k < K; ++k) {
        const internal::RoiRecord r = internal::RoiAt(problem.rois, problem.batch_indices, k);
        const internal::AxisGeometry gy = internal::AxisOf(r.y1, r.y2, problem.params.pooled_height, problem.params);
        internal::FillAxisTaps(gy, problem.params.pooled_height, problem.height, taps.data());
        internal::RoiBands(gy, problem.params.pooled_height, taps.data(), band_rows, num_bands,
                           &first[static_cast<size_t>(k)], &last[static_cast<size_t>(k)]);
      }
    } catch (const std::bad_alloc&) {
      return Status(StatusCode::kOutOfMemory, "out of memory planning row bands for " + impl.name);
    }
    internal::Problem p = problem;
    p.band_rows = band_rows;
    p.num_bands = num_bands;
    std::vector<int64_t> rois;
    rois.reserve(static_cast<size_t>(K));
    for (int64_t band = 0; band < num_bands; ++band) {
      rois.clear();
      for (int64_t k : order) {
        if (first[static_cast<size_t>(k)] <= band && band <= last[static_cast<size_t>(k)]) rois.push_back(k);
      }
      p.band = band;
      const int64_t n = static_cast<int64_t>(rois.size());
      internal::ParallelFor(n * num_blocks, threads, [&](int64_t task, int thread) {
        const int64_t block = task / n, k = rois[static_cast<size_t>(task % n)];
        const int64_t c_begin = block * block_size, c_end = std::min(C, c_begin + block_size);
        impl.builtin(p, k, k + 1, c_begin, c_end, scratch[static_cast<size_t>(thread)]);
      });
    }
    return Status::Ok();
  }
  if (!transform_blocks) {
    // Block-major tasks: consecutive tasks share a channel block and visit RoIs in locality order.
    internal::ParallelFor(K * num_blocks, threads, [&](int64_t task, int thread) {
      const int64_t block = task / K, k = order[static_cast<size_t>(task % K)];
      const int64_t c_begin = block * block_size, c_end = std::min(C, c_begin + block_size);
      impl.builtin(problem, k, k + 1, c_begin, c_end, scratch[static_cast<size_t>(thread)]);
    });
    return Status::Ok();
  }
  internal::Problem p = problem;
  for (int64_t block = 0; block < num_blocks; ++block) {
    const int64_t c_begin = block * block_size, c_end = std::min(C, c_begin + block_size);
    // The block's planes of each image, channels-last, once for all RoIs (see UseSharedTransform).
    for (int64_t b = 0; b < problem.batch; ++b) {
      Status s = NchwToNhwc(problem.input + (b * C + c_begin) * HW, 1, c_end - c_begin, problem.height,
                            problem.width, shared.get() + b * HW * (c_end - c_begin), threads);
      if (!s.ok()) return s;
    }
    p.shared_nhwc = shared.get();
    p.shared_c_begin = c_begin;
    p.shared_channels = c_end - c_begin;
    // RoIs in locality order; each task is one RoI of this channel block.
    internal::ParallelFor(K, threads, [&](int64_t task, int thread) {
      const int64_t k = order[static_cast<size_t>(task)];
      impl.builtin(p, k, k + 1, c_begin, c_end, scratch[static_cast<size_t>(thread)]);
    });
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
