// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
#include "bench/verdict.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "bench/conversions.h"
#include "core/enums.h"

namespace roialign {
namespace bench {

std::string Verdict(const std::vector<Row>& rows, const std::string& title) {
  const Layout layouts[] = {Layout::kNCHW, Layout::kNHWC, Layout::kNCHW4c, Layout::kNCHW8c, Layout::kNCHW16c};
  auto key_of = [](const Row& r) { return r.isa + " " + r.dtype + " " + std::to_string(r.threads) + " thread(s)"; };
  std::vector<std::string> keys;
  for (const Row& r : rows) {
    if (std::find(keys.begin(), keys.end(), key_of(r)) == keys.end()) keys.push_back(key_of(r));
  }
  std::string text = "\n" + title + " (minimum times of stable rows, summed over the workloads named):\n";
  char line[512];
  for (const std::string& key : keys) {
    std::vector<std::string> workloads;
    std::map<std::pair<std::string, std::string>, const Row*> at;  // (workload, path) -> row
    for (const Row& r : rows) {
      if (key_of(r) != key) continue;
      if (std::find(workloads.begin(), workloads.end(), r.workload) == workloads.end()) workloads.push_back(r.workload);
      at[{r.workload, r.path}] = &r;
    }
    auto has = [&](const std::string& wl, const std::string& path) { return at.count({wl, path}) > 0; };
    auto stable = [&](const std::string& wl, const std::string& path) {
      return has(wl, path) && at[{wl, path}]->stable();
    };
    auto ms = [&](const std::string& wl, const std::string& path) { return at[{wl, path}]->ms_min; };
    std::vector<Layout> ran;
    for (Layout l : layouts) {
      const auto ran_l = [&](const std::string& wl) { return has(wl, ToString(l)); };
      if (std::any_of(workloads.begin(), workloads.end(), ran_l)) ran.push_back(l);
    }
    std::vector<double> sum(ran.size(), 0.0);
    std::string used, skipped;
    for (const std::string& wl : workloads) {
      if (!std::all_of(ran.begin(), ran.end(), [&](Layout l) { return has(wl, ToString(l)); })) continue;
      if (!std::all_of(ran.begin(), ran.end(), [&](Layout l) { return stable(wl, ToString(l)); })) {
        skipped += (skipped.empty() ? "" : ",") + wl;
        continue;
      }
      for (size_t l = 0; l < ran.size(); ++l) sum[l] += ms(wl, ToString(ran[l]));
      used += (used.empty() ? "" : ",") + wl;
    }
    if (used.empty()) {
      if (skipped.empty()) continue;
      std::snprintf(line, sizeof(line), "  %-24s could not be built: unstable kernel rows on %s\n", key.c_str(),
                    skipped.c_str());
      text += line;
      continue;
    }
    const size_t best = static_cast<size_t>(std::min_element(sum.begin(), sum.end()) - sum.begin());
    std::snprintf(line, sizeof(line), "  %-24s best kernel layout %-7s (%s):", key.c_str(), ToString(ran[best]),
                  used.c_str());
    text += line;
    for (size_t l = 0; l < ran.size(); ++l) {
      if (l == best) continue;
      std::snprintf(line, sizeof(line), " %s %.2fx", ToString(ran[l]), sum[l] / sum[best]);
      text += line;
    }
    if (!skipped.empty()) text += "; left out, unstable: " + skipped;
    text += "\n";
    for (const Conversion& c : kConversions) {
      const std::string name = ConversionName(c), data = ToString(c.data), kernel = ToString(c.kernel);
      double row = 0, native = 0, inner = 0;
      std::string over, left_out;
      for (const std::string& wl : workloads) {
        if (!has(wl, name) || !has(wl, data) || !has(wl, kernel)) continue;
        if (!stable(wl, name) || !stable(wl, data) || !stable(wl, kernel)) {
          left_out += (left_out.empty() ? "" : ",") + wl;
          continue;
        }
        row += ms(wl, name);
        native += ms(wl, data);
        inner += ms(wl, kernel);
        over += (over.empty() ? "" : ",") + wl;
      }
      if (over.empty()) {
        if (!left_out.empty()) {
          std::snprintf(line, sizeof(line), "    %-8s data on the %-7s kernel (%s): not measured, unstable on %s\n",
                        data.c_str(), kernel.c_str(), name.c_str(), left_out.c_str());
          text += line;
        }
        continue;
      }
      std::string share;
      if (row > inner) {
        std::snprintf(line, sizeof(line), "transforms %.0f%% of it", 100 * (row - inner) / row);
        share = line;
      } else {
        share = "transforms' share not measurable (the row ran no slower than the kernel it wraps)";
      }
      std::snprintf(line, sizeof(line), "    %-8s data on the %-7s kernel (%s): %.2fx the %s kernel's time, %s (%s%s%s)\n",
                    data.c_str(), kernel.c_str(), name.c_str(), row / native, data.c_str(), share.c_str(),
                    over.c_str(), left_out.empty() ? "" : "; left out, unstable: ", left_out.c_str());
      text += line;
    }
  }
  return text;
}

}  // namespace bench
}  // namespace roialign
