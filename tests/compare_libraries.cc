// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// Bit-for-bit comparison of two builds of libroialign.so through the C API, for refactors that must not change a
// single bit (docs/testing.md, "Comparing two builds"):
//
//   roialign_compare_libraries OLD_LIBRARY NEW_LIBRARY [--cases=N] [--seed=S] [--verbose] [--statuses-only]
//
// Each random case (target, attributes, layout, dtype, shapes, RoIs in both formats, strided maps, single- or
// multi-level with every level rule, some of them invalid) runs on both libraries with the same options (own
// threads, a caller pool, or a caller workspace sized by the workspace query), and once more on NEW with other
// options. Every status, message and output byte must agree (an error must leave the output as it was), and NEW's
// two runs must give the same bits. The workspace sizes may differ (a plan may hold more or less); the summary
// counts the cases where they do and the largest ratio. Exits 1 on the first disagreement, printing the case.
#include <dlfcn.h>

#include <cinttypes>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "examples/worker_pool.h"
#include "roialign/roialign.h"

namespace {

// The C entry points of one loaded library.
struct Library {
  void* handle = nullptr;
  decltype(&roialign_select) select;
  decltype(&roialign_run) run;
  decltype(&roialign_workspace_size) workspace_size;
  decltype(&roialign_kernel_free) kernel_free;
  decltype(&roialign_kernel_name) kernel_name;
  decltype(&roialign_multi_level_select) ml_select;
  decltype(&roialign_multi_level_run) ml_run;
  decltype(&roialign_multi_level_workspace_size) ml_workspace_size;
  decltype(&roialign_multi_level_kernel_free) ml_kernel_free;
  decltype(&roialign_last_error) last_error;
};

template <typename F>
void Bind(void* handle, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(dlsym(handle, name));
  if (*fn == nullptr) {
    std::fprintf(stderr, "%s: %s\n", name, dlerror());
    std::exit(2);
  }
}

Library Load(const char* path) {
  Library l;
  // RTLD_LOCAL: the two libraries export the same names, and each call must reach its own.
  l.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (l.handle == nullptr) {
    std::fprintf(stderr, "cannot load %s: %s\n", path, dlerror());
    std::exit(2);
  }
  Bind(l.handle, "roialign_select", &l.select);
  Bind(l.handle, "roialign_run", &l.run);
  Bind(l.handle, "roialign_workspace_size", &l.workspace_size);
  Bind(l.handle, "roialign_kernel_free", &l.kernel_free);
  Bind(l.handle, "roialign_kernel_name", &l.kernel_name);
  Bind(l.handle, "roialign_multi_level_select", &l.ml_select);
  Bind(l.handle, "roialign_multi_level_run", &l.ml_run);
  Bind(l.handle, "roialign_multi_level_workspace_size", &l.ml_workspace_size);
  Bind(l.handle, "roialign_multi_level_kernel_free", &l.ml_kernel_free);
  Bind(l.handle, "roialign_last_error", &l.last_error);
  return l;
}

// How a run gets its threads and memory.
enum class Threads { kOwn, kPool, kWorkspace };
struct Options {
  Threads threads = Threads::kOwn;
  int32_t num_threads = 1;
};

struct Case {
  std::string target;
  roialign_params params;
  bool multi = false;
  roialign_multi_level_params levels;
  int64_t batch = 1, channels = 1;
  int32_t num_maps = 1;
  int64_t height[ROIALIGN_MAX_LEVELS] = {}, width[ROIALIGN_MAX_LEVELS] = {};
  int64_t pad[ROIALIGN_MAX_LEVELS] = {};  // > 0: the map is strided, each innermost row padded by this many units
  std::vector<std::vector<unsigned char>> maps;
  std::vector<float> rois;
  std::vector<int64_t> batch_indices;  // empty: [K,5]
  std::vector<int32_t> given_levels;
  int64_t num_rois = 0;
  Options options, other_options;
};

// The library's channel block of each layout (roialign_layout_channel_block, from the new build; the old one may
// predate it), set once the libraries are loaded.
decltype(&roialign_layout_channel_block) g_channel_block = nullptr;

// Channels per element of the map's innermost dimension: the block, or 1 where channels are not in blocks.
int64_t BlockOf(roialign_layout layout) { return std::max<int64_t>(1, g_channel_block(layout)); }
int64_t BytesOf(roialign_dtype dtype) { return dtype == ROIALIGN_DTYPE_F32 ? 4 : 2; }

// Channels as stored: rounded up to whole blocks in the blocked layouts.
int64_t StoredChannels(roialign_layout layout, int64_t channels) {
  const int64_t b = BlockOf(layout);
  return (channels + b - 1) / b * b;
}

// The map's four extents in memory order, and its dense element strides with the innermost rows padded by `pad`.
void MapShape(const Case& c, int l, int64_t extent[4], int64_t strides[4]) {
  const roialign_layout layout = c.params.layout;
  const int64_t unit = BlockOf(layout);
  const bool nhwc = layout == ROIALIGN_LAYOUT_NHWC;
  extent[0] = c.batch;
  extent[1] = nhwc ? c.height[l] : StoredChannels(layout, c.channels) / unit;
  extent[2] = nhwc ? c.width[l] : c.height[l];
  extent[3] = nhwc ? c.channels : c.width[l];
  // Elements (each `unit` wide in blocked layouts) between consecutive indices of each dimension.
  strides[3] = unit;
  strides[2] = (extent[3] + c.pad[l]) * unit;
  strides[1] = strides[2] * extent[2];
  strides[0] = strides[1] * extent[1];
}

// A random finite value of about unit magnitude, as the dtype's bits.
void RandomElement(std::mt19937_64& rng, roialign_dtype dtype, unsigned char* out) {
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  float f = value(rng);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (dtype == ROIALIGN_DTYPE_F32) {
    std::memcpy(out, &bits, 4);
  } else if (dtype == ROIALIGN_DTYPE_BF16) {
    const uint16_t h = static_cast<uint16_t>(bits >> 16);
    std::memcpy(out, &h, 2);
  } else {  // f16: sign, an exponent of 2^-6 .. 2^1, a random mantissa
    const uint16_t h = static_cast<uint16_t>(((bits >> 16) & 0x8000u) | ((9u + rng() % 8u) << 10) | (rng() & 0x3FFu));
    std::memcpy(out, &h, 2);
  }
}

Case MakeCase(std::mt19937_64& rng) {
  auto pick = [&](int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1)); };
  auto chance = [&](int percent) { return pick(0, 99) < percent; };
  static const char* const kTargets[] = {"host", "generic", "x86-avx512", "x86-avx2", "x86-sse4", "portable"};
  Case c;
  c.target = kTargets[pick(0, 5)];
  roialign_params_init(&c.params);
  c.params.pooled_height = pick(1, 8);
  c.params.pooled_width = chance(70) ? c.params.pooled_height : pick(1, 8);
  static const float kScales[] = {1.0f, 0.5f, 0.25f, 0.125f, 1.0f / 16, 0.3f};
  c.params.spatial_scale = kScales[pick(0, 5)];
  c.params.sampling_ratio = static_cast<int32_t>(pick(-1, 4));
  c.params.coordinate_mode = static_cast<roialign_coordinate_mode>(pick(0, 3));
  c.params.pool_mode = static_cast<roialign_pool_mode>(pick(0, 2));
  c.params.layout = static_cast<roialign_layout>(pick(0, 4));
  c.params.dtype = static_cast<roialign_dtype>(pick(0, 2));
  c.batch = pick(1, 3);
  c.channels = chance(3) ? 0 : (chance(50) ? pick(1, 20) : pick(21, 80));
  c.multi = chance(35);
  roialign_multi_level_params_init(&c.levels);
  int64_t h0 = chance(10) ? pick(1, 3) : pick(4, 48), w0 = chance(10) ? pick(1, 3) : pick(4, 48);
  if (c.multi) {
    c.num_maps = static_cast<int32_t>(pick(1, 5));
    c.levels.num_levels = c.num_maps;
    c.levels.level_rule = static_cast<roialign_level_rule>(pick(0, 2));
    c.levels.canonical_level = static_cast<int32_t>(pick(2, 5));
    c.levels.canonical_size = chance(50) ? 224.0f : static_cast<float>(pick(16, 256));
    const int first = static_cast<int>(pick(0, 3));  // scale of level 0: 1, 1/2, 1/4 or 1/8
    for (int l = 0; l < c.num_maps; ++l) {
      c.levels.scales[l] = std::ldexp(1.0f, -(first + l));
      c.height[l] = std::max<int64_t>(1, h0 >> l);
      c.width[l] = std::max<int64_t>(1, w0 >> l);
    }
    h0 = static_cast<int64_t>(static_cast<float>(h0) / c.levels.scales[0]);
    w0 = static_cast<int64_t>(static_cast<float>(w0) / c.levels.scales[0]);
  } else {
    c.height[0] = h0;
    c.width[0] = w0;
    h0 = static_cast<int64_t>(static_cast<float>(h0) / c.params.spatial_scale);
    w0 = static_cast<int64_t>(static_cast<float>(w0) / c.params.spatial_scale);
  }
  // h0 x w0 is now the image the RoIs live on.
  const int64_t bytes = BytesOf(c.params.dtype);
  for (int l = 0; l < c.num_maps; ++l) {
    c.pad[l] = chance(10) ? pick(1, 3) : 0;
    int64_t extent[4], strides[4];
    MapShape(c, l, extent, strides);
    std::vector<unsigned char> map(static_cast<size_t>(extent[0] * strides[0] * bytes));
    // Every element random, padding and padded lanes of the last block included: neither may reach a result.
    for (size_t i = 0; i < map.size(); i += static_cast<size_t>(bytes)) RandomElement(rng, c.params.dtype, &map[i]);
    c.maps.push_back(std::move(map));
  }
  c.num_rois = chance(5) ? 0 : pick(1, 40);
  const bool four = chance(40);
  // About one case in ten has one bad RoI (a batch index out of range, a NaN, a given level out of range).
  const int64_t bad_kind = c.num_rois > 0 && chance(10) ? pick(1, 3) : 0, bad_roi = pick(0, std::max<int64_t>(c.num_rois - 1, 0));
  std::uniform_real_distribution<float> unit_interval(0.0f, 1.0f);
  for (int64_t k = 0; k < c.num_rois; ++k) {
    const float x1 = (unit_interval(rng) * 1.2f - 0.1f) * static_cast<float>(w0);
    const float y1 = (unit_interval(rng) * 1.2f - 0.1f) * static_cast<float>(h0);
    // Log-uniform sides from a pixel to twice the image; some boxes inverted, some empty.
    float bw = std::exp2(unit_interval(rng) * std::log2(2.0f * static_cast<float>(w0) + 2.0f));
    float bh = std::exp2(unit_interval(rng) * std::log2(2.0f * static_cast<float>(h0) + 2.0f));
    if (chance(5)) bw = -bw;
    if (chance(3)) bh = 0.0f;
    float b = static_cast<float>(pick(0, c.batch - 1));
    if (bad_kind == 1 && k == bad_roi) b = static_cast<float>(c.batch);
    float box[4] = {x1, y1, x1 + bw, y1 + bh};
    if (bad_kind == 2 && k == bad_roi) box[pick(0, 3)] = NAN;
    if (four) {
      c.batch_indices.push_back(static_cast<int64_t>(b));
    } else {
      c.rois.push_back(b);
    }
    c.rois.insert(c.rois.end(), box, box + 4);
    if (c.multi && c.levels.level_rule == ROIALIGN_LEVEL_RULE_GIVEN) {
      c.given_levels.push_back(static_cast<int32_t>(bad_kind == 3 && k == bad_roi ? c.num_maps : pick(0, c.num_maps - 1)));
    }
  }
  auto options = [&]() {
    Options o;
    o.threads = static_cast<Threads>(pick(0, 2));
    o.num_threads = static_cast<int32_t>(pick(1, 3));
    return o;
  };
  c.options = options();
  c.other_options = options();
  return c;
}

std::string Describe(const Case& c) {
  char text[512];
  std::snprintf(text, sizeof(text),
                "target %s, %s, %" PRId64 "x%" PRId64 " bins, scale %g, ratio %d, coord %d, pool %d, layout %d, "
                "dtype %d, N %" PRId64 " C %" PRId64 ", maps %d (level rule %d), map 0 %" PRId64 "x%" PRId64
                " pad %" PRId64 ", K %" PRId64 " %s, threads %d/%d, other %d/%d",
                c.target.c_str(), c.multi ? "multi-level" : "single-level", c.params.pooled_height,
                c.params.pooled_width, static_cast<double>(c.params.spatial_scale), c.params.sampling_ratio,
                c.params.coordinate_mode, c.params.pool_mode, c.params.layout, c.params.dtype, c.batch, c.channels,
                c.num_maps, c.multi ? static_cast<int>(c.levels.level_rule) : -1, c.height[0], c.width[0], c.pad[0],
                c.num_rois, c.batch_indices.empty() ? "[K,5]" : "[K,4]", static_cast<int>(c.options.threads),
                c.options.num_threads, static_cast<int>(c.other_options.threads), c.other_options.num_threads);
  return text;
}

// What one library did with a case.
struct Outcome {
  roialign_status select = ROIALIGN_OK, run = ROIALIGN_OK;
  std::string message, name;
  size_t workspace = 0;
  std::vector<unsigned char> output;
};

Outcome Run(const Library& lib, const Case& c, const Options& o, size_t output_bytes) {
  Outcome out;
  out.output.assign(output_bytes, 0xA5);  // a pattern an error must leave as it is
  roialign_kernel* kernel = nullptr;
  roialign_multi_level_kernel* ml = nullptr;
  out.select = c.multi ? lib.ml_select(c.target.c_str(), &c.params, &c.levels, &ml)
                       : lib.select(c.target.c_str(), &c.params, &kernel);
  if (out.select != ROIALIGN_OK) {
    out.message = lib.last_error();
    return out;
  }
  if (!c.multi) out.name = lib.kernel_name(kernel);
  roialign_inputs in;
  roialign_inputs_init(&in);
  in.batch = c.batch;
  in.channels = c.channels;
  in.num_maps = c.num_maps;
  for (int l = 0; l < c.num_maps; ++l) {
    in.maps[l].data = c.maps[static_cast<size_t>(l)].data();
    in.maps[l].height = c.height[l];
    in.maps[l].width = c.width[l];
    if (c.pad[l] > 0) {
      int64_t extent[4];
      MapShape(c, l, extent, in.maps[l].strides);
    }
  }
  in.rois = c.rois.data();
  in.batch_indices = c.batch_indices.empty() ? nullptr : c.batch_indices.data();
  in.levels = c.given_levels.empty() ? nullptr : c.given_levels.data();
  in.num_rois = c.num_rois;
  roialign_options options;
  roialign_options_init(&options);
  options.num_threads = o.num_threads;
  worker_pool* pool = nullptr;
  roialign_threadpool pool_interface;
  std::vector<unsigned char> workspace;
  if (o.threads == Threads::kPool) {
    pool = worker_pool_create(o.num_threads);
    if (pool == nullptr) {
      std::fprintf(stderr, "cannot start a pool of %d threads\n", o.num_threads);
      std::exit(2);
    }
    pool_interface = worker_pool_interface(pool);
    options.threadpool = &pool_interface;
  }
  if (o.threads == Threads::kWorkspace) {
    const roialign_status s = c.multi ? lib.ml_workspace_size(ml, &in, &options, &out.workspace)
                                      : lib.workspace_size(kernel, &in, &options, &out.workspace);
    if (s == ROIALIGN_OK) {
      workspace.resize(out.workspace + 1);
      options.workspace = workspace.data() + 1;  // any alignment
      options.workspace_size = out.workspace;
    }
  }
  out.run = c.multi ? lib.ml_run(ml, &in, out.output.data(), &options) : lib.run(kernel, &in, out.output.data(), &options);
  if (out.run != ROIALIGN_OK) out.message = lib.last_error();
  worker_pool_destroy(pool);
  lib.kernel_free(kernel);
  lib.ml_kernel_free(ml);
  return out;
}

// --statuses-only: a refusal's message may differ (a newer library lists more of what it serves).
bool g_statuses_only = false;

bool Same(const Outcome& a, const Outcome& b, std::string* why) {
  if (a.select != b.select || a.run != b.run) {
    *why = "status " + std::to_string(a.select) + "/" + std::to_string(a.run) + " vs " + std::to_string(b.select) +
           "/" + std::to_string(b.run) + " (" + a.message + " | " + b.message + ")";
    return false;
  }
  if (a.message != b.message && !g_statuses_only) {
    *why = "message '" + a.message + "' vs '" + b.message + "'";
    return false;
  }
  if (a.name != b.name) {
    *why = "kernel " + a.name + " vs " + b.name;
    return false;
  }
  if (a.output != b.output) {
    size_t i = 0;
    while (a.output[i] == b.output[i]) ++i;
    *why = "output differs first at byte " + std::to_string(i) + " of " + std::to_string(a.output.size());
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s OLD_LIBRARY NEW_LIBRARY [--cases=N] [--seed=S] [--verbose] [--statuses-only]\n", argv[0]);
    return 2;
  }
  int64_t cases = 10000;
  uint64_t seed = 1;
  bool verbose = false;
  for (int i = 3; i < argc; ++i) {
    if (std::strncmp(argv[i], "--cases=", 8) == 0) {
      cases = std::atoll(argv[i] + 8);
    } else if (std::strncmp(argv[i], "--seed=", 7) == 0) {
      seed = std::strtoull(argv[i] + 7, nullptr, 10);
    } else if (std::strcmp(argv[i], "--verbose") == 0) {
      verbose = true;
    } else if (std::strcmp(argv[i], "--statuses-only") == 0) {
      g_statuses_only = true;
    } else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  const Library old_lib = Load(argv[1]), new_lib = Load(argv[2]);
  Bind(new_lib.handle, "roialign_layout_channel_block", &g_channel_block);
  if (old_lib.run == new_lib.run && std::strcmp(argv[1], argv[2]) != 0) {
    std::fprintf(stderr, "both paths resolve to one loaded library\n");
    return 2;
  }
  std::mt19937_64 rng(seed);
  int64_t ran = 0, refused_at_select = 0, refused_at_run = 0, smaller_workspace = 0, larger_workspace = 0;
  double largest_ratio = 1.0;
  for (int64_t i = 0; i < cases; ++i) {
    const Case c = MakeCase(rng);
    const size_t output_bytes = static_cast<size_t>(c.num_rois * StoredChannels(c.params.layout, c.channels) *
                                                    c.params.pooled_height * c.params.pooled_width *
                                                    BytesOf(c.params.dtype));
    const Outcome a = Run(old_lib, c, c.options, output_bytes), b = Run(new_lib, c, c.options, output_bytes);
    std::string why;
    if (!Same(a, b, &why)) {
      std::printf("case %" PRId64 " (seed %" PRIu64 "): OLD and NEW differ: %s\n  %s\n", i, seed, why.c_str(),
                  Describe(c).c_str());
      return 1;
    }
    const Outcome other = Run(new_lib, c, c.other_options, output_bytes);
    if (!Same(b, other, &why)) {
      std::printf("case %" PRId64 " (seed %" PRIu64 "): NEW differs between its two options: %s\n  %s\n", i, seed,
                  why.c_str(), Describe(c).c_str());
      return 1;
    }
    if (verbose && (a.select != ROIALIGN_OK || a.run != ROIALIGN_OK)) std::printf("refused: %s\n", a.message.c_str());
    smaller_workspace += b.workspace < a.workspace ? 1 : 0;
    larger_workspace += b.workspace > a.workspace ? 1 : 0;
    if (a.workspace > 0) largest_ratio = std::max(largest_ratio, static_cast<double>(b.workspace) / static_cast<double>(a.workspace));
    if (a.select != ROIALIGN_OK) {
      ++refused_at_select;
    } else if (a.run != ROIALIGN_OK) {
      ++refused_at_run;
    } else {
      ++ran;
    }
  }
  std::printf("%" PRId64 " cases agree bit for bit: %" PRId64 " ran, %" PRId64 " refused at selection, %" PRId64
              " refused at run; NEW's workspace smaller in %" PRId64 ", larger in %" PRId64 " (at most %.4fx)\n",
              cases, ran, refused_at_select, refused_at_run, smaller_workspace, larger_workspace, largest_ratio);
  return 0;
}
