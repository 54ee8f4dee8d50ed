// The scalar reference of DESIGN.md §1.1: the oracle every other implementation is tested against.
#ifndef ROIALIGN_KERNELS_ROI_ALIGN_REFERENCE_H_
#define ROIALIGN_KERNELS_ROI_ALIGN_REFERENCE_H_

#include "kernels/problem.h"

namespace roialign {
namespace internal {

// Both layouts, every mode, float32. Written for clarity, not speed.
void RoiAlignReference(const Problem& problem, int64_t roi_begin, int64_t roi_end, int64_t c_begin,
                       int64_t c_end, Scratch& scratch);

}  // namespace internal
}  // namespace roialign

#endif  // ROIALIGN_KERNELS_ROI_ALIGN_REFERENCE_H_
