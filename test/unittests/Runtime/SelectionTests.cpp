//===- SelectionTests.cpp - Tests of the selection tables ----------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Selection.h"

#include "qtrain/runtime/Cost.h"

#include "gtest/gtest.h"

#include <vector>

using namespace qtrain::rt;

namespace {

SiteSpec site(std::string name, int64_t macs,
              std::vector<std::pair<int, int>> variants) {
  SiteSpec s;
  s.name = std::move(name);
  s.macs = macs;
  for (auto [bits, gradBits] : variants) {
    VariantSpec v;
    v.bits = bits;
    v.gradBits = gradBits;
    s.variants.push_back(v);
  }
  return s;
}

/// Two sites that list their variants in different orders and share only
/// some of them.
std::vector<SiteSpec> twoSites() {
  return {site("a", 10, {{8, 8}, {4, 8}, {0, 0}, {3, 8}}),
          site("b", 100, {{0, 0}, {4, 8}, {8, 8}, {8, 4}})};
}

TEST(SelectionTest, ARowPerClassEverySiteServes) {
  Selection selection(twoSites(), /*perSite=*/false);
  // (0,0), (4,8) and (8,8): b lacks 3/8, a lacks 8/4.
  EXPECT_EQ(selection.getNumRows(), 3u);
  EXPECT_EQ(selection.findRow(3, 8), -1);
  EXPECT_EQ(selection.findRow(8, 4), -1);
  EXPECT_EQ(selection.findRow(5, 8), -1);
  int32_t row = selection.findRow(4, 8);
  ASSERT_GE(row, 0);
  int32_t slots[2] = {-1, -1};
  selection.copyRow(row, slots);
  EXPECT_EQ(slots[0], 1);
  EXPECT_EQ(slots[1], 1);
  selection.copyRow(selection.findRow(0, 0), slots);
  EXPECT_EQ(slots[0], 2);
  EXPECT_EQ(slots[1], 0);
  selection.copyRow(selection.findRow(8, 8), slots);
  EXPECT_EQ(slots[0], 0);
  EXPECT_EQ(slots[1], 2);
}

TEST(SelectionTest, RowBitOpsSumTheSites) {
  Selection selection(twoSites(), /*perSite=*/false);
  EXPECT_EQ(selection.getRowBitOps(selection.findRow(4, 8)),
            bitOps(10, 4, 8) + bitOps(100, 4, 8));
  EXPECT_EQ(selection.getRowBitOps(selection.findRow(0, 0)), bitOps(110, 0, 0));
}

TEST(SelectionTest, BitsOutsideTheScheduleRangeHaveNoRow) {
  Selection selection(twoSites(), /*perSite=*/true);
  EXPECT_EQ(selection.findRow(-1, 8), -1);
  EXPECT_EQ(selection.findRow(8, -1), -1);
  EXPECT_EQ(selection.findRow(kMaxScheduleBits + 1, 8), -1);
  EXPECT_EQ(selection.getSiteVariant(0, -1, 8), -1);
  EXPECT_EQ(selection.getSiteVariant(0, 8, kMaxScheduleBits + 1), -1);
}

TEST(SelectionTest, PerSiteTables) {
  Selection selection(twoSites(), /*perSite=*/true);
  EXPECT_EQ(selection.getSiteVariant(0, 3, 8), 3);
  EXPECT_EQ(selection.getSiteVariant(1, 3, 8), -1);
  EXPECT_EQ(selection.getSiteVariant(1, 8, 4), 3);
  EXPECT_EQ(selection.getSiteVariant(0, 8, 4), -1);
  EXPECT_EQ(selection.getSiteVariant(1, 0, 0), 0);
}

TEST(SelectionTest, NoSitesServeEveryClass) {
  Selection selection({}, /*perSite=*/false);
  int32_t row = selection.findRow(5, 7);
  EXPECT_GE(row, 0);
  EXPECT_EQ(selection.getNumRows(),
            size_t(Selection::kNumBitValues * Selection::kNumBitValues));
  EXPECT_EQ(selection.getRowBitOps(row), 0.0);
  // Nothing is written, not even through a null pointer.
  selection.copyRow(row, nullptr);
  Selection empty;
  EXPECT_EQ(empty.findRow(0, 0), -1);
}

TEST(SelectionTest, FindAndListVariants) {
  SiteSpec s = twoSites()[1];
  EXPECT_EQ(findVariant(s, 8, 4), 3);
  EXPECT_EQ(findVariant(s, 4, 4), -1);
  EXPECT_EQ(listVariants(s), "4/8 8/4 8/8 fp32/fp32");
}

} // namespace
