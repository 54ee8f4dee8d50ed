// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The layout report's judgement of its rows (bench/stability.h) and the verdict built from them (bench/verdict.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench/stability.h"
#include "bench/verdict.h"

namespace roialign {
namespace bench {
namespace {

TEST(Stability, ParsesTheCpuLineOfProcStat) {
  const std::string text =
      "cpu  100 20 30 400 50 6 7 8 0 0\n"
      "cpu0 50 10 15 200 25 3 3 4 0 0\n"
      "intr 12345\n";
  CpuTimes t;
  ASSERT_TRUE(ParseProcStat(text, &t));
  EXPECT_DOUBLE_EQ(t.busy, 100 + 20 + 30 + 6 + 7);
  EXPECT_DOUBLE_EQ(t.steal, 8);
  EXPECT_DOUBLE_EQ(t.total, 100 + 20 + 30 + 400 + 50 + 6 + 7 + 8);
  EXPECT_FALSE(ParseProcStat("cpu0 1 2 3 4\n", &t));  // only per-CPU lines
}

TEST(Stability, ParsesOwnCpuTimePastACommandWithSpacesAndParentheses) {
  // Fields 14 and 15 (utime, stime) counted after the command's last ')'.
  const std::string text = "4242 (a (b) c) R 1 2 3 4 5 6 7 8 9 10 111 222 13 14 15\n";
  double ticks = 0;
  ASSERT_TRUE(ParseSelfStat(text, &ticks));
  EXPECT_DOUBLE_EQ(ticks, 111 + 222);
  EXPECT_FALSE(ParseSelfStat("4242 (x) R 1 2", &ticks));
}

MachineSample Sample(double busy, double steal, double total, double self, double load1) {
  MachineSample s;
  s.cpu.busy = busy;
  s.cpu.steal = steal;
  s.cpu.total = total;
  s.self_ticks = self;
  s.load1 = load1;
  s.valid = true;
  return s;
}

TEST(Stability, OthersCpuTimeIsTheBusyTimeThatWasNotOurs) {
  // 2 cores for 1 s at 100 Hz: 200 ticks; 180 busy of which 100 ours, 10 stolen.
  const MachineLoad l = LoadBetween(Sample(1000, 0, 5000, 50, 1.5), Sample(1180, 10, 5200, 150, 2.5), 2);
  ASSERT_TRUE(l.valid);
  EXPECT_NEAR(l.others_cores, 80.0 / 200 * 2, 1e-12);
  EXPECT_NEAR(l.steal_fraction, 10.0 / 200, 1e-12);
  EXPECT_DOUBLE_EQ(l.load1, 2.5);
  EXPECT_FALSE(LoadBetween(Sample(0, 0, 0, 0, 0), MachineSample(), 2).valid);
}

TEST(Stability, SpreadIsTheMedianOverTheMinimum) {
  EXPECT_NEAR(Spread({1.0, 1.2, 1.1}), 0.1, 1e-12);
  EXPECT_NEAR(Spread({2.0, 1.0, 3.0, 1.5}), 0.75, 1e-12);  // median of four: 1.75
  EXPECT_EQ(Spread({5.0}), 0);
}

TEST(Stability, EachReasonOnItsOwn) {
  const StabilityThresholds t;
  MachineLoad quiet;
  quiet.valid = true;
  quiet.cores = 2;
  quiet.load1 = 1.0;
  EXPECT_TRUE(UnstableReasons(0.05, 0.02, quiet, 2, t).empty());
  EXPECT_TRUE(UnstableReasons(0.05, -1, quiet, 2, t).empty());  // no limit: not judged by it

  const std::vector<std::string> spread = UnstableReasons(0.15, 0.0, quiet, 2, t);
  ASSERT_EQ(spread.size(), 1u);
  EXPECT_NE(spread[0].find("rounds disagree"), std::string::npos);
  EXPECT_NE(spread[0].find("15%"), std::string::npos);
  EXPECT_EQ(UnstableReasons(0.0, 0.2, quiet, 2, t).size(), 1u);  // the limit's rounds

  // One thread on two cores leaves one core to the others: 1.2 of them is fine, 1.3 is not; two threads leave none.
  MachineLoad others = quiet;
  others.others_cores = 1.2;
  EXPECT_TRUE(UnstableReasons(0.0, 0.0, others, 1, t).empty());
  EXPECT_EQ(UnstableReasons(0.0, 0.0, others, 2, t).size(), 1u);
  others.others_cores = 1.3;
  EXPECT_EQ(UnstableReasons(0.0, 0.0, others, 1, t).size(), 1u);

  MachineLoad steal = quiet;
  steal.steal_fraction = 0.06;
  EXPECT_EQ(UnstableReasons(0.0, 0.0, steal, 1, t).size(), 1u);

  MachineLoad loaded = quiet;
  loaded.load1 = 2.6;
  const std::vector<std::string> load = UnstableReasons(0.0, 0.0, loaded, 1, t);
  ASSERT_EQ(load.size(), 1u);
  EXPECT_NE(load[0].find("load average 2.60 on 2 cores"), std::string::npos);

  MachineLoad unsampled = loaded;  // /proc unreadable: the machine is not held against the row
  unsampled.valid = false;
  unsampled.others_cores = 2;
  EXPECT_TRUE(UnstableReasons(0.0, 0.0, unsampled, 2, t).empty());
}

Row MakeRow(const std::string& workload, const std::string& path, double ms_min, bool stable = true) {
  Row r;
  r.workload = workload;
  r.isa = "avx2";
  r.dtype = "F32";
  r.path = path;
  r.threads = 2;
  r.ms = r.ms_min = ms_min;
  if (!stable) r.reasons = {"rounds disagree: median 50% above the minimum"};
  return r;
}

TEST(Verdict, BuiltFromStableRowsOnly) {
  // On "a" NHWC wins; on "b" an unstable NCHW row would make NCHW win the sum if it were counted.
  const std::vector<Row> rows = {MakeRow("a", "NCHW", 10), MakeRow("a", "NHWC", 5), MakeRow("b", "NCHW", 1, false),
                                 MakeRow("b", "NHWC", 50)};
  const std::string v = Verdict(rows);
  EXPECT_NE(v.find("best kernel layout NHWC    (a)"), std::string::npos) << v;
  EXPECT_NE(v.find("NCHW 2.00x"), std::string::npos) << v;
  EXPECT_NE(v.find("left out, unstable: b"), std::string::npos) << v;
}

TEST(Verdict, SaysWhenItCouldNotBeBuilt) {
  const std::vector<Row> rows = {MakeRow("a", "NCHW", 10, false), MakeRow("a", "NHWC", 5)};
  const std::string v = Verdict(rows);
  EXPECT_NE(v.find("could not be built"), std::string::npos) << v;
  EXPECT_EQ(v.find("best kernel layout"), std::string::npos) << v;
}

TEST(Verdict, NeverPrintsANegativeShare) {
  // The conversion row ran faster than the NHWC kernel it wraps (noise): no share, and no minus sign anywhere.
  const std::vector<Row> rows = {MakeRow("a", "NCHW", 10), MakeRow("a", "NHWC", 8),
                                 MakeRow("a", "NCHW->NHWC kernel->NCHW", 6),
                                 MakeRow("a", "NHWC->NCHW kernel->NHWC", 12)};
  const std::string v = Verdict(rows);
  EXPECT_NE(v.find("not measurable"), std::string::npos) << v;
  EXPECT_EQ(v.find('-' + std::string("6")), std::string::npos) << v;
  EXPECT_EQ(v.find("transforms -"), std::string::npos) << v;
  // The other conversion: (12 - 10) / 12 = 17%.
  EXPECT_NE(v.find("transforms 17% of it"), std::string::npos) << v;
}

TEST(Verdict, LeavesOutConversionsWithAnUnstableRow) {
  const std::vector<Row> rows = {MakeRow("a", "NCHW", 10), MakeRow("a", "NHWC", 8),
                                 MakeRow("a", "NCHW->NHWC kernel->NCHW", 30, false)};
  const std::string v = Verdict(rows);
  EXPECT_NE(v.find("not measured, unstable on a"), std::string::npos) << v;
  EXPECT_EQ(v.find("3.00x"), std::string::npos) << v;
}

}  // namespace
}  // namespace bench
}  // namespace roialign
