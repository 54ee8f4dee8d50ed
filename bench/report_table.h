// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The layout report's text: the table on stdout, one line per group with the lines under it, and each group's
// limit on stderr with the progress. The JSON (bench/report_json.h) carries the same records.
#ifndef ROIALIGN_BENCH_REPORT_TABLE_H_
#define ROIALIGN_BENCH_REPORT_TABLE_H_

#include <string>
#include <vector>

#include "bench/report_rows.h"

namespace roialign {
namespace bench {

// The table's header; the columns after NCHW and NHWC differ between the single-level and the multi-level rows.
void PrintHeader(const char* third, const char* fourth, const char* last);

// A group's line (its rows: NCHW, NHWC, then the two of the third and fourth columns), with `last` at its end, and
// under it the blocked kernels, the conversion rows (`bin_lines`: the workload's, bench/limit.h) and the unstable
// rows.
void PrintGroup(const std::vector<Row>& rows, const std::string& last, const double* bin_lines);

// A transform-bandwidth line.
void PrintTransform(const TransformRow& t);

// The line of a rotated workload's NHWC kernel against the axis-aligned one.
void PrintRotated(const RotatedComparison& c);

// A backward group's lines, two kernels to the first, then its unstable rows.
void PrintBackward(const std::vector<Row>& rows);

// A group's limit on stderr; a forward limit also gives the rounds' median peaks, a backward one says so.
void PrintLimit(const LimitRow& lr, int repeats, bool backward);

}  // namespace bench
}  // namespace roialign

#endif  // ROIALIGN_BENCH_REPORT_TABLE_H_
