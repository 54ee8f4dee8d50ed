// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "execution/strided_maps.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/enums.h"
#include "core/messages.h"

namespace roialign {
namespace internal {

Status DenseMapData(const roialign_map& map, int64_t batch, int64_t channels, Layout layout,
                           DType dtype, const char* what, std::pmr::vector<unsigned char>* dense_copy,
                           bool copy, const void** data) {
  *data = map.data;
  const int64_t* s = map.strides;
  if (s[0] == 0 && s[1] == 0 && s[2] == 0 && s[3] == 0) return Status::Ok();
  const bool nhwc = layout == Layout::kNHWC;
  // Blocked layouts: the dimensions n, channel block, h, w, each step moving whole blocks of `unit` elements.
  const int64_t unit = std::max<int64_t>(
      1, EnumTraits<Layout>::kChannelBlock[static_cast<size_t>(layout)]);
  const int64_t blocks = unit > 1 ? (channels + unit - 1) / unit : channels;
  const int64_t extent[4] = {batch, nhwc ? map.height : blocks, nhwc ? map.width : map.height,
                             nhwc ? channels : map.width};
  for (int d = 0; d < 4; ++d) {
    if (s[d] < 0) {
      return Invalid(std::string(what) + ".strides[" + std::to_string(d) + "] is " + std::to_string(s[d]) +
                     "; strides must be >= 0");
    }
  }
  if (map.data == nullptr || extent[0] <= 0 || extent[1] <= 0 || extent[2] <= 0 || extent[3] <= 0) {
    return Status::Ok();
  }
  // The dense strides, and the farthest element the view reaches (overflow-checked).
  int64_t dense[4] = {0, 0, 0, unit}, elements = unit, last = 0;
  for (int d = 3; d >= 0; --d) {
    dense[d] = elements;
    int64_t reach = 0;
    if (__builtin_mul_overflow(extent[d], elements, &elements) ||
        __builtin_mul_overflow(extent[d] - 1, s[d], &reach) || __builtin_add_overflow(last, reach, &last)) {
      return Invalid(std::string(what) + ": its extents and strides overflow int64");
    }
  }
  if (s[0] == dense[0] && s[1] == dense[1] && s[2] == dense[2] && s[3] == dense[3]) return Status::Ok();
  const auto bytes = static_cast<size_t>(BytesOf(dtype));
  const size_t unit_bytes = static_cast<size_t>(unit) * bytes;
  if (elements > PTRDIFF_MAX / static_cast<int64_t>(bytes)) {
    return Invalid(std::string(what) + " has more elements than memory can hold");
  }
  dense_copy->resize(static_cast<size_t>(elements) * bytes);  // std::bad_alloc: OUT_OF_MEMORY, output untouched
  *data = dense_copy->data();
  if (!copy) return Status::Ok();
  const auto* src = static_cast<const unsigned char*>(map.data);
  unsigned char* dst = dense_copy->data();
  for (int64_t i0 = 0; i0 < extent[0]; ++i0) {
    for (int64_t i1 = 0; i1 < extent[1]; ++i1) {
      for (int64_t i2 = 0; i2 < extent[2]; ++i2) {
        const unsigned char* row = src + static_cast<size_t>(i0 * s[0] + i1 * s[1] + i2 * s[2]) * bytes;
        if (s[3] == unit) {
          std::memcpy(dst, row, static_cast<size_t>(extent[3]) * unit_bytes);
          dst += static_cast<size_t>(extent[3]) * unit_bytes;
        } else {
          for (int64_t i3 = 0; i3 < extent[3]; ++i3, dst += unit_bytes) {
            std::memcpy(dst, row + static_cast<size_t>(i3 * s[3]) * bytes, unit_bytes);
          }
        }
      }
    }
  }
  *data = dense_copy->data();
  return Status::Ok();
}

}  // namespace internal
}  // namespace roialign
