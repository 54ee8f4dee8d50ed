// What the strategy layer hands a built-in kernel after validation: the call's data plus facts found while
// validating. Kernels assert preconditions and never re-check the data.
#ifndef ROIALIGN_KERNELS_PROBLEM_H_
#define ROIALIGN_KERNELS_PROBLEM_H_

#include <cstdint>

#include "roialign/roialign.hpp"

namespace roialign {
namespace internal {

struct Problem {
  Params params;
  const float* input = nullptr;
  int64_t batch = 0, channels = 0, height = 0, width = 0;
  const float* rois = nullptr;
  const int64_t* batch_indices = nullptr;  // null: rois are [K,5]
  int64_t num_rois = 0;
  float* output = nullptr;
  int64_t max_grid_h = 0, max_grid_w = 0;  // largest sampling grid of any RoI (sizes scratch)
  double footprint_pixels = 0;             // sum over RoIs of an upper bound on the pixels their taps read

  // Channels-last kernels only (row_bands.h): when band_rows > 0, process only the sample rows in band `band`
  // of num_bands bands of band_rows map rows; bins resume from and leave their partial state in the output.
  int64_t band_rows = 0, band = 0, num_bands = 1;
  // Channels-last kernels only: finished bins may be written with non-temporal stores (the output is too large
  // to stay in cache, and ordinary stores would first read every output line from memory).
  bool stream_output = false;

  // Planar kernels only: when set, map rows [shared_row_begin, shared_row_end) of image shared_image, all
  // channels, are also available channels-last here ((shared_row_end - shared_row_begin) x W x C), prepared
  // once for all of the image's RoIs. The call then processes only the sample rows of band `band` (as above),
  // whose taps all lie in those rows; its RoIs belong to shared_image and are split by band (RoiBands).
  const float* shared_nhwc = nullptr;
  int64_t shared_image = 0, shared_row_begin = 0, shared_row_end = 0;
};

struct Scratch;

// Computes output channels [c_begin, c_end) of RoIs [roi_begin, roi_end). Called concurrently on disjoint
// ranges, each caller with its own scratch.
using RoiAlignFn = void (*)(const Problem& problem, int64_t roi_begin, int64_t roi_end, int64_t c_begin,
                            int64_t c_end, Scratch& scratch);

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_KERNELS_PROBLEM_H_
