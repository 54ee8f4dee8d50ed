// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The bench tools' command lines (layout_report, kernel_calls, roi_align_benchmark's --dtypes): a flag with a value
// is one argument, `--name=value`, matched by the same rule in every tool; --help, an unknown option and a list value
// are handled the same way too.
#ifndef ROIALIGN_BENCH_FLAGS_H_
#define ROIALIGN_BENCH_FLAGS_H_

#include <functional>
#include <string>
#include <vector>

#include "core/library.h"

namespace roialign {
namespace bench {

// What the reader of one argument (ReadFlags' `take`) made of it.
enum class FlagResult {
  kTaken,    // read; go on
  kUnknown,  // not a flag of the tool's
  kRefused,  // a flag of the tool's with a bad value, refused after a message of the reader's own
};

// Reads a tool's command line, argv[1] on, in order: "--help" or "-h" prints `help` on stdout and ends the reading
// with status 0; every other argument goes to `take`. One that `take` does not know ends it with "unknown option
// 'ARG' (see --help)" on stderr and status 2, one it refused with status 2. Returns -1 when every argument was
// taken, else the status to exit with.
int ReadFlags(int argc, char** argv, const char* help, const std::function<FlagResult(const char* arg)>& take);

// The value of `arg` when it is `name=value` (`name` with its dashes, e.g. "--threads"), pointing into `arg`;
// null otherwise.
const char* FlagValue(const char* arg, const char* name);

// `list` split at each `sep`, empty items dropped ("a,,b," gives a and b).
std::vector<std::string> SplitList(const std::string& list, char sep);

// A dtype named in any case (f32, F16, bf16, f64, ...); false if no dtype has that name. `*name` is upper-cased in
// place, the spelling a message about it shows.
bool ParseDType(std::string* name, DType* dtype);

}  // namespace bench
}  // namespace roialign

#endif  // ROIALIGN_BENCH_FLAGS_H_
