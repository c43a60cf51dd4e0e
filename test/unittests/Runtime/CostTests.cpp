//===- CostTests.cpp - Tests of the BitOps cost model --------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Cost.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace qtrain::rt;

namespace {

TEST(CostTest, PerMacBitOps) {
  EXPECT_EQ(costBits(0), 32);
  EXPECT_EQ(costBits(8), 8);
  EXPECT_EQ(bitOpsPerMac(8, 8), 64 + 128);
  EXPECT_EQ(bitOpsPerMac(3, 8), 9 + 48);
  EXPECT_EQ(bitOpsPerMac(8, 3), 64 + 48); // forward bits enter squared
  EXPECT_EQ(bitOpsPerMac(0, 0), 3 * 32 * 32);
  EXPECT_EQ(bitOpsPerMac(0, 8), 1024 + 2 * 32 * 8);
  EXPECT_DOUBLE_EQ(bitOps(1000.0, 3, 8), 57000.0);
  EXPECT_DOUBLE_EQ(bitOps(0.5, 16, 16), 0.5 * 768);
}

TEST(CostTest, RelativeCostVsFp32) {
  EXPECT_DOUBLE_EQ(relativeCostVsFp32(0, 0), 1.0);
  EXPECT_DOUBLE_EQ(relativeCostVsFp32(8, 8), 192.0 / 3072.0);
  EXPECT_DOUBLE_EQ(relativeCostVsFp32(8, 8), 0.0625);
  EXPECT_DOUBLE_EQ(relativeCostVsFp32(4, 8), (16.0 + 64.0) / 3072.0);
}

TEST(CostTest, Ledger) {
  CostLedger empty;
  EXPECT_EQ(empty.numEntries(), 0);
  EXPECT_EQ(empty.relativeCostVsFp32(), 0.0);
  EXPECT_EQ(empty.relativeCostVsStatic(8, 8), 0.0);

  CostLedger ledger;
  ledger.add(8, 8, 100.0); // 19200
  ledger.add(4, 8, 100.0); // 8000
  ledger.add(0, 0, 10.0);  // 30720
  EXPECT_EQ(ledger.numEntries(), 3);
  EXPECT_DOUBLE_EQ(ledger.totalMacs(), 210.0);
  EXPECT_DOUBLE_EQ(ledger.totalBitOps(), 19200.0 + 8000.0 + 30720.0);
  EXPECT_DOUBLE_EQ(ledger.relativeCostVsFp32(), 57920.0 / (210.0 * 3072.0));
  EXPECT_DOUBLE_EQ(ledger.relativeCostVsStatic(8, 8),
                   57920.0 / (210.0 * 192.0));
  EXPECT_DOUBLE_EQ(ledger.savingsVsStatic(8, 8),
                   1.0 - 57920.0 / (210.0 * 192.0));
}

struct SavingsCase {
  int lo, hi, grad;
  double percent; // PAPERS.md §1, vs static hi/grad
};

TEST(CostTest, CptSavingsTable) {
  // 64000 steps, 32 cycles; to 0.01%.
  const SavingsCase cases[] = {{3, 8, 8, 36.67},
                               {3, 6, 6, 30.05},
                               {4, 8, 8, 30.11},
                               {4, 6, 6, 20.69},
                               {5, 8, 8, 23.16}};
  for (const SavingsCase &c : cases) {
    ScheduleCostSummary summary;
    ASSERT_TRUE(
        summarizeScheduleCost(Schedule::cpt(c.lo, c.hi), c.grad, 64000, summary)
            .isOk());
    EXPECT_EQ(summary.staticMaxBits, c.hi);
    EXPECT_NEAR(100.0 * summary.savingsVsStaticMax, c.percent, 0.005)
        << c.lo << "-" << c.hi << "/" << c.grad;
    EXPECT_DOUBLE_EQ(summary.savingsVsStaticMax,
                     1.0 - summary.relativeCostVsStaticMax);
  }
}

TEST(CostTest, SummaryOfStaticSchedules) {
  ScheduleCostSummary summary;
  ASSERT_TRUE(
      summarizeScheduleCost(Schedule::staticBits(8), 8, 100, summary).isOk());
  EXPECT_EQ(summary.histogram[8], 100);
  EXPECT_DOUBLE_EQ(summary.meanBits, 8.0);
  EXPECT_DOUBLE_EQ(summary.savingsVsStaticMax, 0.0);
  EXPECT_DOUBLE_EQ(summary.relativeCostVsStatic88, 1.0);
  EXPECT_DOUBLE_EQ(summary.relativeCostVsFp32, 0.0625);

  ASSERT_TRUE(summarizeScheduleCost(Schedule::fp32(), 0, 10, summary).isOk());
  EXPECT_EQ(summary.histogram[0], 10);
  EXPECT_DOUBLE_EQ(summary.meanBits, 32.0); // fp32 counts as 32
  EXPECT_DOUBLE_EQ(summary.relativeCostVsFp32, 1.0);
  EXPECT_DOUBLE_EQ(summary.relativeCostVsStatic88, 16.0);
  EXPECT_EQ(summary.staticMaxBits, 0);
  EXPECT_DOUBLE_EQ(summary.savingsVsStaticMax, 0.0);
}

TEST(CostTest, SummaryErrors) {
  ScheduleCostSummary summary;
  summary.totalSteps = 42;
  Status status =
      summarizeScheduleCost(Schedule::cpt(3, 8), 17, 64000, summary);
  ASSERT_TRUE(status.failed());
  EXPECT_EQ(status.message(), "gradient bits 17 out of range [0, 16]");
  status = summarizeScheduleCost(Schedule::cpt(3, 8), -1, 64000, summary);
  EXPECT_EQ(status.message(), "gradient bits -1 out of range [0, 16]");
  status = summarizeScheduleCost(Schedule::cpt(3, 8), 8, 10, summary);
  EXPECT_EQ(status.message(),
            "total steps 10 is less than the number of cycles 32 (a period "
            "must be at least one step)");
  EXPECT_EQ(summary.totalSteps, 42); // untouched on failure
}

} // namespace
