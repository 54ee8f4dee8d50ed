// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// libFuzzer target over roialign_transform_layout (and the 1.0 pair roialign_nchw_to_nhwc / roialign_nhwc_to_nchw):
// every pair of layouts, every dtype, random shapes (some empty, some whose size overflows int64), random bit
// patterns (NaN included; blocked inputs' padded lanes hold NaN), thread counts, the caller's pool (in order or
// reversed), and the refusals docs/api.md lists: unknown dtype or layout values, negative dimensions, overflowing
// sizes, NULL input or output, an output overlapping the input, a workspace, bad pools and bad options. On
// exactly-sized heap buffers (ASan guards them). An accepted call must move every element bit for bit and write
// padded lanes 0; a refused call must return the status the contract names, say why, and leave the output (and a
// pool) untouched.
#include <cstdint>
#include <cstring>
#include <vector>

#include "roialign/roialign.h"
#include "tests/fuzz/fuzz_support.h"

using namespace roialign_fuzz;  // NOLINT: a test's own helpers

namespace {

// Valid calls larger than this are not made (a huge dimension that does not overflow would need the memory). The
// streaming stores of outputs above 16 MiB are left to tests/layout_transform_test.cc, which lowers the threshold:
// tensors that large would slow every input the fuzzer derives from one.
constexpr int64_t kMaxBytes = int64_t{1} << 20;

int64_t Block(int layout) { return layout == 2 ? 4 : layout == 3 ? 8 : layout == 4 ? 16 : 1; }

// Element offset of (n, c, y, x) in `layout` (0..4, as roialign_layout) for logical channels C.
int64_t Offset(int layout, int64_t C, int64_t H, int64_t W, int64_t n, int64_t c, int64_t y, int64_t x) {
  if (layout == ROIALIGN_LAYOUT_NCHW) return ((n * C + c) * H + y) * W + x;
  if (layout == ROIALIGN_LAYOUT_NHWC) return ((n * H + y) * W + x) * C + c;
  const int64_t b = Block(layout), groups = (C + b - 1) / b;
  return (((n * groups + c / b) * H + y) * W + x) * b + c % b;
}

// The tensor's bytes in `layout`, padded channels included, exactly (no int64 overflow on the way); the library
// must refuse anything above INT64_MAX.
__int128 ExactBytes(int layout, int64_t elem, int64_t N, int64_t C, int64_t H, int64_t W) {
  const int64_t b = Block(layout);
  const __int128 stored = (static_cast<__int128>(C) + b - 1) / b * b;
  return static_cast<__int128>(elem) * N * stored * H * W;
}

// A caller's pool that runs every task on the calling thread, in order or reversed, and records how it was used.
struct Pool {
  bool reverse = false;
  int32_t num_threads = 1;
  int64_t calls = 0, most_tasks = 0;
};
void PoolParallelFor(void* context, int64_t count, roialign_task_fn task, void* task_context) {
  Pool* pool = static_cast<Pool*>(context);
  ++pool->calls;
  if (count > pool->most_tasks) pool->most_tasks = count;
  for (int64_t i = 0; i < count; ++i) task(task_context, pool->reverse ? count - 1 - i : i);
}

// Options with room past the struct, so that a struct_size larger than this header's can be tried.
struct OptionsWithTail {
  roialign_options options;
  unsigned char tail[16];
};
struct PoolWithTail {
  roialign_threadpool pool;
  unsigned char tail[16];
};

// Bytes of a xorshift generator: the tensor's contents, any bit pattern (NaN and infinities included).
struct Bits {
  uint64_t s;
  unsigned char Next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return static_cast<unsigned char>(s >> 24);
  }
};

// The call as a C caller makes it, with any int in the enum parameters: C++ cannot pass a value outside an enum's
// range without loading it as that enum, which UBSan's enum check flags in this function, not in the library.
__attribute__((no_sanitize("enum"))) roialign_status Call(bool legacy, int dtype, int from, int to, const void* input,
                                                          int64_t N, int64_t C, int64_t H, int64_t W, void* output,
                                                          const roialign_options* options) {
  roialign_dtype d;
  roialign_layout f, t;
  SetEnum(&d, dtype);
  SetEnum(&f, from);
  SetEnum(&t, to);
  if (legacy && from == ROIALIGN_LAYOUT_NCHW && to == ROIALIGN_LAYOUT_NHWC) {
    return roialign_nchw_to_nhwc(d, input, N, C, H, W, output, options);
  }
  if (legacy && from == ROIALIGN_LAYOUT_NHWC && to == ROIALIGN_LAYOUT_NCHW) {
    return roialign_nhwc_to_nchw(d, input, N, C, H, W, output, options);
  }
  return roialign_transform_layout(d, f, t, input, N, C, H, W, output, options);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader r{data, size};
  // Attributes: mostly valid, sometimes values outside the enums.
  const uint8_t db = r.U8();
  const int dtype = db % 16 == 15 ? (db & 16 ? 4 : -1) : static_cast<int>(DType(r));
  static const int kBadLayouts[] = {5, -1, 1000};
  const uint8_t fb = r.U8(), tb = r.U8();
  const int from = fb % 32 == 31 ? kBadLayouts[fb / 32 % 3] : fb % 5;
  const int to = tb % 32 == 31 ? kBadLayouts[tb / 32 % 3] : tb % 5;
  int64_t dims[4] = {r.U8() % 4, r.U8() % 41, r.U8() % 10, r.U8() % 10};  // N, C, H, W
  const uint8_t shape_mode = r.U8();
  if (shape_mode % 64 == 0) {  // one extreme dimension: negative, or a size that overflows int64
    static const int64_t kExtreme[] = {-1, INT64_MIN, INT64_MAX, INT64_MAX - 3, int64_t{1} << 62, int64_t{1} << 61,
                                       int64_t{1} << 40, int64_t{1} << 31};
    dims[shape_mode / 64] = kExtreme[r.U8() % 8];
  }
  const int64_t N = dims[0], C = dims[1], H = dims[2], W = dims[3];
  const uint8_t threads_mode = r.U8(), options_mode = r.U8(), buffer_mode = r.U8(), offset_byte = r.U8();
  const bool legacy_call = r.U8() & 1;
  Bits bits{(static_cast<uint64_t>(r.U32()) << 32) | 0x9E3779B9u};

  // What the contract (docs/api.md, "Layout transforms") says of this call.
  bool invalid = false, unsupported = false;
  const bool known = dtype >= 0 && dtype <= 3 && from >= 0 && from <= 4 && to >= 0 && to <= 4;
  invalid |= !known || N < 0 || C < 0 || H < 0 || W < 0;
  const int64_t elem = known ? static_cast<int64_t>(ElementBytes(static_cast<roialign_dtype>(dtype))) : 2;
  __int128 in_exact = 0, out_exact = 0;
  if (known && !invalid) {
    in_exact = ExactBytes(from, elem, N, C, H, W);
    out_exact = ExactBytes(to, elem, N, C, H, W);
    invalid |= in_exact > INT64_MAX || out_exact > INT64_MAX;
  }
  // The library also refuses an empty tensor whose other dimensions overflow int64 before it meets the zero, which
  // docs/api.md calls OK ("an empty tensor is OK"): either outcome is accepted there, nothing may be written.
  const bool empty_overflow = known && !invalid && in_exact == 0 &&
                              (C > INT64_MAX / 16 || H > INT64_MAX / 16 || W > INT64_MAX / 16 || N > INT64_MAX / 16);
  const int64_t in_bytes = invalid ? 0 : static_cast<int64_t>(in_exact);
  const int64_t out_bytes = invalid ? 0 : static_cast<int64_t>(out_exact);
  if (in_bytes > kMaxBytes || out_bytes > kMaxBytes) return 0;

  // Options: roialign's threads, the caller's pool, or something the library must refuse.
  OptionsWithTail opt{};
  roialign_options_init(&opt.options);
  PoolWithTail pool_struct{};
  roialign_threadpool_init(&pool_struct.pool);
  Pool pool;
  bool pass_options = true, using_pool = false;
  switch (threads_mode % 8) {
    case 0: case 1: case 2: case 3:
      opt.options.num_threads = threads_mode / 8 % 5;  // 0: OpenMP's default
      break;
    case 4:
      pass_options = false;
      break;
    case 5: case 6: {
      using_pool = true;
      pool.reverse = threads_mode & 8;
      pool.num_threads = threads_mode / 16 % 4 + 1;
      pool_struct.pool.parallel_for = PoolParallelFor;
      pool_struct.pool.pool_context = &pool;
      pool_struct.pool.num_threads = pool.num_threads;
      opt.options.threadpool = &pool_struct.pool;
      if (threads_mode % 8 == 6) {  // a bad pool
        switch (threads_mode / 64) {
          case 0: pool_struct.pool.parallel_for = nullptr; invalid = true; break;
          case 1: pool_struct.pool.num_threads = -(threads_mode & 15); invalid = true; break;
          case 2: pool_struct.pool.struct_size = threads_mode & 8 ? 0 : 8; invalid = true; break;
          default:
            if (threads_mode & 8) {
              pool_struct.pool.flags = 1;
              unsupported = true;
            } else {
              pool_struct.pool.reserved = 1;
              invalid = true;
            }
        }
      }
      break;
    }
    case 7:  // options the library must refuse, or a struct_size it must accept
      switch (options_mode % 8) {
        case 0: {
          static unsigned char workspace[64];
          opt.options.workspace = workspace;
          opt.options.workspace_size = sizeof(workspace);
          invalid = true;
          break;
        }
        case 1: opt.options.workspace_size = 64; invalid = true; break;
        case 2: opt.options.reserved = 1; invalid = true; break;
        case 3: opt.options.flags = 1u << (options_mode / 8 % 32); unsupported = true; break;
        case 4: opt.options.struct_size = options_mode & 8 ? 0 : sizeof(roialign_options) - 8; invalid = true; break;
        case 5: opt.options.struct_size = ROIALIGN_MAX_STRUCT_SIZE + 1; invalid = true; break;
        case 6:  // a newer caller that sets nothing this library lacks: accepted
          opt.options.struct_size = sizeof(roialign_options) + sizeof(opt.tail);
          break;
        default:  // a newer caller that sets something this library lacks
          opt.options.struct_size = sizeof(roialign_options) + sizeof(opt.tail);
          opt.tail[options_mode / 8 % sizeof(opt.tail)] = 1;
          unsupported = true;
      }
      break;
  }

  // Buffers: exactly sized; sometimes NULL, or an output that overlaps the input.
  const size_t in_n = static_cast<size_t>(in_bytes), out_n = static_cast<size_t>(out_bytes);
  std::vector<unsigned char> input(in_n), output(out_n, kCanary), shared;
  for (unsigned char& v : input) v = bits.Next();
  if (in_bytes > 0 && from >= 2) {  // padded lanes of a blocked input: NaN, never to be read
    const int64_t b = Block(from), stored = (C + b - 1) / b * b;
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t c = C; c < stored; ++c) {
        for (int64_t p = 0; p < H * W; ++p) {
          std::memset(&input[static_cast<size_t>(Offset(from, stored, H, W, n, c, p / W, p % W) * elem)], 0xFF,
                      static_cast<size_t>(elem));
        }
      }
    }
  }
  const void* in_ptr = input.empty() ? nullptr : input.data();
  void* out_ptr = output.empty() ? nullptr : output.data();
  const bool empty = in_bytes == 0;
  switch (buffer_mode % 16) {
    case 0: in_ptr = nullptr; invalid |= !empty; break;
    case 1: out_ptr = nullptr; invalid |= !empty; break;
    case 2:
      if (!empty) {  // the output starts inside the input
        const size_t offset = offset_byte * static_cast<size_t>(elem) % in_n;
        shared.resize(std::max(in_n, offset + out_n));
        for (unsigned char& v : shared) v = bits.Next();
        in_ptr = shared.data();
        out_ptr = shared.data() + offset;
        invalid = true;
      }
      break;
    default: break;
  }
  const std::vector<unsigned char> shared_before = shared;

  const roialign_status s = Call(legacy_call, dtype, from, to, in_ptr, N, C, H, W, out_ptr,
                                pass_options ? &opt.options : nullptr);

  if (!invalid && !unsupported && !(empty_overflow && s == ROIALIGN_INVALID_ARGUMENT)) {
    if (s != ROIALIGN_OK) Fail(roialign_last_error());
  } else if (s == ROIALIGN_OK && !empty_overflow) {
    Fail("a call the contract refuses was accepted");
  } else if (s != ROIALIGN_OK) {
    if (invalid && !unsupported && s != ROIALIGN_INVALID_ARGUMENT) Fail("refused, but not as INVALID_ARGUMENT");
    if (unsupported && !invalid && s != ROIALIGN_UNSUPPORTED) Fail("refused, but not as UNSUPPORTED");
    if (std::strlen(roialign_last_error()) == 0) Fail("refused call without a message");
    for (unsigned char v : output) {
      if (v != kCanary) Fail("refused call wrote to the output");
    }
    if (shared != shared_before) Fail("refused call wrote to the overlapping buffer");
    if (using_pool && pool.calls != 0) Fail("refused call ran the caller's pool");
    return 0;
  }
  if (empty) {
    for (unsigned char v : output) {
      if (v != kCanary) Fail("an empty transform wrote to the output");
    }
    return 0;
  }
  if (using_pool && pool.most_tasks > pool.num_threads) Fail("more tasks than the pool's num_threads");
  // Every element moved bit for bit, and the output's padded lanes 0.
  std::vector<unsigned char> want(out_n, 0);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t y = 0; y < H; ++y) {
        for (int64_t x = 0; x < W; ++x) {
          std::memcpy(&want[static_cast<size_t>(Offset(to, C, H, W, n, c, y, x) * elem)],
                      &input[static_cast<size_t>(Offset(from, C, H, W, n, c, y, x) * elem)],
                      static_cast<size_t>(elem));
        }
      }
    }
  }
  if (std::memcmp(want.data(), output.data(), out_n) != 0) Fail("transform output differs from the moved elements");
  return 0;
}
