//===- RangeTestTests.cpp - Tests of the precision range test -------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
//
// The choice of the candidates and of Bmin and Bmax on hand-made manifests
// and measurements; the measurement itself on the toy fixture bundle.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/RangeTest.h"

#include "fixtures/ToyBundle.h"

#include "gtest/gtest.h"

#include <limits>

using namespace qtrain::rt;
using namespace qtrain::rt::testing;

namespace {

/// A manifest of one kernel site with a variant per forward bits in
/// `bits` (backward 8 bits), and fp32.
Manifest siteWithBits(const std::vector<int> &bits) {
  SiteSpec site;
  site.name = "site0";
  site.op = "matmul";
  site.macs = 64;
  site.variants.push_back({0, 0, "site0_fp32", {}});
  for (int b : bits)
    site.variants.push_back({b, 8, "site0_b" + std::to_string(b) + "_g8", {}});
  Manifest m;
  m.sites.push_back(site);
  return m;
}

std::vector<int> candidatesOf(const Manifest &m) {
  return rangeTestCandidates(m, Schedule::staticBits(8), "static:8");
}

RangePoint measured(int bits, double first, double last) {
  RangePoint p;
  p.bits = bits;
  p.firstAccuracy = first;
  p.lastAccuracy = last;
  return p;
}

RangePoint divergedAt(int bits, int64_t step) {
  RangePoint p;
  p.bits = bits;
  p.divergedAt = step;
  return p;
}

TEST(RangeTestTest, CandidatesAreTheStaticBitsTheBundleServes) {
  EXPECT_EQ(candidatesOf(siteWithBits({2, 3, 4})), (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(candidatesOf(siteWithBits({2, 3, 8})), (std::vector<int>{2, 3, 8}));
  // Backward bits the variants lack serve no precision.
  EXPECT_TRUE(rangeTestCandidates(siteWithBits({2, 3, 4}),
                                  Schedule::staticBits(4), "static:4")
                  .empty());
}

TEST(RangeTestTest, BminIsTheFirstPrecisionWhoseGainExceedsTheThreshold) {
  std::vector<int> candidates = {2, 3, 4, 5};
  RangeDecision d =
      decideRange(candidates,
                  {measured(2, 0.30, 0.35), measured(3, 0.30, 0.45),
                   measured(4, 0.30, 0.60), measured(5, 0.3, 0.7)},
                  0.10);
  EXPECT_EQ(d.bmin, 3);
  // A gain equal to the threshold does not exceed it.
  EXPECT_EQ(decideRange(candidates, {measured(2, 0.25, 0.50)}, 0.25).bmin, -1);
  EXPECT_TRUE(d.diverged.empty());
}

TEST(RangeTestTest, NoGainLeavesBminNotFound) {
  RangeDecision d =
      decideRange({2, 3}, {measured(2, 0.5, 0.5), measured(3, 0.6, 0.4)}, 0.10);
  EXPECT_EQ(d.bmin, -1);
  // Before any measurement there is no Bmin either, and Bmax is known.
  d = decideRange({2, 3}, {}, 0.10);
  EXPECT_EQ(d.bmin, -1);
  EXPECT_EQ(d.bmax, 3);
}

TEST(RangeTestTest, DivergenceCountsAsNoGainWhateverTheThreshold) {
  // A threshold below zero is met by any measured precision, never by a
  // diverged one (its accuracies are not measured).
  RangeDecision d = decideRange(
      {2, 3, 4}, {divergedAt(2, 7), divergedAt(3, 0), measured(4, 0.5, 0.4)},
      -0.5);
  EXPECT_EQ(d.bmin, 4);
  EXPECT_EQ(d.diverged, (std::vector<int>{2, 3}));
  d = decideRange({2}, {divergedAt(2, 7)}, -std::numeric_limits<double>::max());
  EXPECT_EQ(d.bmin, -1);
}

TEST(RangeTestTest, BmaxIsTheStaticBaselineWhenTheBundleHasIt) {
  EXPECT_EQ(decideRange({2, 3, 8}, {}, 0.1).bmax, 8);
  EXPECT_EQ(decideRange({2, 8, 12}, {}, 0.1).bmax, 8);
  // Else the bundle's largest precision.
  EXPECT_EQ(decideRange({2, 3, 4}, {}, 0.1).bmax, 4);
  EXPECT_EQ(decideRange({9, 10}, {}, 0.1).bmax, 10);
}

std::shared_ptr<const Bundle> openToy() {
  std::unique_ptr<Bundle> bundle;
  Status s = openBundle(toyBundleDir(), bundle);
  EXPECT_TRUE(s.isOk()) << s.message();
  return std::shared_ptr<const Bundle>(std::move(bundle));
}

/// 64 samples of the toy's 4 inputs (2x2 images), labels 0..2.
Dataset toyData() {
  Dataset d;
  d.count = 64;
  d.rows = d.cols = 2;
  d.classes = 3;
  for (int64_t i = 0; i < d.count; ++i) {
    d.labels.push_back(uint8_t(i % 3));
    for (int p = 0; p < 4; ++p)
      d.pixels.push_back(uint8_t((i * 37 + p * 91 + (i % 3) * 60) % 256));
  }
  return d;
}

RangeTestOptions toyOptions() {
  RangeTestOptions o;
  o.steps = 20;
  o.window = 4;
  o.threshold = -1;
  std::vector<std::string> notices;
  Status s = makeInputPipeline(toyData(), {8, 4},
                               {{kFashionMnistMean}, {kFashionMnistStd}}, false,
                               o.seed, o.input, notices);
  EXPECT_TRUE(s.isOk()) << s.message();
  return o;
}

TEST(RangeTestTest, EveryPrecisionStartsFromTheSameInitialization) {
  std::shared_ptr<const Bundle> bundle = openToy();
  ASSERT_TRUE(bundle);
  std::vector<int> candidates = rangeTestCandidates(
      bundle->getManifest(), Schedule::staticBits(8), "static:8");
  EXPECT_EQ(candidates, (std::vector<int>{3, 4, 5, 6, 7, 8}));
  TrainerOptions t;
  t.gradSchedule = "static:8";
  t.seed = 3;
  std::vector<RangePoint> seen;
  RangeDecision decision;
  Status s = runRangeTest(
      bundle, candidates, t, toyData(), toyOptions(),
      [&](const RangePoint &p, const RangeDecision &sofar) {
        seen.push_back(p);
        // The decision so far names the first precision that gains.
        EXPECT_EQ(sofar.bmin, seen.front().bits);
      },
      decision);
  ASSERT_TRUE(s.isOk()) << s.message();
  ASSERT_EQ(seen.size(), candidates.size());
  EXPECT_EQ(decision.bmin, 3);
  EXPECT_EQ(decision.bmax, 8);
  // Precision 5 alone, on its own trainer, measures what the test did.
  t.schedule = "static:5";
  t.totalSteps = toyOptions().steps;
  std::unique_ptr<Trainer> trainer;
  ASSERT_TRUE(Trainer::create(bundle, t, trainer).isOk());
  RangePoint alone;
  ASSERT_TRUE(measureRange(*trainer, 5, toyData(), toyOptions(), alone).isOk());
  EXPECT_EQ(alone.bits, 5);
  EXPECT_EQ(alone.divergedAt, -1);
  EXPECT_EQ(alone.firstAccuracy, seen[2].firstAccuracy);
  EXPECT_EQ(alone.lastAccuracy, seen[2].lastAccuracy);
  EXPECT_GE(alone.firstAccuracy, 0.0);
  EXPECT_LE(alone.lastAccuracy, 1.0);
}

TEST(RangeTestTest, ADivergingPrecisionIsReportedAndTheTestGoesOn) {
  std::shared_ptr<const Bundle> bundle = openToy();
  ASSERT_TRUE(bundle);
  TrainerOptions t;
  t.gradSchedule = "static:8";
  t.learningRate = 3e38f;
  RangeDecision decision;
  int calls = 0;
  Status s = runRangeTest(
      bundle, {3, 4}, t, toyData(), toyOptions(),
      [&](const RangePoint &p, const RangeDecision &) {
        ++calls;
        EXPECT_TRUE(p.diverged()) << p.bits;
        EXPECT_LT(p.divergedAt, toyOptions().steps);
      },
      decision);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(decision.diverged, (std::vector<int>{3, 4}));
  EXPECT_EQ(decision.bmin, -1);
}

} // namespace
