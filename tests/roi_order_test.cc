// Copyright 2026 The roialign Authors
// SPDX-License-Identifier: Apache-2.0
// The plan's RoI order (execution/roi_order.h): the Hilbert index is a curve through every cell whose steps join
// neighbouring cells, and LocalityOrder is a permutation of the RoIs it runs, grouped by image, that follows it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <vector>

#include "execution/roi_order.h"

namespace roialign {
namespace testing {
namespace {

TEST(RoiOrder, HilbertIndexVisitsEveryCellOnceThroughNeighbours) {
  for (int bits : {1, 2, 3, 5}) {
    const uint32_t n = uint32_t{1} << bits;
    std::vector<std::pair<uint32_t, uint32_t>> cell_at(static_cast<size_t>(n) * n, {n, n});
    for (uint32_t y = 0; y < n; ++y) {
      for (uint32_t x = 0; x < n; ++x) {
        const uint64_t d = internal::HilbertIndex(bits, x, y);
        ASSERT_LT(d, static_cast<uint64_t>(n) * n);
        EXPECT_EQ(cell_at[d].first, n) << "two cells share position " << d;
        cell_at[d] = {x, y};
      }
    }
    for (size_t d = 1; d < cell_at.size(); ++d) {
      const int dx = std::abs(static_cast<int>(cell_at[d].first) - static_cast<int>(cell_at[d - 1].first));
      const int dy = std::abs(static_cast<int>(cell_at[d].second) - static_cast<int>(cell_at[d - 1].second));
      EXPECT_EQ(dx + dy, 1) << "bits " << bits << ": step " << d << " is not between neighbours";
    }
  }
}

// [K, 5] RoIs of side 2 centred on (cx, cy), with their image.
std::vector<int64_t> ToVector(const std::pmr::vector<int64_t>& v) { return {v.begin(), v.end()}; }

std::vector<float> Boxes(const std::vector<std::vector<float>>& centres) {
  std::vector<float> rois;
  for (const std::vector<float>& c : centres) {
    rois.insert(rois.end(), {c[0], c[1] - 1, c[2] - 1, c[1] + 1, c[2] + 1});
  }
  return rois;
}

internal::Problem ProblemOf(const std::vector<float>& rois) {
  internal::Problem p;
  p.rois = rois.data();
  p.num_rois = static_cast<int64_t>(rois.size() / 5);
  p.batch = 2;
  return p;
}

TEST(RoiOrder, GroupsByImageAndFollowsTheCurve) {
  // Image 1 before image 0 in the input; in image 0, the four corners of a square in an order the curve does
  // not take, and a repeated centre (a tie keeps the input order).
  const std::vector<float> rois = Boxes({{1, 50, 50}, {0, 0, 0}, {0, 100, 100}, {0, 0, 100}, {0, 100, 0},
                                         {0, 0, 0}});
  const std::vector<int64_t> order = ToVector(internal::LocalityOrder(ProblemOf(rois)));
  // The curve from the corner (0, 0): (0, 0) -> (0, 100) -> (100, 100) -> (100, 0) in (x, y).
  EXPECT_EQ(order, (std::vector<int64_t>{1, 5, 3, 2, 4, 0}));
}

TEST(RoiOrder, SubsetIsPermutedAndNotExtended) {
  std::vector<std::vector<float>> centres;
  for (int i = 0; i < 40; ++i) {
    centres.push_back({static_cast<float>(i % 2), 7.0f * static_cast<float>(i % 9), 5.0f * static_cast<float>(i % 13)});
  }
  const std::vector<float> rois = Boxes(centres);
  internal::Problem p = ProblemOf(rois);
  const std::vector<int64_t> subset = {3, 17, 4, 30, 22, 9};
  p.roi_subset = subset.data();
  p.subset_size = static_cast<int64_t>(subset.size());
  std::vector<int64_t> order = ToVector(internal::LocalityOrder(p));
  ASSERT_EQ(order.size(), subset.size());
  for (size_t i = 1; i < order.size(); ++i) {
    const float image_before = rois[static_cast<size_t>(5 * order[i - 1])];
    EXPECT_LE(image_before, rois[static_cast<size_t>(5 * order[i])]) << "images are not grouped";
  }
  EXPECT_EQ(std::set<int64_t>(order.begin(), order.end()), std::set<int64_t>(subset.begin(), subset.end()));
}

}  // namespace
}  // namespace testing
}  // namespace roialign
