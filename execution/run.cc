// Kernel::Run: data validation, then the plan, executed with the kernel selection resolved.
#include <memory>
#include <new>
#include <utility>

#include "execution/execute.h"
#include "execution/plan.h"
#include "execution/selected_kernel.h"
#include "execution/validate_data.h"
#include "roialign/roialign.hpp"

namespace roialign {
namespace {

// The call as a registered implementation receives it (C types; data already validated).
Status RunCustom(const internal::SelectedKernel& selected, const Params& params, const Inputs& inputs, void* output,
                 int32_t num_threads) {
  roialign_params p;
  p.pooled_height = params.pooled_height;
  p.pooled_width = params.pooled_width;
  p.spatial_scale = params.spatial_scale;
  p.sampling_ratio = params.sampling_ratio;
  p.coordinate_mode = static_cast<roialign_coordinate_mode>(params.coordinate_mode);
  p.pool_mode = static_cast<roialign_pool_mode>(params.pool_mode);
  p.layout = static_cast<roialign_layout>(params.layout);
  p.dtype = static_cast<roialign_dtype>(params.dtype);
  const roialign_problem rp = {&p,          inputs.input,         inputs.batch,    inputs.channels,
                               inputs.height, inputs.width,       inputs.rois,     inputs.batch_indices,
                               inputs.num_rois, output,           num_threads};
  return selected.custom(rp);
}

// Gives the working memory back to the kernel's pool however Run ends.
class BorrowedMemory {
 public:
  explicit BorrowedMemory(internal::WorkingMemoryPool& pool) : pool_(pool), memory_(pool.Acquire()) {}
  ~BorrowedMemory() { pool_.Release(std::move(memory_)); }
  internal::WorkingMemory& get() { return *memory_; }

 private:
  internal::WorkingMemoryPool& pool_;
  std::unique_ptr<internal::WorkingMemory> memory_;
};

}  // namespace

const std::string& Kernel::name() const {
  static const std::string kEmpty;
  return selected_ ? selected_->name : kEmpty;
}

Status Kernel::Run(const Inputs& inputs, void* output, int32_t num_threads) const {
  if (!selected_) return Status(StatusCode::kInvalidArgument, "kernel is empty (not obtained from a successful Select)");
  internal::Problem problem;
  Status s = internal::ValidateData(params_, inputs, output, &problem);
  if (!s.ok()) return s;
  if (problem.num_rois == 0 || problem.channels == 0) return Status::Ok();  // nothing to write
  const internal::SelectedKernel& selected = *selected_;
  if (selected.custom) return RunCustom(selected, params_, inputs, output, num_threads);
  try {
    const internal::Plan plan = internal::MakePlan(problem, selected.needs, num_threads);
    BorrowedMemory memory(selected.memory);
    internal::Execute(problem, plan, selected.fn, selected.transpose, selected.needs, memory.get());
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kOutOfMemory, "out of memory allocating working memory for " + selected.name);
  }
  return Status::Ok();
}

}  // namespace roialign
