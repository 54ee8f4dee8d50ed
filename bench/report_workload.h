// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The layout report's workloads as its one flow (layout_report.cc RunWorkload) runs them: a single-level workload is
// the one-level case of the pyramid's, as in the library (execution/run.cc). Each kind gives its maps level by level,
// its accounting and its kernels behind one interface, so that the flow selects, checks and times both alike; what
// only one kind has (the pyramid's RoIs level by level, a rotated workload's comparison with the axis-aligned
// kernel) it gives as kernels that the flow times beside the others.
#ifndef ROIALIGN_BENCH_REPORT_WORKLOAD_H_
#define ROIALIGN_BENCH_REPORT_WORKLOAD_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/conversions.h"
#include "bench/report_rows.h"
#include "bench/workloads.h"
#include "core/library.h"

namespace roialign {
namespace bench {

// A forward kernel of a workload, of one layout and dtype, selected for one target; cheap to copy (copies share the
// kernel and its working memory).
struct ForwardKernel {
  std::string name;  // its path in the table: its layout ("NHWC"), or the kind's own ("NCHW level by level")
  Status status;     // not ok: refused, and why
  std::function<Status(void* out, int threads)> run;  // on the workload's own maps and RoIs
  KernelOn run_on;  // on maps given as pointers, one per level in the kernel's layout (the conversion rows'); its RoIs
  bool ok() const { return status.ok(); }
};

// A backward kernel of a workload, of one layout and dtype: dX (dx[l] for level l) from dY, with the forward's inputs.
struct BackwardCall {
  Status status;  // not ok: refused, and why
  std::function<Status(const void* dy, void* const* dx, int threads)> run;
  bool ok() const { return status.ok(); }
};

// A workload of either kind, built (and said so on stderr) by MakeReportWorkload or MakeReportPyramid.
class ReportWorkload {
 public:
  virtual ~ReportWorkload() = default;
  const std::string& name() const { return name_; }
  const MapShape& shape() const { return shape_; }  // one level, or the pyramid's
  int64_t num_rois() const { return num_rois_; }
  int64_t pooled() const { return pooled_; }
  size_t OutputSize() const { return static_cast<size_t>(num_rois_ * shape_.channels * pooled_ * pooled_); }
  // The table's header after NCHW and NHWC: the third and fourth columns and the last, whose cells
  // ColumnKernels and Last give.
  const char* const* columns() const { return columns_; }

  virtual const Accounting& accounting() const = 0;
  // Of the dtypes asked for, those it runs (the pyramid's maps are f32 only).
  virtual std::vector<DType> Dtypes(const std::vector<DType>& asked) const = 0;
  // Its map in `layout` and `dtype`, one per level (null where not built: blocked layouts in other dtypes than f32).
  virtual std::vector<const void*> Maps(Layout layout, DType dtype) const = 0;
  // The values dY repeats (BackwardDy): the first level's NCHW f32 map.
  virtual const AlignedVector<float>& DyValues() const = 0;
  // Its kernel of `layout` and `dtype` on `target`, named by the layout.
  virtual ForwardKernel Forward(const std::string& target, Layout layout, DType dtype) const = 0;
  virtual BackwardCall Backward(const std::string& target, Layout layout, DType dtype) const = 0;
  // The kernels of the table's third and fourth columns when they are the kind's own: the pyramid's RoIs level by
  // level with single-level kernels, NCHW and NHWC (their outputs are in level order, so no reference checks them).
  // Empty: those columns are the NHWC<->NCHW conversion rows.
  virtual std::vector<ForwardKernel> ColumnKernels(const std::string& target) const = 0;
  // Kernels timed in the group's rounds without rows of their own, the first checked against the second's output:
  // a rotated workload's NHWC kernel with every angle 0 and the axis-aligned NHWC kernel on the same boxes
  // (RotatedComparison). Empty: none.
  virtual std::vector<ForwardKernel> Comparison(const std::string& target, DType dtype) const = 0;
  // The last cell of a group's line, from its rows (NCHW, NHWC, then the third and fourth columns').
  virtual std::string Last(const std::vector<Row>& rows) const = 0;
  // Writes it to `dir` for bench/peers.py, with `target`'s NCHW result (bench/workload_dump.h).
  virtual void Dump(const std::string& dir, const char* target, const std::vector<int>& threads) const = 0;

 protected:
  ReportWorkload(std::string name, MapShape shape, int64_t num_rois, int64_t pooled, const char* third,
                 const char* fourth, const char* last);

 private:
  std::string name_;
  MapShape shape_;
  int64_t num_rois_, pooled_;
  const char* columns_[3];
};

// A single-level workload: one level.
std::unique_ptr<ReportWorkload> MakeReportWorkload(const WorkloadSpec& spec);
// The FPN pyramid (MakePyramidWorkload): one multi-level call per layout, and its RoIs level by level.
std::unique_ptr<ReportWorkload> MakeReportPyramid();

}  // namespace bench
}  // namespace roialign

#endif  // ROIALIGN_BENCH_REPORT_WORKLOAD_H_
