// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "execution/layout_transforms.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include <hwy/cache_control.h>

#include "core/enums.h"
#include "execution/parallel.h"
#include "core/library.h"

namespace roialign {
namespace internal {

// Blocks of 8 rows by 512 columns: the rows are planes of a map, and a block's 8 source rows are 8 sequential
// streams, as many as the hardware prefetchers follow (64 planes at a time outran them). A block's source (16 KiB
// in f32) stays in L1 while it is transposed, and each task is long enough to amortize its dispatch.
constexpr int64_t kBlockRows = 8, kBlockColumns = 512;

void TransposeMatrix(TransposeBlockFn transpose, const void* src, int64_t src_stride, int64_t rows, int64_t cols,
                     void* dst, int64_t dst_stride, int max_threads, const Threading& threading) {
  const int64_t row_blocks = (rows + kBlockRows - 1) / kBlockRows;
  const int64_t col_blocks = (cols + kBlockColumns - 1) / kBlockColumns;
  const int64_t tasks = row_blocks * col_blocks;
  const int threads = std::min(max_threads, ResolveThreadCount(threading, tasks));
  ParallelFor(tasks, threads, threading, [&](int64_t t, int) {
    const int64_t rb = t / col_blocks, cb = t % col_blocks;
    transpose(src, src_stride, dst_stride, rb * kBlockRows, std::min(rows, (rb + 1) * kBlockRows), cb * kBlockColumns,
              std::min(cols, (cb + 1) * kBlockColumns), dst);
  });
}

namespace {

// Channels per group of a layout's memory order: NCHW 1, the blocked layouts their block, NHWC all of them.
int64_t GroupOf(Layout layout, int64_t channels) {
  const int64_t block = EnumTraits<Layout>::kChannelBlock[static_cast<size_t>(layout)];
  return block == 0 ? channels : block;
}

Status Refuse(const std::string& why) { return Status(StatusCode::kInvalidArgument, "layout transform: " + why); }

// OK with the input's and output's bytes set, or why the transform is refused (before anything is written).
Status CheckTransform(DType dtype, Layout from, Layout to, const void* input, int64_t n, int64_t c, int64_t h,
                      int64_t w, const void* output, int64_t* in_bytes, int64_t* out_bytes) {
  if (!IsKnown(dtype)) {
    return Refuse("unknown dtype value " + std::to_string(static_cast<int>(dtype)) + " (" + ValueList<DType>() + ")");
  }
  for (const auto& [layout, what] : {std::pair{from, "from"}, std::pair{to, "to"}}) {
    if (!IsKnown(layout)) {
      return Refuse(std::string("unknown layout value ") + std::to_string(static_cast<int>(layout)) + " for `" +
                    what + "` (" + ValueList<Layout>() + ")");
    }
  }
  for (const auto& [dim, what] : {std::pair{n, "batch"}, std::pair{c, "channels"}, std::pair{h, "height"},
                                  std::pair{w, "width"}}) {
    if (dim < 0) return Refuse(std::string(what) + " is " + std::to_string(dim) + "; dimensions must be >= 0");
  }
  int64_t* const bytes[2] = {in_bytes, out_bytes};
  const Layout layouts[2] = {from, to};
  for (int side = 0; side < 2; ++side) {
    int64_t e = BytesOf(dtype);
    for (int64_t dim : {n, StoredChannels(layouts[side], c), h, w}) {
      if (__builtin_mul_overflow(e, dim, &e)) {
        return Refuse(std::string("the ") + (side == 0 ? "input" : "output") + "'s size (batch x " +
                      (IsBlocked(layouts[side]) ? "channels padded to the block" : "channels") +
                      " x height x width x element bytes) overflows int64");
      }
    }
    *bytes[side] = e;
  }
  if (*in_bytes == 0) return Status::Ok();
  if (input == nullptr) return Refuse("input is NULL but the tensor is not empty");
  if (output == nullptr) return Refuse("output is NULL but the tensor is not empty");
  const auto in = reinterpret_cast<uintptr_t>(input), out = reinterpret_cast<uintptr_t>(output);
  if (in < out + static_cast<uint64_t>(*out_bytes) && out < in + static_cast<uint64_t>(*in_bytes)) {
    return Refuse("input and output overlap; the transform is not in place: give the output its own buffer");
  }
  return Status::Ok();
}

// Elements a transpose task of TransposeGroups moves (at least): its source and destination (16 KiB each in f32)
// stay in L1, and the task is long enough to amortize its dispatch.
constexpr int64_t kTaskElements = 4096;

// Pixels per task of the paths that take every channel of a run of pixels (TransposePixelRuns, CopyRuns): each
// plane is then read or written 512 pixels in sequence. Small maps take shorter runs, down to
// kMinPixelRun, until every thread has about four tasks.
constexpr int64_t kPixelRun = 512, kMinPixelRun = 64;
int64_t PixelRun(int64_t n, int64_t hw, int64_t groups, const Threading& threading) {
  const int64_t most_tasks = n * groups * ((hw + kMinPixelRun - 1) / kMinPixelRun);
  const int64_t wanted = 4 * static_cast<int64_t>(ResolveThreadCount(threading, most_tasks));
  int64_t run = kPixelRun;
  while (run > kMinPixelRun && n * groups * ((hw + run - 1) / run) < wanted) run /= 2;
  return run;
}

// Hints that the line at p be fetched into L2, not L1: the transposes' blocks fill L1 already.
inline void PrefetchToL2(const unsigned char* p) {
#if HWY_COMPILER_GCC && !defined(HWY_DISABLE_CACHE_CONTROL)  // HWY_COMPILER_GCC includes clang
  __builtin_prefetch(p, /*rw=*/0, /*locality=*/2);
#else
  (void)p;
#endif
}

// A task's planar reads are prefetched when it reads more planes than the hardware prefetchers follow beside the
// output (eight they do, sixteen not), up to the widest block: NHWC's 64 planes a page ahead did not pay.
constexpr int64_t kPrefetchPlanesAbove = 8, kPrefetchPlanesUpTo = 16;
// How far ahead of a task each plane is prefetched: about a page, past what the hardware prefetchers fetch.
constexpr int64_t kPrefetchAheadBytes = 4096;

// NHWC pixels of at most this many channels go through TransposeGroups: one 64-plane block per task, whose
// NHWC output is one contiguous run (streamed past the caches when large).
constexpr int64_t kTransposePixelRunsAbove = 64;

// NCHW to or from NHWC when the pixels hold more channels than one transpose block: per task, a run of pixels
// (PixelRun) with all their channels, kBlockRows planes at a time, as the band transform does. The planar side is then
// 8 sequential streams of 2 KiB (f32) at a time, which the hardware prefetchers follow, where 64 x 64 blocks were 64
// streams of 256 bytes.
void TransposePixelRuns(TransposeBlockFn transpose, int64_t bytes, bool planar_in, const void* input, int64_t n,
                        int64_t c, int64_t hw, void* output, const Threading& threading) {
  const int64_t run = PixelRun(n, hw, 1, threading);
  const int64_t pix_blocks = (hw + run - 1) / run, tasks = n * pix_blocks;
  const auto* in = static_cast<const unsigned char*>(input);
  auto* out = static_cast<unsigned char*>(output);
  ParallelFor(tasks, ResolveThreadCount(threading, tasks), threading, [&](int64_t t, int) {
    const int64_t image = t / pix_blocks, p0 = t % pix_blocks * run, p1 = std::min(hw, p0 + run);
    const int64_t offset = image * c * hw * bytes;  // an image starts at the same offset in both layouts
    for (int64_t k0 = 0; k0 < c; k0 += kBlockRows) {
      const int64_t k1 = std::min(c, k0 + kBlockRows);
      if (planar_in) {
        transpose(in + offset, hw, c, k0, k1, p0, p1, out + offset);
      } else {
        transpose(in + offset, c, hw, p0, p1, k0, k1, out + offset);
      }
    }
  });
}

// NCHW to or from a layout that keeps channels in groups of `group` (NHWC: one group of all channels): per image
// and group, a transpose of (the group's channels) x (pixels). Planar to grouped zeroes the padded lanes of a
// partial last group; grouped to planar never reads them.
void TransposeGroups(const KernelFns& fns, int64_t bytes, bool planar_in, const void* input, int64_t n, int64_t c,
                     int64_t hw, int64_t group, void* output, const Threading& threading, int64_t stream_above) {
  const TransposeBlockFn transpose = fns.transpose;
  const int64_t groups = (c + group - 1) / group, stored = groups * group;
  const int64_t chan_block = std::min<int64_t>(group, 64), chan_blocks = (group + chan_block - 1) / chan_block;
  const int64_t pix_block = std::max<int64_t>(64, kTaskElements / chan_block);
  const int64_t pix_blocks = (hw + pix_block - 1) / pix_block;
  const int64_t tasks = n * groups * chan_blocks * pix_blocks;
  // A task that writes whole groups writes one contiguous run: transposed in L1, then streamed past the caches when
  // the output would not stay in them anyway, which spares the reads of lines about to be overwritten.
  const bool stream = planar_in && chan_blocks == 1 && fns.stream_copy != nullptr &&
                      n * stored * hw * bytes > stream_above;
  const auto* in = static_cast<const unsigned char*>(input);
  auto* out = static_cast<unsigned char*>(output);
  ParallelFor(tasks, ResolveThreadCount(threading, tasks), threading, [&](int64_t t, int) {
    const int64_t pb = t % pix_blocks, cb = t / pix_blocks % chan_blocks, g = t / pix_blocks / chan_blocks % groups;
    const int64_t image = t / pix_blocks / chan_blocks / groups;
    const int64_t rows = std::min(group, c - g * group);  // the group's real channels
    const int64_t k0 = cb * chan_block, k1 = std::min(k0 + chan_block, rows);
    const int64_t p0 = pb * pix_block, p1 = std::min(hw, p0 + pix_block);
    // A group starts at the same element offset within its image in both layouts; only the images' sizes differ.
    const int64_t planar = (image * c + g * group) * hw * bytes, grouped = (image * stored + g * group) * hw * bytes;
    if (planar_in && k1 - k0 > kPrefetchPlanesAbove && k1 - k0 <= kPrefetchPlanesUpTo) {
      const int64_t ahead = kPrefetchAheadBytes / bytes, q1 = std::min(hw, p1 + ahead);
      for (int64_t k = k0; k < k1; ++k) {
        const unsigned char* plane = in + planar + k * hw * bytes;
        for (int64_t q = p0 + ahead; q < q1; q += 64 / bytes) PrefetchToL2(plane + q * bytes);
      }
    }
    if (stream) {
      alignas(64) unsigned char tile[kTaskElements * 4];  // (p1 - p0) * group <= kTaskElements elements
      transpose(in + planar + p0 * bytes, hw, group, 0, rows, 0, p1 - p0, tile);
      for (int64_t p = 0; rows < group && p < p1 - p0; ++p) {
        std::memset(tile + (p * group + rows) * bytes, 0, static_cast<size_t>((group - rows) * bytes));
      }
      fns.stream_copy(tile, (p1 - p0) * group * bytes, out + grouped + p0 * group * bytes);
      hwy::FlushStream();  // the stores are visible before the parallel loop's end
    } else if (planar_in) {
      if (k0 < k1) transpose(in + planar, hw, group, k0, k1, p0, p1, out + grouped);
      if (rows < group && cb == chan_blocks - 1) {
        for (int64_t p = p0; p < p1; ++p) {
          std::memset(out + grouped + (p * group + rows) * bytes, 0, static_cast<size_t>((group - rows) * bytes));
        }
      }
    } else if (k0 < k1) {
      transpose(in + grouped, group, hw, p0, p1, k0, k1, out + planar);
    }
  });
}

// n bytes, with the sizes a run of channels has (4 to 16 elements of 2 or 4 bytes) as fixed-size moves.
inline void CopyBytes(unsigned char* dst, const unsigned char* src, int64_t n) {
  switch (n) {
    case 8: std::memcpy(dst, src, 8); break;
    case 16: std::memcpy(dst, src, 16); break;
    case 32: std::memcpy(dst, src, 32); break;
    case 64: std::memcpy(dst, src, 64); break;
    default: std::memcpy(dst, src, static_cast<size_t>(n));
  }
}

// Between two layouts that both keep each pixel's channels in runs (NHWC and the blocked ones, or a blocked layout
// and itself): per pixel, copies of runs of the smaller block, in the output's order. Lanes of the output past the
// channels are zeroed; the input's are never read.
void CopyRuns(int64_t bytes, Layout from, Layout to, const void* input, int64_t n, int64_t c, int64_t hw,
              void* output, const Threading& threading) {
  const int64_t in_group = GroupOf(from, c), out_group = GroupOf(to, c);
  const int64_t in_stored = StoredChannels(from, c), out_stored = StoredChannels(to, c);
  const int64_t run = std::min(IsBlocked(from) ? in_group : INT64_MAX, IsBlocked(to) ? out_group : INT64_MAX);
  const int64_t out_groups = out_stored / out_group, runs = (out_group + run - 1) / run;
  // At least a PixelRun per task: from a blocked input, each run of channels then reads one plane for all the
  // task's pixels, where 16-pixel tasks into NHWC read 16 planes (C = 256) a line or two at a time.
  const int64_t pix_block = std::max(PixelRun(n, hw, out_groups, threading), kTaskElements / out_group);
  const int64_t pix_blocks = (hw + pix_block - 1) / pix_block;
  const int64_t tasks = n * pix_blocks * out_groups;
  const auto* in = static_cast<const unsigned char*>(input);
  auto* out = static_cast<unsigned char*>(output);
  // Output groups vary fastest: consecutive tasks read the same input pixels, which then come from L2 (taken group
  // by group across the whole map, an NHWC input was fetched from memory once per group).
  ParallelFor(tasks, ResolveThreadCount(threading, tasks), threading, [&](int64_t t, int) {
    const int64_t g = t % out_groups, pb = t / out_groups % pix_blocks, image = t / out_groups / pix_blocks;
    const int64_t p0 = pb * pix_block, p1 = std::min(hw, p0 + pix_block);
    for (int64_t r = 0; r < runs; ++r) {
      const int64_t c0 = g * out_group + r * run, width = std::min(run, out_group - r * run);
      const int64_t copied = std::clamp<int64_t>(c - c0, 0, width);
      unsigned char* dst = out + ((image * out_stored + g * out_group) * hw + p0 * out_group + r * run) * bytes;
      const unsigned char* src =
          copied == 0 ? nullptr
                      : in + ((image * in_stored + c0 / in_group * in_group) * hw + p0 * in_group + c0 % in_group) *
                                 bytes;
      for (int64_t p = p0; p < p1; ++p, dst += out_group * bytes) {
        if (copied > 0) {
          CopyBytes(dst, src, copied * bytes);
          src += in_group * bytes;
        }
        if (copied < width) std::memset(dst + copied * bytes, 0, static_cast<size_t>((width - copied) * bytes));
      }
    }
  });
}

// The same layout, not blocked: the bytes as they are, in chunks of 1 MiB.
void CopyAll(const void* input, int64_t bytes, void* output, const Threading& threading) {
  constexpr int64_t kChunk = int64_t{1} << 20;
  const int64_t tasks = (bytes + kChunk - 1) / kChunk;
  ParallelFor(tasks, ResolveThreadCount(threading, tasks), threading, [&](int64_t t, int) {
    std::memcpy(static_cast<unsigned char*>(output) + t * kChunk, static_cast<const unsigned char*>(input) + t * kChunk,
                static_cast<size_t>(std::min(kChunk, bytes - t * kChunk)));
  });
}

}  // namespace

// One path per family of pairs: NCHW against NHWC pixels of many channels is a transpose per run of pixels, NCHW
// against another grouped layout a transpose per group, two grouped layouts copy runs of channels per pixel, and
// NCHW or NHWC to itself is a plain copy.
Status TransformTensorLayout(DType dtype, Layout from, Layout to, const void* input, int64_t batch, int64_t channels,
                             int64_t height, int64_t width, void* output, const Threading& threading,
                             int64_t stream_above) {
  int64_t in_bytes = 0, out_bytes = 0;
  Status s = ValidateThreading(threading);
  if (s.ok()) s = CheckTransform(dtype, from, to, input, batch, channels, height, width, output, &in_bytes, &out_bytes);
  if (!s.ok() || in_bytes == 0) return s;
  const int64_t bytes = BytesOf(dtype), pixels = height * width;
  if (from == to && !IsBlocked(from)) {
    CopyAll(input, in_bytes, output, threading);
  } else if ((from == Layout::kNCHW || to == Layout::kNCHW) && !IsBlocked(from) && !IsBlocked(to) &&
             channels > kTransposePixelRunsAbove && (from == Layout::kNCHW || in_bytes > stream_above)) {
    // NHWC -> NCHW reads 8 channels of each pixel per strip; maps that stay in the caches are faster through
    // 64 x 64 blocks, which read 64.
    TransposePixelRuns(BestTargetFns()[static_cast<size_t>(dtype)].transpose, bytes, from == Layout::kNCHW, input,
                       batch, channels, pixels, output, threading);
  } else if (from == Layout::kNCHW || to == Layout::kNCHW) {
    const bool planar_in = from == Layout::kNCHW;
    TransposeGroups(BestTargetFns()[static_cast<size_t>(dtype)], bytes, planar_in, input, batch, channels, pixels,
                    GroupOf(planar_in ? to : from, channels), output, threading, stream_above);
  } else {
    CopyRuns(bytes, from, to, input, batch, channels, pixels, output, threading);
  }
  return Status::Ok();
}

}  // namespace internal
}  // namespace roialign
