// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0

// roialign._roialign: the compiled half of the Python package. The API users call is python/roialign/__init__.py
// (docs/python.md); it types and allocates the arrays and hands this module dense buffers in memory order. The
// extents of those buffers (the columns of the rois, the length of batch_indices and levels, the shape of out) are
// checked here and nowhere else, before the library validates the data; the dtype, density and overlap checks guard
// memory, so that the module is safe on its own.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "roialign/roialign.hpp"

namespace nb = nanobind;

namespace {

// A failed roialign::Status on its way to Python; TranslateStatusError raises the exception of its code.
class StatusError : public std::runtime_error {
 public:
  explicit StatusError(const roialign::Status& status)
      : std::runtime_error(status.message()), code_(status.code()) {}
  roialign::StatusCode code() const { return code_; }

 private:
  roialign::StatusCode code_;
};

void TranslateStatusError(const std::exception_ptr& error, void*) {
  try {
    std::rethrow_exception(error);
  } catch (const StatusError& e) {
    PyObject* type = PyExc_RuntimeError;  // INTERNAL (a bug, or a registered implementation's own status)
    switch (e.code()) {
      case roialign::StatusCode::kInvalidArgument:
        type = PyExc_ValueError;
        break;
      case roialign::StatusCode::kUnsupported:
        type = PyExc_NotImplementedError;
        break;
      case roialign::StatusCode::kOutOfMemory:
        type = PyExc_MemoryError;
        break;
      case roialign::StatusCode::kOk:
      case roialign::StatusCode::kInternal:
        break;
    }
    PyErr_SetString(type, e.what());
  }
}

void Check(const roialign::Status& status) {
  if (!status.ok()) throw StatusError(status);
}

std::string DTypeName(nb::dlpack::dtype dtype) {
  const char* kind = "?";
  switch (static_cast<nb::dlpack::dtype_code>(dtype.code)) {
    case nb::dlpack::dtype_code::Int: kind = "int"; break;
    case nb::dlpack::dtype_code::UInt: kind = "uint"; break;
    case nb::dlpack::dtype_code::Float: kind = "float"; break;
    case nb::dlpack::dtype_code::Bfloat: kind = "bfloat"; break;
    case nb::dlpack::dtype_code::Complex: kind = "complex"; break;
    case nb::dlpack::dtype_code::Bool: return "bool";
    default: break;
  }
  std::string name = kind + std::to_string(dtype.bits);
  if (dtype.lanes != 1) name += "x" + std::to_string(dtype.lanes);
  return name;
}

// The element type of each roialign::DType, as DLPack spells it.
bool Matches(nb::dlpack::dtype dtype, roialign::DType want) {
  const auto code = static_cast<nb::dlpack::dtype_code>(dtype.code);
  if (dtype.lanes != 1) return false;
  switch (want) {
    case roialign::DType::kF32:
      return code == nb::dlpack::dtype_code::Float && dtype.bits == 32;
    case roialign::DType::kF16:
      return code == nb::dlpack::dtype_code::Float && dtype.bits == 16;
    case roialign::DType::kBF16:
      return code == nb::dlpack::dtype_code::Bfloat && dtype.bits == 16;
    case roialign::DType::kF64:
      return code == nb::dlpack::dtype_code::Float && dtype.bits == 64;
  }
  return false;
}

const char* PythonDTypeName(roialign::DType dtype) {
  switch (dtype) {
    case roialign::DType::kF32: return "float32";
    case roialign::DType::kF16: return "float16";
    case roialign::DType::kBF16: return "bfloat16";
    case roialign::DType::kF64: return "float64";
  }
  return "?";
}

// The RoIs' element type for a kernel's dtype: an F64 kernel reads them in double (rois_f64), every other in float.
roialign::DType RoisDTypeOf(roialign::DType dtype) {
  return dtype == roialign::DType::kF64 ? roialign::DType::kF64 : roialign::DType::kF32;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + ")";
}

template <typename Array>
std::vector<int64_t> ShapeOf(const Array& a) {
  std::vector<int64_t> shape(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i) shape[i] = static_cast<int64_t>(a.shape(i));
  return shape;
}

template <typename A, typename B>
bool Overlap(const A& a, const B& b) {
  if (a.nbytes() == 0 || b.nbytes() == 0) return false;
  const auto* a0 = static_cast<const unsigned char*>(static_cast<const void*>(a.data()));
  const auto* b0 = static_cast<const unsigned char*>(static_cast<const void*>(b.data()));
  return a0 < b0 + b.nbytes() && b0 < a0 + a.nbytes();
}

// Dense, row-major (strides of dimensions of extent 1 do not matter), on the CPU; the dtype is checked against the
// kernel's, the rank against its layout (4, or 5 for the blocked layouts). Input and RoIs may be read-only.
using InputArray = nb::ndarray<nb::ro, nb::device::cpu, nb::c_contig>;
// float32 RoIs, or float64 for an F64 kernel (checked against the kernel's dtype by CheckRois).
using RoisArray = nb::ndarray<nb::ro, nb::ndim<2>, nb::device::cpu, nb::c_contig>;
using BatchIndexArray = nb::ndarray<const int64_t, nb::ndim<1>, nb::device::cpu, nb::c_contig>;
using OutputArray = nb::ndarray<nb::device::cpu, nb::c_contig>;

// The channel block b of a blocked layout (NCHW4c, NCHW8c, NCHW16c), 0 for NCHW and NHWC: the library's own fact.
int64_t BlockOf(roialign::Layout layout) {
  return std::max<int32_t>(0, roialign_layout_channel_block(static_cast<roialign_layout>(layout)));
}

// ceil(a / b) for a >= 0, b > 0, without overflow for any a.
int64_t CeilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

// The extents of one map in the kernel's layout.
struct MapExtents {
  int64_t n = 0, c = 0, h = 0, w = 0;
};

// The one check of a map's extents against its layout: [N, C, H, W] (NCHW), [N, H, W, C] (NHWC) or
// [N, ceil(C/b), H, W, b] (blocked). `channels` is the logical C: for the blocked layouts, when not given,
// ceil(C/b)*b; when given it must fit the array's blocks; for NCHW and NHWC it must equal the array's C.
MapExtents CheckMap(const std::vector<int64_t>& shape, roialign::Layout layout, std::optional<int64_t> channels,
                    const std::string& what) {
  const int64_t b = BlockOf(layout);
  const bool nhwc = layout == roialign::Layout::kNHWC;
  const char* form = b ? "[N, ceil(C/b), H, W, b]" : nhwc ? "[N, H, W, C]" : "[N, C, H, W]";
  const size_t rank = b ? 5 : 4;
  if (shape.size() != rank) {
    throw nb::value_error((what + " must be " + std::to_string(rank) + "-D, " + form + " for layout " +
                           roialign::ToString(layout) + "; got shape " + ShapeString(shape))
                              .c_str());
  }
  MapExtents e;
  e.n = shape[0];
  if (b) {
    if (shape[4] != b) {
      throw nb::value_error((what + " has shape " + ShapeString(shape) + ": its last dimension must be the block, " +
                             std::to_string(b) + " for layout " + roialign::ToString(layout) + " (" + form + ")")
                                .c_str());
    }
    e.h = shape[2];
    e.w = shape[3];
    if (shape[1] > INT64_MAX / b) {  // only an empty array can claim that many blocks
      throw nb::value_error((what + " has shape " + ShapeString(shape) + ": too many channel blocks").c_str());
    }
    e.c = shape[1] * b;
    if (channels) {
      if (*channels < 0 || CeilDiv(*channels, b) != shape[1]) {
        throw nb::value_error(("channels=" + std::to_string(*channels) + " needs ceil(" +
                               std::to_string(*channels) + "/" + std::to_string(b) + ") = " +
                               std::to_string(*channels < 0 ? 0 : CeilDiv(*channels, b)) + " blocks of " +
                               std::to_string(b) + "; " + what + " " + ShapeString(shape) + " has " +
                               std::to_string(shape[1]) + " (" + form + ")")
                                  .c_str());
      }
      e.c = *channels;
    }
    return e;
  }
  e.c = nhwc ? shape[3] : shape[1];
  e.h = nhwc ? shape[1] : shape[2];
  e.w = nhwc ? shape[2] : shape[3];
  if (channels && *channels != e.c) {
    throw nb::value_error(("channels=" + std::to_string(*channels) + " but " + what + " " + ShapeString(shape) +
                           " has " + std::to_string(e.c) + " channels (" + form + "; channels= is for the blocked "
                           "layouts, where C is not a multiple of the block)")
                              .c_str());
  }
  return e;
}

// The one check of the boxes: float32 (float64 for an F64 kernel), [K, 5], or [K, 4] with one batch index per row;
// rotated RoIs (cx, cy, w, h, angle) have one column more: [K, 6], or [K, 5] with batch indices. Returns K.
int64_t CheckRois(const RoisArray& rois, const std::optional<BatchIndexArray>& batch_indices,
                  const roialign::Params& p) {
  const roialign::DType dtype = p.dtype;
  const roialign::DType want = RoisDTypeOf(dtype);
  if (!Matches(rois.dtype(), want)) {
    throw nb::type_error(("rois have dtype " + DTypeName(rois.dtype()) + "; a " + PythonDTypeName(dtype) +
                          " kernel reads " + PythonDTypeName(want) + " rois")
                             .c_str());
  }
  const int64_t k = static_cast<int64_t>(rois.shape(0));
  const bool rotated = p.roi_kind == roialign::RoiKind::kRotated;
  const int64_t columns = (batch_indices ? 4 : 5) + (rotated ? 1 : 0);
  if (static_cast<int64_t>(rois.shape(1)) != columns) {
    throw nb::value_error(("rois must be [K, " + std::to_string(columns) + "]" +
                           (rotated ? " rotated boxes" : "") +
                           (batch_indices ? " with batch_indices" : " without batch_indices") + "; got " +
                           ShapeString(ShapeOf(rois)))
                              .c_str());
  }
  if (batch_indices && static_cast<int64_t>(batch_indices->shape(0)) != k) {
    throw nb::value_error(("batch_indices holds " + std::to_string(batch_indices->shape(0)) + " values for " +
                           std::to_string(k) + " rois")
                              .c_str());
  }
  return k;
}

// The one check of a result-shaped array (out, or grad_output): the kernel's dtype, and the shape of k results of c
// channels in its layout.
template <typename Array>
void CheckOut(const Array& output, const roialign::Params& p, int64_t k, int64_t c, const char* what = "out") {
  if (!Matches(output.dtype(), p.dtype)) {
    throw nb::type_error((std::string(what) + " has dtype " + DTypeName(output.dtype()) + "; this kernel " +
                          (std::string(what) == "out" ? "writes " : "takes ") + PythonDTypeName(p.dtype))
                             .c_str());
  }
  const bool nhwc = p.layout == roialign::Layout::kNHWC;
  const int64_t b = BlockOf(p.layout);
  const std::vector<int64_t> out_shape =
      b      ? std::vector<int64_t>{k, CeilDiv(c, b), p.pooled_height, p.pooled_width, b}
      : nhwc ? std::vector<int64_t>{k, p.pooled_height, p.pooled_width, c}
             : std::vector<int64_t>{k, c, p.pooled_height, p.pooled_width};
  if (ShapeOf(output) != out_shape) {
    throw nb::value_error((std::string(what) + " has shape " + ShapeString(ShapeOf(output)) + "; expected " +
                           ShapeString(out_shape) + " (" +
                           (b ? "K, ceil(C/b), PH, PW, b" : nhwc ? "K, PH, PW, C" : "K, C, PH, PW") + ")")
                              .c_str());
  }
}

// Points the inputs at the RoIs (checked by CheckRois): rois_f64 for an F64 kernel, rois for every other.
template <typename Inputs>
void SetRois(const roialign::Params& p, const RoisArray& rois, Inputs* in) {
  if (p.dtype == roialign::DType::kF64) {
    in->rois = nullptr;
    in->rois_f64 = static_cast<const double*>(rois.data());
  } else {
    in->rois = static_cast<const float*>(rois.data());
    in->rois_f64 = nullptr;
  }
}

// The one check of a map against the kernel: its dtype, then its extents in the kernel's layout.
MapExtents CheckKernelMap(const InputArray& map, const roialign::Params& p, std::optional<int64_t> channels,
                          const std::string& what) {
  if (!Matches(map.dtype(), p.dtype)) {
    throw nb::type_error((what + " has dtype " + DTypeName(map.dtype()) + "; this kernel takes " +
                          PythonDTypeName(p.dtype))
                             .c_str());
  }
  return CheckMap(ShapeOf(map), p.layout, channels, what);
}

// Single-level: one map ("input") in the kernel's dtype and layout. Checks the map and boxes, fills `in`; returns K
// and C. The forward and the backward read their inputs through it, as the multi-level ones do MultiLevelInputsOf.
std::pair<int64_t, int64_t> InputsOf(const roialign::Params& p, const InputArray& input, const RoisArray& rois,
                                     const std::optional<BatchIndexArray>& batch_indices,
                                     std::optional<int64_t> channels, roialign::Inputs* in) {
  const MapExtents e = CheckKernelMap(input, p, channels, "input");
  const int64_t k = CheckRois(rois, batch_indices, p);
  in->input = input.data();
  in->batch = e.n;
  in->channels = e.c;
  in->height = e.h;
  in->width = e.w;
  SetRois(p, rois, in);
  in->batch_indices = batch_indices ? batch_indices->data() : nullptr;
  in->num_rois = k;
  return {k, e.c};
}

void Run(const roialign::Kernel& kernel, const InputArray& input, const RoisArray& rois,
         const std::optional<BatchIndexArray>& batch_indices, const OutputArray& output, int32_t num_threads,
         std::optional<int64_t> channels) {
  const roialign::Params& p = kernel.params();
  roialign::Inputs in;
  const auto [k, c] = InputsOf(p, input, rois, batch_indices, channels, &in);
  CheckOut(output, p, k, c);
  if (Overlap(output, input) || Overlap(output, rois) || (batch_indices && Overlap(output, *batch_indices))) {
    throw nb::value_error("out overlaps the input, the rois or the batch indices");
  }
  roialign::Status status;
  {
    // The arrays hold references to their owners, so the buffers outlive the call.
    nb::gil_scoped_release release;
    status = kernel.Run(in, output.data(), num_threads);
  }
  Check(status);
}

// The one check of a map's gradient (grad_input): the map's dtype and shape, apart from everything the kernel reads.
template <typename Map>
void CheckGradInput(const OutputArray& grad_input, const Map& map, const roialign::Params& p, const std::string& what) {
  if (!Matches(grad_input.dtype(), p.dtype)) {
    throw nb::type_error((what + " has dtype " + DTypeName(grad_input.dtype()) + "; this kernel writes " +
                          PythonDTypeName(p.dtype))
                             .c_str());
  }
  if (ShapeOf(grad_input) != ShapeOf(map)) {
    throw nb::value_error((what + " has shape " + ShapeString(ShapeOf(grad_input)) + "; expected the map's, " +
                           ShapeString(ShapeOf(map)))
                              .c_str());
  }
}

void RequireBackward(const roialign::Params& p) {
  if (!p.backward) throw nb::value_error("this kernel was selected without backward=True; it runs the forward only");
}

// dX from dY (roialign::Kernel::RunBackward): the forward's input and boxes, grad_output shaped like the forward's
// out, grad_input like the input.
void RunBackward(const roialign::Kernel& kernel, const InputArray& grad_output, const InputArray& input,
                 const RoisArray& rois, const std::optional<BatchIndexArray>& batch_indices,
                 const OutputArray& grad_input, int32_t num_threads, std::optional<int64_t> channels) {
  const roialign::Params& p = kernel.params();
  RequireBackward(p);
  roialign::Inputs in;
  const auto [k, c] = InputsOf(p, input, rois, batch_indices, channels, &in);
  CheckOut(grad_output, p, k, c, "grad_output");
  CheckGradInput(grad_input, input, p, "out");
  if (Overlap(grad_input, grad_output) || Overlap(grad_input, input) || Overlap(grad_input, rois) ||
      (batch_indices && Overlap(grad_input, *batch_indices))) {
    throw nb::value_error("out overlaps grad_output, the input, the rois or the batch indices");
  }
  roialign::Status status;
  {
    nb::gil_scoped_release release;
    status = kernel.RunBackward(in, grad_output.data(), grad_input.data(), num_threads);
  }
  Check(status);
}

roialign::Kernel Select(const std::string& target, int64_t pooled_height, int64_t pooled_width,
                        double spatial_scale, int32_t sampling_ratio, int coordinate_mode, int pool_mode, int layout,
                        int dtype, bool backward, int roi_kind, int angle_unit, int rotation) {
  roialign::Params p;
  p.pooled_height = pooled_height;
  p.pooled_width = pooled_width;
  // An F64 kernel reads the scale in double (spatial_scale_f64), as Python holds it; the others in float. The float
  // copy is set for every dtype, so the library validates the scale the same way for all.
  p.spatial_scale = static_cast<float>(spatial_scale);
  if (static_cast<roialign::DType>(dtype) == roialign::DType::kF64) p.spatial_scale_f64 = spatial_scale;
  p.sampling_ratio = sampling_ratio;
  // Unknown values are the library's to refuse (INVALID_ARGUMENT, with the list of known values).
  p.coordinate_mode = static_cast<roialign::CoordinateMode>(coordinate_mode);
  p.pool_mode = static_cast<roialign::PoolMode>(pool_mode);
  p.layout = static_cast<roialign::Layout>(layout);
  p.dtype = static_cast<roialign::DType>(dtype);
  p.backward = backward;
  // Rotated RoIs (docs/semantics.md#rotated-rois); the unit and direction must be 0 for axis-aligned ones, which the
  // library checks.
  p.roi_kind = static_cast<roialign::RoiKind>(roi_kind);
  p.angle_unit = static_cast<roialign::AngleUnit>(angle_unit);
  p.rotation = static_cast<roialign::Rotation>(rotation);
  const roialign::SelectResult selected = roialign::Select(target, p);
  Check(selected.status());
  return selected.value();
}

using LevelArray = nb::ndarray<const int32_t, nb::ndim<1>, nb::device::cpu, nb::c_contig>;

// Multi-level: one map per level, all in the kernel's dtype and layout with the same N and C. Checks the maps, boxes and
// levels, and fills `in` (which points into `level_maps`); returns K and C.
std::pair<int64_t, int64_t> MultiLevelInputsOf(const roialign::Params& p, const std::vector<InputArray>& maps,
                                               const RoisArray& rois,
                                               const std::optional<BatchIndexArray>& batch_indices,
                                               const std::optional<LevelArray>& levels,
                                               std::optional<int64_t> channels,
                                               std::vector<roialign::LevelMap>* level_maps,
                                               roialign::MultiLevelInputs* in) {
  if (maps.empty()) throw nb::value_error("features is empty");
  int64_t n = 0, c = 0;
  for (size_t l = 0; l < maps.size(); ++l) {
    const MapExtents e = CheckKernelMap(maps[l], p, channels, "features[" + std::to_string(l) + "]");
    const int64_t ln = e.n, lc = e.c;
    if (l == 0) {
      n = ln;
      c = lc;
    } else if (ln != n || lc != c) {
      throw nb::value_error(("features[" + std::to_string(l) + "] has batch " + std::to_string(ln) + " and " +
                             std::to_string(lc) + " channels; features[0] has " + std::to_string(n) + " and " +
                             std::to_string(c) + " (levels share them)").c_str());
    }
    level_maps->push_back({maps[l].data(), e.h, e.w});
  }
  const int64_t k = CheckRois(rois, batch_indices, p);
  if (levels && static_cast<int64_t>(levels->shape(0)) != k) {
    throw nb::value_error(("levels holds " + std::to_string(levels->shape(0)) + " values for " + std::to_string(k) +
                           " rois").c_str());
  }
  in->maps = level_maps->data();
  in->num_maps = static_cast<int32_t>(level_maps->size());
  in->batch = n;
  in->channels = c;
  SetRois(p, rois, in);
  in->batch_indices = batch_indices ? batch_indices->data() : nullptr;
  in->levels = levels ? levels->data() : nullptr;
  in->num_rois = k;
  return {k, c};
}

void RunMultiLevel(const roialign::MultiLevelKernel& kernel, const std::vector<InputArray>& maps,
                   const RoisArray& rois, const std::optional<BatchIndexArray>& batch_indices,
                   const std::optional<LevelArray>& levels, const OutputArray& output, int32_t num_threads,
                   std::optional<int64_t> channels) {
  const roialign::Params& p = kernel.params().params;
  std::vector<roialign::LevelMap> level_maps;
  roialign::MultiLevelInputs in;
  const auto [k, c] = MultiLevelInputsOf(p, maps, rois, batch_indices, levels, channels, &level_maps, &in);
  for (size_t l = 0; l < maps.size(); ++l) {
    if (Overlap(output, maps[l])) {
      throw nb::value_error(("out overlaps features[" + std::to_string(l) + "]").c_str());
    }
  }
  CheckOut(output, p, k, c);
  if (Overlap(output, rois) || (batch_indices && Overlap(output, *batch_indices)) ||
      (levels && Overlap(output, *levels))) {
    throw nb::value_error("out overlaps the rois, the batch indices or the levels");
  }
  roialign::Status status;
  {
    nb::gil_scoped_release release;
    status = kernel.Run(in, output.data(), num_threads);
  }
  Check(status);
}

// Each level's dX from dY (roialign::MultiLevelKernel::RunBackward): grad_inputs[l] shaped like maps[l].
void RunMultiLevelBackward(const roialign::MultiLevelKernel& kernel, const InputArray& grad_output,
                           const std::vector<InputArray>& maps, const RoisArray& rois,
                           const std::optional<BatchIndexArray>& batch_indices,
                           const std::optional<LevelArray>& levels, const std::vector<OutputArray>& grad_inputs,
                           int32_t num_threads, std::optional<int64_t> channels) {
  const roialign::Params& p = kernel.params().params;
  RequireBackward(p);
  std::vector<roialign::LevelMap> level_maps;
  roialign::MultiLevelInputs in;
  const auto [k, c] = MultiLevelInputsOf(p, maps, rois, batch_indices, levels, channels, &level_maps, &in);
  CheckOut(grad_output, p, k, c, "grad_output");
  if (grad_inputs.size() != maps.size()) {
    throw nb::value_error(("out holds " + std::to_string(grad_inputs.size()) + " arrays for " +
                           std::to_string(maps.size()) + " levels")
                              .c_str());
  }
  std::vector<void*> dx;
  for (size_t l = 0; l < maps.size(); ++l) {
    const std::string what = "out[" + std::to_string(l) + "]";
    CheckGradInput(grad_inputs[l], maps[l], p, what);
    bool overlaps = Overlap(grad_inputs[l], grad_output) || Overlap(grad_inputs[l], rois) ||
                    (batch_indices && Overlap(grad_inputs[l], *batch_indices)) ||
                    (levels && Overlap(grad_inputs[l], *levels));
    for (size_t j = 0; j < maps.size(); ++j) {
      overlaps = overlaps || Overlap(grad_inputs[l], maps[j]) || (j != l && Overlap(grad_inputs[l], grad_inputs[j]));
    }
    if (overlaps) {
      throw nb::value_error((what + " overlaps grad_output, a map, another level's gradient, the rois, the batch "
                             "indices or the levels")
                                .c_str());
    }
    dx.push_back(grad_inputs[l].data());
  }
  roialign::Status status;
  {
    nb::gil_scoped_release release;
    status = kernel.RunBackward(in, grad_output.data(), dx.data(), num_threads);
  }
  Check(status);
}

roialign::MultiLevelKernel SelectMultiLevel(const std::string& target, int64_t pooled_height, int64_t pooled_width,
                                            const std::vector<float>& scales, int32_t sampling_ratio,
                                            int coordinate_mode, int pool_mode, int layout, int dtype, int level_rule,
                                            float canonical_size, int32_t canonical_level, bool backward) {
  roialign::MultiLevelParams mp;
  mp.params.pooled_height = pooled_height;
  mp.params.pooled_width = pooled_width;
  mp.params.sampling_ratio = sampling_ratio;
  mp.params.coordinate_mode = static_cast<roialign::CoordinateMode>(coordinate_mode);
  mp.params.pool_mode = static_cast<roialign::PoolMode>(pool_mode);
  mp.params.layout = static_cast<roialign::Layout>(layout);
  mp.params.dtype = static_cast<roialign::DType>(dtype);
  mp.params.backward = backward;
  mp.scales = scales;
  mp.level_rule = static_cast<roialign::LevelRule>(level_rule);
  mp.canonical_size = canonical_size;
  mp.canonical_level = canonical_level;
  const roialign::MultiLevelSelectResult selected = roialign::SelectMultiLevel(target, mp);
  Check(selected.status);
  return selected.kernel;
}

template <typename Enum>
std::vector<int> Values(const std::vector<Enum>& values) {
  std::vector<int> out;
  for (Enum v : values) out.push_back(static_cast<int>(v));
  return out;
}

nb::dict QueryTarget(const std::string& target) {
  roialign::TargetInfo info;
  Check(roialign::QueryTarget(target, &info));
  nb::dict d;
  d["layouts"] = Values(info.layouts);
  d["dtypes"] = Values(info.dtypes);
  d["pool_modes"] = Values(info.pool_modes);
  d["coordinate_modes"] = Values(info.coordinate_modes);
  d["preferred_layout"] = static_cast<int>(info.preferred_layout);
  d["roi_kinds"] = Values(info.roi_kinds);
  return d;
}

// Asks Linux to back [address, address + nbytes) with transparent huge pages when it is first touched, as numpy
// does for its large arrays; torch does not (what that costs: docs/python.md, "New results"). Advisory only: the
// contents and the owner's allocator are unaffected. Returns whether the advice was taken (false off Linux, or for a
// range without a whole page).
bool AdviseHugePages(uintptr_t address, size_t nbytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (address + page - 1) / page * page, end = (address + nbytes) / page * page;
  if (end <= begin) return false;
  return madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE) == 0;
#else
  (void)address;
  (void)nbytes;
  return false;
#endif
}

}  // namespace

NB_MODULE(_roialign, m) {
  m.doc() = "roialign's compiled module; use the package roialign (docs/python.md).";
  m.attr("__version__") = ROIALIGN_VERSION_STRING;
  nb::register_exception_translator(TranslateStatusError);

  // The channel block of each layout, by value (roialign_layout_channel_block): 0 for NCHW and NHWC.
  m.def(
      "layout_channel_blocks",
      [] {
        std::vector<int32_t> blocks;
        for (int32_t v = 0; roialign_enum_name(ROIALIGN_ENUM_LAYOUT, v) != nullptr; ++v) {
          blocks.push_back(roialign_layout_channel_block(static_cast<roialign_layout>(v)));
        }
        return blocks;
      },
      "The channel block of each layout value (roialign_layout_channel_block): 4, 8, 16, or 0 (not blocked).");

  // The library's names of each enum's values, value 0 first (roialign_enum_name); the package derives its own
  // spellings from them.
  m.def(
      "enum_names",
      [](const std::string& kind) {
        static const std::pair<const char*, roialign_enum_kind> kKinds[] = {
            {"layout", ROIALIGN_ENUM_LAYOUT},         {"dtype", ROIALIGN_ENUM_DTYPE},
            {"pool_mode", ROIALIGN_ENUM_POOL_MODE},   {"coordinate_mode", ROIALIGN_ENUM_COORDINATE_MODE},
            {"level_rule", ROIALIGN_ENUM_LEVEL_RULE}, {"status", ROIALIGN_ENUM_STATUS},
            {"roi_kind", ROIALIGN_ENUM_ROI_KIND},     {"angle_unit", ROIALIGN_ENUM_ANGLE_UNIT},
            {"rotation", ROIALIGN_ENUM_ROTATION}};
        for (const auto& [what, k] : kKinds) {
          if (kind != what) continue;
          std::vector<std::string> names;
          for (int32_t v = 0; const char* name = roialign_enum_name(k, v); ++v) names.emplace_back(name);
          return names;
        }
        throw nb::value_error(("unknown enum kind " + kind).c_str());
      },
      nb::arg("kind"),
      "The library's names of the enum `kind` ('layout', 'dtype', 'pool_mode', ...), in value order.");

  nb::class_<roialign::Kernel>(m, "Kernel", "A selected implementation (roialign::Kernel): immutable, thread-safe.")
      .def_prop_ro("name", [](const roialign::Kernel& k) { return k.name(); })
      .def_prop_ro("pooled_height", [](const roialign::Kernel& k) { return k.params().pooled_height; })
      .def_prop_ro("pooled_width", [](const roialign::Kernel& k) { return k.params().pooled_width; })
      .def_prop_ro("spatial_scale",
                   [](const roialign::Kernel& k) {
                     // The scale the kernel computes with: in double for F64, else as float32 holds it.
                     const roialign::Params& p = k.params();
                     return p.spatial_scale_f64 != 0.0 ? p.spatial_scale_f64 : static_cast<double>(p.spatial_scale);
                   })
      .def_prop_ro("sampling_ratio", [](const roialign::Kernel& k) { return k.params().sampling_ratio; })
      .def_prop_ro("coordinate_mode",
                   [](const roialign::Kernel& k) { return static_cast<int>(k.params().coordinate_mode); })
      .def_prop_ro("pool_mode", [](const roialign::Kernel& k) { return static_cast<int>(k.params().pool_mode); })
      .def_prop_ro("layout", [](const roialign::Kernel& k) { return static_cast<int>(k.params().layout); })
      .def_prop_ro("dtype", [](const roialign::Kernel& k) { return static_cast<int>(k.params().dtype); })
      .def_prop_ro("backward", [](const roialign::Kernel& k) { return k.params().backward; })
      .def_prop_ro("roi_kind", [](const roialign::Kernel& k) { return static_cast<int>(k.params().roi_kind); })
      .def_prop_ro("angle_unit", [](const roialign::Kernel& k) { return static_cast<int>(k.params().angle_unit); })
      .def_prop_ro("rotation", [](const roialign::Kernel& k) { return static_cast<int>(k.params().rotation); })
      .def("run", &Run, nb::arg("input").noconvert(), nb::arg("rois").noconvert(),
           nb::arg("batch_indices").noconvert().none(), nb::arg("out").noconvert(), nb::arg("num_threads"),
           nb::arg("channels").none() = nb::none(),
           "Runs on dense arrays in memory order (input [N,C,H,W], [N,H,W,C] or [N,ceil(C/b),H,W,b]; out "
           "[K,C,PH,PW], [K,PH,PW,C] or [K,ceil(C/b),PH,PW,b]); rois float32 (float64 for a float64 kernel) "
           "[K,5], or [K,4] with int64 batch_indices (a rotated kernel: [K,6] or [K,5]); channels: the logical C "
           "(None: from the shape). Releases the GIL while the kernel runs.")
      .def("run_backward", &RunBackward, nb::arg("grad_output").noconvert(), nb::arg("input").noconvert(),
           nb::arg("rois").noconvert(), nb::arg("batch_indices").noconvert().none(), nb::arg("out").noconvert(),
           nb::arg("num_threads"), nb::arg("channels").none() = nb::none(),
           "The backward on dense arrays in memory order: out (dX) shaped like input, grad_output (dY) like run's "
           "out; the kernel must have been selected with backward=True. Releases the GIL while the kernel runs.");

  nb::class_<roialign::MultiLevelKernel>(m, "MultiLevelKernel", "roialign::MultiLevelKernel: immutable, thread-safe.")
      .def_prop_ro("name", [](const roialign::MultiLevelKernel& k) { return k.name(); })
      .def("run", &RunMultiLevel, nb::arg("maps"), nb::arg("rois").noconvert(),
           nb::arg("batch_indices").noconvert().none(), nb::arg("levels").noconvert().none(),
           nb::arg("out").noconvert(), nb::arg("num_threads"), nb::arg("channels").none() = nb::none(),
           "Runs on dense arrays in memory order: one map per level, rois float32 (float64 for a float64 kernel) "
           "[K,5] or [K,4] with int64 "
           "batch_indices, int32 levels for the rule 'given', channels as for Kernel.run. Releases the GIL while "
           "the kernel runs.")
      .def_prop_ro("backward", [](const roialign::MultiLevelKernel& k) { return k.params().params.backward; })
      .def("run_backward", &RunMultiLevelBackward, nb::arg("grad_output").noconvert(), nb::arg("maps"),
           nb::arg("rois").noconvert(), nb::arg("batch_indices").noconvert().none(),
           nb::arg("levels").noconvert().none(), nb::arg("out"), nb::arg("num_threads"),
           nb::arg("channels").none() = nb::none(),
           "The backward on dense arrays in memory order: out holds one dX per level, shaped like its map; the "
           "kernel must have been selected with backward=True. Releases the GIL while the kernel runs.");
  m.def("select_multi_level", &SelectMultiLevel, nb::arg("target"), nb::arg("pooled_height"),
        nb::arg("pooled_width"), nb::arg("scales"), nb::arg("sampling_ratio"), nb::arg("coordinate_mode"),
        nb::arg("pool_mode"), nb::arg("layout"), nb::arg("dtype"), nb::arg("level_rule"), nb::arg("canonical_size"),
        nb::arg("canonical_level"), nb::arg("backward") = false, "roialign::SelectMultiLevel; raises on refusal.");
  m.def("select", &Select, nb::arg("target"), nb::arg("pooled_height"), nb::arg("pooled_width"),
        nb::arg("spatial_scale"), nb::arg("sampling_ratio"), nb::arg("coordinate_mode"), nb::arg("pool_mode"),
        nb::arg("layout"), nb::arg("dtype"), nb::arg("backward") = false, nb::arg("roi_kind") = 0,
        nb::arg("angle_unit") = 0, nb::arg("rotation") = 0, "roialign::Select; raises on refusal.");
  m.def("query_target", &QueryTarget, nb::arg("target"), "roialign::QueryTarget, as enum values.");
  m.def("known_targets", &roialign::KnownTargets, "roialign::KnownTargets.");
  m.def("implementation_names", &roialign::ImplementationNames, nb::arg("target"),
        "roialign::ImplementationNames: what the target can run here, best first.");
  m.def("advise_huge_pages", &AdviseHugePages, nb::arg("address"), nb::arg("nbytes"),
        "madvise(MADV_HUGEPAGE) on the whole pages of a new, untouched buffer; whether it was taken.");
}
