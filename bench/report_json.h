// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The layout report's JSON, the one writer of its schema (docs/layouts.md describes it; bench/report_schema.py is
// its one reader). Forward and backward rows, and forward and backward limits, go through the same writers.
#ifndef ROIALIGN_BENCH_REPORT_JSON_H_
#define ROIALIGN_BENCH_REPORT_JSON_H_

#include <string>

#include "bench/report_flags.h"
#include "bench/report_rows.h"

namespace roialign {
namespace bench {

// The schema's version; bench/report_schema.py's SCHEMA_VERSION reads up to it.
constexpr int kReportSchemaVersion = 4;

// Writes `report` to `path`, with the machine and the run's settings from `flags`.
void WriteReportJson(const std::string& path, const Report& report, const ReportFlags& flags);

}  // namespace bench
}  // namespace roialign

#endif  // ROIALIGN_BENCH_REPORT_JSON_H_
