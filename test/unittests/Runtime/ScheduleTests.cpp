//===- ScheduleTests.cpp - Tests of precision schedules ------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Cost.h"
#include "qtrain/runtime/Schedule.h"

#include "gtest/gtest.h"

#include <cmath>
#include <string>
#include <vector>

using namespace qtrain::rt;

namespace {

/// The bits at t = first, first + stride, ... (count values).
std::vector<int> sample(const Schedule &schedule, int64_t total, int64_t first,
                        int64_t stride, int count) {
  std::vector<int> bits;
  for (int i = 0; i < count; ++i)
    bits.push_back(scheduleBits(schedule, first + i * stride, total));
  return bits;
}

Schedule parse(const std::string &text) {
  Schedule schedule;
  Status status = parseSchedule(text, schedule);
  EXPECT_TRUE(status.isOk()) << status.message();
  return schedule;
}

//===----------------------------------------------------------------------===//
// CPT (PAPERS.md §1)
//===----------------------------------------------------------------------===//

TEST(CptScheduleTest, ChangePoints) {
  // Bmin = 3, Bmax = 8, T = 2000 (64000 steps, 32 cycles): b changes at
  // t = 0 -> 3, 410 -> 4, 739 -> 5, 1000 -> 6, 1262 -> 7, 1591 -> 8 and
  // nowhere else within a period.
  Schedule cpt = Schedule::cpt(3, 8);
  ASSERT_EQ(schedulePeriod(cpt, 64000), 2000);
  std::vector<std::pair<int64_t, int>> changes;
  int previous = -1;
  for (int64_t t = 0; t < 2000; ++t) {
    int bits = scheduleBits(cpt, t, 64000);
    if (bits != previous)
      changes.push_back({t, bits});
    previous = bits;
  }
  std::vector<std::pair<int64_t, int>> expected = {
      {0, 3}, {410, 4}, {739, 5}, {1000, 6}, {1262, 7}, {1591, 8}};
  EXPECT_EQ(changes, expected);
  // Sawtooth: the next period starts again at 3; the last step is 8.
  EXPECT_EQ(scheduleBits(cpt, 1999, 64000), 8);
  EXPECT_EQ(scheduleBits(cpt, 2000, 64000), 3);
  EXPECT_EQ(scheduleBits(cpt, 63999, 64000), 8);
  EXPECT_EQ(scheduleBits(cpt, 2000 * 17 + 1000, 64000), 6);
}

TEST(CptScheduleTest, HistogramAndMeanOver64000Steps) {
  ScheduleCostSummary summary;
  ASSERT_TRUE(
      summarizeScheduleCost(Schedule::cpt(3, 8), 8, 64000, summary).isOk());
  std::array<int64_t, kMaxScheduleBits + 1> expected{};
  expected[3] = 13120;
  expected[4] = 10528;
  expected[5] = 8352;
  expected[6] = 8384;
  expected[7] = 10528;
  expected[8] = 13088;
  EXPECT_EQ(summary.histogram, expected);
  // 351936 / 64000, exactly 5.499.
  EXPECT_DOUBLE_EQ(summary.meanBits, 5.499);
}

TEST(CptScheduleTest, FormulaAtSampleSteps) {
  // b = rint(3 + 0.5 * 5 * (1 - cos(pi * z))), z = (t mod 2000) / 2000.
  Schedule cpt = Schedule::cpt(3, 8);
  for (int64_t t :
       {0, 1, 409, 410, 738, 739, 999, 1000, 1261, 1262, 1590, 1591, 1999}) {
    double z = double(t % 2000) / 2000.0;
    double value = 3.0 + 0.5 * 5.0 * (1.0 - std::cos(3.141592653589793 * z));
    EXPECT_DOUBLE_EQ(scheduleValue(cpt, t, 64000), value) << t;
  }
  // t = 1000 is the exact tie 5.5 and goes to the even 6.
  EXPECT_DOUBLE_EQ(scheduleValue(cpt, 1000, 64000), 5.5);
}

TEST(CptScheduleTest, TieConvention) {
  // CPT 2-5 at z = 1/2 is 3.5 in exact arithmetic. The documented
  // expression (1 - cos(pi z)) evaluates to exactly 3.5 -> 4 (even); CPT's
  // code, 1 + cos(pi z + pi), would land below 3.5 and give 3.
  EXPECT_DOUBLE_EQ(scheduleValue(Schedule::cpt(2, 5), 1000, 64000), 3.5);
  EXPECT_EQ(scheduleBits(Schedule::cpt(2, 5), 1000, 64000), 4);
  // Half to even also rounds 4.5 down (CPT 3-6 at z = 1/2).
  EXPECT_DOUBLE_EQ(scheduleValue(Schedule::cpt(3, 6), 1000, 64000), 4.5);
  EXPECT_EQ(scheduleBits(Schedule::cpt(3, 6), 1000, 64000), 4);
}

TEST(CptScheduleTest, FloorPeriodWithRemainder) {
  // 100 steps in 32 cycles: P = 3, steps 96..99 continue the pattern.
  Schedule cpt = Schedule::cpt(3, 8);
  ASSERT_EQ(schedulePeriod(cpt, 100), 3);
  // z = 0, 1/3, 2/3: 3 + 2.5 * (1 - cos(pi z)) = 3, 4.25, 6.75.
  EXPECT_EQ(sample(cpt, 100, 93, 1, 7),
            (std::vector<int>{3, 4, 7, 3, 4, 7, 3}));
}

//===----------------------------------------------------------------------===//
// Better Schedules (PAPERS.md §2)
//===----------------------------------------------------------------------===//

struct SampleCase {
  const char *name;
  std::vector<int> expected; // t = 0, 10, ..., 190 with P = 100
};

TEST(BetterSchedulesTest, SampleSequences) {
  const SampleCase cases[] = {
      // The five sequences given in PAPERS.md §2.
      {"cosine-repeated",
       {3, 3, 3, 4, 5, 6, 6, 7, 8, 8, 3, 3, 3, 4, 5, 6, 6, 7, 8, 8}},
      {"cosine-triangular",
       {8, 8, 8, 7, 6, 6, 5, 4, 3, 3, 3, 3, 3, 4, 5, 6, 6, 7, 8, 8}},
      {"exp-repeated",
       {3, 5, 6, 6, 7, 7, 8, 8, 8, 8, 3, 5, 6, 6, 7, 7, 8, 8, 8, 8}},
      {"rex-repeated",
       {3, 3, 3, 3, 3, 3, 4, 4, 4, 5, 3, 3, 3, 3, 3, 3, 4, 4, 4, 5}},
      {"rex-triangular-horizontal",
       {8, 5, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 5}},
      // The other five, from an independent (Python) evaluation of the
      // §2 table.
      {"linear-repeated",
       {3, 4, 4, 4, 5, 6, 6, 6, 7, 8, 3, 4, 4, 4, 5, 6, 6, 6, 7, 8}},
      {"linear-triangular",
       {8, 8, 7, 6, 6, 6, 5, 4, 4, 4, 3, 4, 4, 4, 5, 6, 6, 6, 7, 8}},
      {"exp-triangular-vertical",
       {8, 6, 5, 5, 4, 4, 3, 3, 3, 3, 3, 5, 6, 6, 7, 7, 8, 8, 8, 8}},
      {"exp-triangular-horizontal",
       {8, 8, 8, 8, 8, 7, 7, 6, 6, 5, 3, 5, 6, 6, 7, 7, 8, 8, 8, 8}},
      {"rex-triangular-vertical",
       {8, 8, 8, 8, 8, 8, 7, 7, 7, 6, 3, 3, 3, 3, 3, 3, 4, 4, 4, 5}},
  };
  for (const SampleCase &c : cases) {
    // P = floor(198 / 2) + 1 = 100 (floor_plus_one, the named default).
    Schedule named = parse(std::string(c.name) + ":3:8:cycles=2");
    ASSERT_EQ(schedulePeriod(named, 198), 100) << c.name;
    EXPECT_EQ(sample(named, 198, 0, 10, 20), c.expected) << c.name;
    // The same curve with the floor convention: P = 200 / 2 = 100.
    Schedule floor = named;
    floor.period = PeriodConvention::Floor;
    ASSERT_EQ(schedulePeriod(floor, 200), 100) << c.name;
    EXPECT_EQ(sample(floor, 200, 0, 10, 20), c.expected) << c.name;
  }
}

TEST(BetterSchedulesTest, TriangularAlternatesByPeriodParity) {
  Schedule tri = parse("cosine-triangular:3:8:cycles=2");
  // Periods 0 and 2 decay (start at 8), periods 1 and 3 grow (start at 3).
  EXPECT_EQ(sample(tri, 198, 0, 100, 4), (std::vector<int>{8, 3, 8, 3}));
  Schedule rep = parse("cosine-repeated:3:8:cycles=2");
  EXPECT_EQ(sample(rep, 198, 0, 100, 4), (std::vector<int>{3, 3, 3, 3}));
}

TEST(BetterSchedulesTest, PeriodConventions) {
  // 64000 steps, 8 cycles: P = 8001 (floor_plus_one), 8000 (floor).
  EXPECT_EQ(schedulePeriod(parse("cosine-repeated:3:8"), 64000), 8001);
  EXPECT_EQ(schedulePeriod(parse("cyclic:cosine:3:8:period=floor"), 64000),
            8000);
  EXPECT_EQ(schedulePeriod(parse("cpt:3:8"), 64000), 2000);
  EXPECT_EQ(schedulePeriod(parse("static:8"), 64000), 0);
  // The smallest valid run has one step per cycle.
  EXPECT_EQ(schedulePeriod(parse("cpt:3:8:cycles=5"), 5), 1);
  EXPECT_EQ(schedulePeriod(parse("cosine-repeated:3:8:cycles=5"), 5), 2);
}

TEST(BetterSchedulesTest, CurveEndpoints) {
  // Exact values of the table at z = 0 and z = 1/2 (P = 100).
  auto value = [](const char *text, int64_t t) {
    return scheduleValue(parse(std::string(text) + ":3:8:cycles=2"), t, 198);
  };
  EXPECT_DOUBLE_EQ(value("linear-repeated", 50), 5.5);
  EXPECT_DOUBLE_EQ(value("linear-triangular", 50), 5.5);
  EXPECT_DOUBLE_EQ(value("exp-repeated", 0), 3.0);
  EXPECT_DOUBLE_EQ(value("exp-repeated", 50), 8.0 - 5.0 * std::exp(-2.0));
  EXPECT_DOUBLE_EQ(value("exp-triangular-vertical", 0), 8.0);
  EXPECT_DOUBLE_EQ(value("exp-triangular-horizontal", 0),
                   8.0 - 5.0 * std::exp(-4.0));
  EXPECT_DOUBLE_EQ(value("rex-repeated", 0), 3.0);
  // g(1/2) = 0.5 / 0.55 = 10/11.
  EXPECT_NEAR(value("rex-repeated", 50), 8.0 - 5.0 * 10.0 / 11.0, 1e-12);
  EXPECT_NEAR(value("rex-triangular-vertical", 50), 3.0 + 5.0 * 10.0 / 11.0,
              1e-12);
  EXPECT_NEAR(value("rex-triangular-horizontal", 50), 8.0 - 5.0 * 10.0 / 11.0,
              1e-12);
}

struct MeanCostCase {
  const char *name;
  double expected; // mean relative cost vs static 8/8, to 3 decimals
};

TEST(BetterSchedulesTest, MeanCostVsStatic88) {
  // 3-8 forward bits, 8 backward, T = 64000, n = 8. PAPERS.md gives cosine
  // 0.633, linear 0.628, exponential 0.822, REX 0.399 (repeated and
  // horizontal-triangular) and "others ~0.63". The horizontal flip is a
  // time reversal of the growth curve, so exp-triangular-horizontal costs
  // the same as exp-repeated (0.822), not ~0.63.
  const MeanCostCase cases[] = {
      {"cosine-repeated", 0.633},
      {"cosine-triangular", 0.633},
      {"linear-repeated", 0.628},
      {"linear-triangular", 0.628},
      {"exp-repeated", 0.822},
      {"exp-triangular-vertical", 0.635},
      {"exp-triangular-horizontal", 0.822},
      {"rex-repeated", 0.399},
      {"rex-triangular-vertical", 0.637},
      {"rex-triangular-horizontal", 0.399},
  };
  for (const MeanCostCase &c : cases) {
    ScheduleCostSummary summary;
    ASSERT_TRUE(summarizeScheduleCost(parse(std::string(c.name) + ":3:8"), 8,
                                      64000, summary)
                    .isOk());
    EXPECT_NEAR(summary.relativeCostVsStatic88, c.expected, 0.0005) << c.name;
    EXPECT_DOUBLE_EQ(summary.relativeCostVsStatic88,
                     summary.relativeCostVsStaticMax);
  }
}

//===----------------------------------------------------------------------===//
// Static and learned
//===----------------------------------------------------------------------===//

TEST(ScheduleTest, StaticAndFp32) {
  for (int64_t t : {0, 1, 999}) {
    EXPECT_EQ(scheduleBits(Schedule::staticBits(8), t, 1000), 8);
    EXPECT_EQ(scheduleBits(Schedule::staticBits(16), t, 1000), 16);
    EXPECT_EQ(scheduleBits(Schedule::fp32(), t, 1000), 0);
  }
  EXPECT_EQ(scheduleMaxBits(Schedule::fp32()), 0);
  EXPECT_EQ(scheduleMaxBits(Schedule::staticBits(6)), 6);
  EXPECT_EQ(scheduleMaxBits(Schedule::cpt(3, 7)), 7);
  EXPECT_EQ(scheduleMaxBits(Schedule::learned()), 8);
}

TEST(ScheduleTest, LearnedGivesInitialBits) {
  EXPECT_EQ(scheduleBits(Schedule::learned(), 0, 100), 3);
  EXPECT_EQ(scheduleBits(Schedule::learned(), 99, 100), 3);
  EXPECT_EQ(scheduleBits(Schedule::learned(4, 6), 7, 100), 4);
}

TEST(LdpTest, BitMapping) {
  // b = clamp(rint(p * 5 + 3), 3, 8) in fp32.
  EXPECT_EQ(ldpBits(0.0f), 3);
  EXPECT_EQ(ldpBits(1.0f), 8);
  EXPECT_EQ(ldpBits(0.25f), 4); // 4.25
  EXPECT_EQ(ldpBits(0.5f), 6);  // 5.5, tie to even
  EXPECT_EQ(ldpBits(0.75f), 7); // 6.75
  EXPECT_EQ(ldpBits(0.9f), 8);  // 0.9f * 5 rounds to 4.5f; 7.5 -> 8
  EXPECT_EQ(ldpBits(0.7f), 6);  // 0.7f * 5 rounds to 3.5f; 6.5 -> 6
  // 0.3f * 5 = 1.5 + 2^-24 exactly, which fp32 rounds (tie, even) to 1.5,
  // so 4.5 -> 4; double arithmetic would give 4.50000006 -> 5.
  EXPECT_EQ(ldpBits(0.3f), 4);
  EXPECT_EQ(ldpBits(0.1f), 4); // 3.5 -> 4
  // Clamping.
  EXPECT_EQ(ldpBits(-0.2f), 3);
  EXPECT_EQ(ldpBits(-100.0f), 3);
  EXPECT_EQ(ldpBits(1.2f), 8);
  EXPECT_EQ(ldpBits(1e30f), 8);
  EXPECT_EQ(ldpBits(INFINITY), 8);
  EXPECT_EQ(ldpBits(-INFINITY), 3);
  EXPECT_EQ(ldpBits(NAN), 3);
  // Other bounds.
  EXPECT_EQ(ldpBits(0.5f, 2, 4), 3);
  EXPECT_EQ(ldpBits(0.5f, 2, 5), 4); // 3.5 -> 4
  EXPECT_EQ(ldpBits(0.5f, 5, 5), 5);
  EXPECT_EQ(ldpBits(0.5f, 1, 16), 8); // 8.5 -> 8
  // Invalid bounds.
  EXPECT_EQ(ldpBits(0.5f, 0, 8), -1);
  EXPECT_EQ(ldpBits(0.5f, 5, 4), -1);
  EXPECT_EQ(ldpBits(0.5f, 3, 17), -1);
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

TEST(ScheduleTest, Verification) {
  auto message = [](const Schedule &s, int64_t total) {
    Status status = verifySchedule(s, total);
    return status.failed() ? status.message() : std::string("ok");
  };
  EXPECT_EQ(message(Schedule::cpt(3, 8), 64000), "ok");
  EXPECT_EQ(message(Schedule::staticBits(17), 10),
            "static bits 17 out of range [0, 16]");
  EXPECT_EQ(message(Schedule::staticBits(-1), 10),
            "static bits -1 out of range [0, 16]");
  EXPECT_EQ(message(Schedule::cpt(0, 8), 100),
            "min bits 0 out of range [1, 16]");
  EXPECT_EQ(message(Schedule::cpt(3, 17), 100),
            "max bits 17 out of range [1, 16]");
  EXPECT_EQ(message(Schedule::cpt(9, 8), 100),
            "min bits 9 is greater than max bits 8");
  EXPECT_EQ(message(Schedule::learned(9, 8), 100),
            "min bits 9 is greater than max bits 8");
  EXPECT_EQ(message(Schedule::cpt(3, 8, 0), 100),
            "cycles must be at least 1, got 0");
  EXPECT_EQ(message(Schedule::cpt(3, 8), 31),
            "total steps 31 is less than the number of cycles 32 (a period "
            "must be at least one step)");
  EXPECT_EQ(message(Schedule::staticBits(8), 0),
            "total steps must be at least 1, got 0");
  EXPECT_EQ(
      message(Schedule::cyclic(CycleShape::Rex, 3, 8, CycleMode::Triangular),
              100),
      "a triangular rex schedule needs flip=vertical or "
      "flip=horizontal");
  EXPECT_EQ(
      message(Schedule::cyclic(CycleShape::Linear, 3, 8, CycleMode::Triangular,
                               CycleFlip::Vertical),
              100),
      "flip only applies to triangular exponential or rex schedules");
  EXPECT_EQ(
      message(Schedule::cyclic(CycleShape::Exponential, 3, 8,
                               CycleMode::Repeated, CycleFlip::Horizontal),
              100),
      "flip only applies to triangular exponential or rex schedules");
  // min == max is a constant schedule, and fine.
  EXPECT_EQ(message(Schedule::cpt(5, 5), 100), "ok");
  EXPECT_EQ(sample(Schedule::cpt(5, 5), 100, 0, 7, 5),
            (std::vector<int>{5, 5, 5, 5, 5}));
}

TEST(ScheduleTest, InvalidQueriesReturnMinusOne) {
  EXPECT_EQ(scheduleBits(Schedule::cpt(3, 8), -1, 64000), -1);
  EXPECT_EQ(scheduleBits(Schedule::cpt(3, 8), 0, 31), -1);
  EXPECT_EQ(scheduleBits(Schedule::cpt(9, 8), 0, 64000), -1);
  EXPECT_EQ(scheduleBits(Schedule::staticBits(8), 0, 0), -1);
  EXPECT_TRUE(std::isnan(scheduleValue(Schedule::cpt(3, 8, 0), 0, 100)));
  EXPECT_EQ(schedulePeriod(Schedule::cpt(3, 8, 0), 100), 0);
  // Steps past the end continue the pattern.
  EXPECT_EQ(scheduleBits(Schedule::cpt(3, 8), 64000, 64000), 3);
  EXPECT_EQ(scheduleBits(Schedule::cpt(3, 8), 65000, 64000), 6);
}

//===----------------------------------------------------------------------===//
// Parser and printer
//===----------------------------------------------------------------------===//

TEST(ScheduleParserTest, Forms) {
  EXPECT_EQ(parse("fp32"), Schedule::fp32());
  EXPECT_EQ(parse("static:0"), Schedule::fp32());
  EXPECT_EQ(parse("static:8"), Schedule::staticBits(8));
  EXPECT_EQ(parse("static:016"), Schedule::staticBits(16));
  EXPECT_EQ(parse("cpt:3:8"), Schedule::cpt(3, 8, 32));
  EXPECT_EQ(parse("cpt:cosine:3:8"), Schedule::cpt(3, 8, 32));
  EXPECT_EQ(parse("cpt:4:6:cycles=16"), Schedule::cpt(4, 6, 16));
  EXPECT_EQ(parse("ldp"), Schedule::learned(3, 8));
  EXPECT_EQ(parse("ldp:2:6"), Schedule::learned(2, 6));
  EXPECT_EQ(parse("cyclic:linear:3:8"),
            Schedule::cyclic(CycleShape::Linear, 3, 8, CycleMode::Repeated,
                             CycleFlip::None, 8,
                             PeriodConvention::FloorPlusOne));
  EXPECT_EQ(parse("cyclic:exp:3:8:mode=triangular"),
            Schedule::cyclic(CycleShape::Exponential, 3, 8,
                             CycleMode::Triangular, CycleFlip::Vertical));
  EXPECT_EQ(parse("cyclic:exponential:3:8:flip=horizontal:mode=triangular"),
            Schedule::cyclic(CycleShape::Exponential, 3, 8,
                             CycleMode::Triangular, CycleFlip::Horizontal));
  EXPECT_EQ(parse("cyclic:cosine:2:7:period=floor:cycles=32"),
            Schedule::cpt(2, 7, 32));
  EXPECT_EQ(parse("cyclic:rex:3:8:mode=triangular:flip=vertical:cycles=4:"
                  "period=floor_plus_one"),
            Schedule::cyclic(CycleShape::Rex, 3, 8, CycleMode::Triangular,
                             CycleFlip::Vertical, 4));
  EXPECT_EQ(parse("cyclic:rex:3:8:mode=repeated"),
            Schedule::cyclic(CycleShape::Rex, 3, 8));
  EXPECT_EQ(parse("exp-triangular-horizontal:3:8:cycles=12"),
            Schedule::cyclic(CycleShape::Exponential, 3, 8,
                             CycleMode::Triangular, CycleFlip::Horizontal, 12));
  EXPECT_EQ(parse("rex-repeated:1:16"),
            Schedule::cyclic(CycleShape::Rex, 1, 16));
}

TEST(ScheduleParserTest, CanonicalPrinting) {
  const std::pair<const char *, const char *> cases[] = {
      {"fp32", "fp32"},
      {"static:0", "fp32"},
      {"static:08", "static:8"},
      {"cpt:3:8", "cpt:3:8"},
      {"cpt:cosine:3:8:cycles=32", "cpt:3:8"},
      {"cpt:3:8:cycles=16", "cpt:3:8:cycles=16"},
      {"cyclic:cosine:3:8:period=floor", "cpt:3:8:cycles=8"},
      {"cyclic:cosine:3:8", "cosine-repeated:3:8"},
      {"cyclic:cosine:3:8:mode=triangular:cycles=8", "cosine-triangular:3:8"},
      {"cyclic:linear:3:8:cycles=4", "linear-repeated:3:8:cycles=4"},
      {"cyclic:exp:3:8:mode=triangular", "exp-triangular-vertical:3:8"},
      {"cyclic:rex:3:8:flip=horizontal:mode=triangular",
       "rex-triangular-horizontal:3:8"},
      {"cyclic:linear:3:8:period=floor", "cyclic:linear:3:8:period=floor"},
      {"cyclic:exp:2:6:period=floor:cycles=32:flip=horizontal:mode="
       "triangular",
       "cyclic:exponential:2:6:mode=triangular:flip=horizontal:cycles=32:"
       "period=floor"},
      {"cyclic:cosine:3:8:mode=triangular:period=floor",
       "cyclic:cosine:3:8:mode=triangular:period=floor"},
      {"ldp", "ldp:3:8"},
      {"ldp:4:6", "ldp:4:6"},
  };
  for (const auto &[text, canonical] : cases)
    EXPECT_EQ(printSchedule(parse(text)), canonical) << text;
}

TEST(ScheduleParserTest, RoundTripEverySchedule) {
  std::vector<Schedule> schedules = {Schedule::fp32(), Schedule::learned(),
                                     Schedule::learned(1, 16)};
  for (int bits = 0; bits <= 16; ++bits)
    schedules.push_back(Schedule::staticBits(bits));
  const CycleShape shapes[] = {CycleShape::Cosine, CycleShape::Linear,
                               CycleShape::Exponential, CycleShape::Rex};
  const CycleMode modes[] = {CycleMode::Repeated, CycleMode::Triangular};
  const CycleFlip flips[] = {CycleFlip::None, CycleFlip::Vertical,
                             CycleFlip::Horizontal};
  const PeriodConvention periods[] = {PeriodConvention::Floor,
                                      PeriodConvention::FloorPlusOne};
  for (CycleShape shape : shapes)
    for (CycleMode mode : modes)
      for (CycleFlip flip : flips)
        for (PeriodConvention period : periods)
          for (int cycles : {1, 8, 32, 999999999})
            for (auto [lo, hi] :
                 {std::pair{3, 8}, std::pair{1, 16}, std::pair{5, 5}})
              schedules.push_back(
                  Schedule::cyclic(shape, lo, hi, mode, flip, cycles, period));
  int valid = 0;
  for (const Schedule &schedule : schedules) {
    if (verifySchedule(schedule).failed())
      continue;
    ++valid;
    std::string text = printSchedule(schedule);
    Schedule reparsed;
    Status status = parseSchedule(text, reparsed);
    ASSERT_TRUE(status.isOk()) << text << ": " << status.message();
    EXPECT_EQ(reparsed, schedule) << text;
    EXPECT_EQ(printSchedule(reparsed), text);
  }
  // 20 static/learned + 10 shape/mode/flip combinations x 2 periods x 4
  // cycle counts x 3 bounds.
  EXPECT_EQ(valid, 20 + 10 * 2 * 4 * 3);
}

TEST(ScheduleParserTest, ErrorMessages) {
  const std::pair<const char *, const char *> cases[] = {
      {"", "invalid schedule '' at column 1: empty schedule string"},
      {":", "invalid schedule ':' at column 1: missing schedule name (expected "
            "fp32, static, cpt, cyclic, ldp or a named schedule such as "
            "cosine-repeated)"},
      {"foo",
       "invalid schedule 'foo' at column 1: unknown schedule 'foo' "
       "(expected fp32, static, cpt, cyclic, ldp or a named schedule such "
       "as cosine-repeated)"},
      {"FP32",
       "invalid schedule 'FP32' at column 1: unknown schedule 'FP32' "
       "(expected fp32, static, cpt, cyclic, ldp or a named schedule such "
       "as cosine-repeated)"},
      {"fp32:8", "invalid schedule 'fp32:8' at column 6: unexpected '8' "
                 "after 'fp32'"},
      {"static", "invalid schedule 'static' at column 7: missing static bits"},
      {"static:",
       "invalid schedule 'static:' at column 8: missing static bits"},
      {"static:17", "invalid schedule 'static:17' at column 8: static bits "
                    "'17' out of range [0, 16]"},
      {"static:-1",
       "invalid schedule 'static:-1' at column 8: expected a non-negative "
       "integer for static bits, got '-1'"},
      {"static:+3",
       "invalid schedule 'static:+3' at column 8: expected a non-negative "
       "integer for static bits, got '+3'"},
      {"static:8:9", "invalid schedule 'static:8:9' at column 10: "
                     "unexpected '9' after 'static:8'"},
      {"static:99999999999",
       "invalid schedule 'static:99999999999' at column 8: static bits "
       "'99999999999' is too large"},
      {"cpt", "invalid schedule 'cpt' at column 4: missing min bits"},
      {"cpt:3", "invalid schedule 'cpt:3' at column 6: missing max bits"},
      {"cpt:3:", "invalid schedule 'cpt:3:' at column 7: missing max bits"},
      {"cpt::8", "invalid schedule 'cpt::8' at column 5: missing min bits"},
      {"cpt:9:8", "invalid schedule 'cpt:9:8' at column 5: min bits '9' is "
                  "greater than max bits '8'"},
      {"cpt:0:8", "invalid schedule 'cpt:0:8' at column 5: min bits '0' out "
                  "of range [1, 16]"},
      {"cpt:3:17", "invalid schedule 'cpt:3:17' at column 7: max bits '17' "
                   "out of range [1, 16]"},
      {"cpt:3:8:cycles=0",
       "invalid schedule 'cpt:3:8:cycles=0' at column 16: cycles must be at "
       "least 1, got '0'"},
      {"cpt:3:8:cycles=",
       "invalid schedule 'cpt:3:8:cycles=' at column 16: missing cycles"},
      {"cpt:3:8:cycles=x",
       "invalid schedule 'cpt:3:8:cycles=x' at column 16: expected a "
       "non-negative integer for cycles, got 'x'"},
      {"cpt:3:8:cycles=1234567890",
       "invalid schedule 'cpt:3:8:cycles=1234567890' at column 16: cycles "
       "'1234567890' is too large"},
      {"cpt:3:8:mode=triangular",
       "invalid schedule 'cpt:3:8:mode=triangular' at column 9: option "
       "'mode=' is not accepted by cpt schedules (expected cycles=)"},
      {"cpt:3:8:foo=1", "invalid schedule 'cpt:3:8:foo=1' at column 9: "
                        "unknown option 'foo=' (expected cycles=)"},
      {"cpt:3:8:9", "invalid schedule 'cpt:3:8:9' at column 9: unexpected "
                    "'9' (expected an option: cycles=)"},
      {"cpt:3:8:", "invalid schedule 'cpt:3:8:' at column 9: empty option "
                   "(expected cycles=)"},
      {"cpt:3:8:cycles=4:cycles=5",
       "invalid schedule 'cpt:3:8:cycles=4:cycles=5' at column 18: "
       "duplicate option 'cycles='"},
      {"cpt:linear:3:8",
       "invalid schedule 'cpt:linear:3:8' at column 5: cpt schedules are "
       "cosine, got shape 'linear' (use cyclic:linear:MIN:MAX:period=floor)"},
      {"cyclic", "invalid schedule 'cyclic' at column 7: missing shape "
                 "(expected cosine, linear, exponential or rex)"},
      {"cyclic:", "invalid schedule 'cyclic:' at column 8: missing shape "
                  "(expected cosine, linear, exponential or rex)"},
      {"cyclic:cosin:3:8",
       "invalid schedule 'cyclic:cosin:3:8' at column 8: unknown shape "
       "'cosin' (expected cosine, linear, exponential or rex)"},
      {"cyclic:cosine:3:8:mode=tri",
       "invalid schedule 'cyclic:cosine:3:8:mode=tri' at column 24: invalid "
       "mode 'tri' (expected repeated or triangular)"},
      {"cyclic:cosine:3:8:mode=triangular:mode=repeated",
       "invalid schedule 'cyclic:cosine:3:8:mode=triangular:mode=repeated' "
       "at column 35: duplicate option 'mode='"},
      {"cyclic:cosine:3:8:flip=vertical",
       "invalid schedule 'cyclic:cosine:3:8:flip=vertical' at column 19: "
       "option 'flip=vertical' only applies to triangular exponential or "
       "rex schedules"},
      {"cyclic:exp:3:8:flip=vertical",
       "invalid schedule 'cyclic:exp:3:8:flip=vertical' at column 16: option "
       "'flip=vertical' only applies to triangular exponential or rex "
       "schedules"},
      {"cyclic:exp:3:8:mode=triangular:flip=up",
       "invalid schedule 'cyclic:exp:3:8:mode=triangular:flip=up' at column "
       "37: invalid flip 'up' (expected vertical or horizontal)"},
      {"cyclic:rex:3:8:period=ceil",
       "invalid schedule 'cyclic:rex:3:8:period=ceil' at column 23: invalid "
       "period 'ceil' (expected floor or floor_plus_one)"},
      {"cyclic:rex:3:8:period=floor:period=floor",
       "invalid schedule 'cyclic:rex:3:8:period=floor:period=floor' at "
       "column 29: duplicate option 'period='"},
      {"cyclic:linear:3:8:cycles=8=9",
       "invalid schedule 'cyclic:linear:3:8:cycles=8=9' at column 26: "
       "expected a non-negative integer for cycles, got '8=9'"},
      {"cyclic:linear:3:8:color=red",
       "invalid schedule 'cyclic:linear:3:8:color=red' at column 19: unknown "
       "option 'color=' (expected mode=, flip=, cycles= or period=)"},
      {"cosine-repeated:3:8:mode=triangular",
       "invalid schedule 'cosine-repeated:3:8:mode=triangular' at column 21: "
       "option 'mode=' is not accepted by cosine-repeated schedules "
       "(expected cycles=)"},
      {"cosine-repeated:3", "invalid schedule 'cosine-repeated:3' at column "
                            "18: missing max bits"},
      {"ldp:3", "invalid schedule 'ldp:3' at column 6: missing max bits"},
      {"ldp:9:3", "invalid schedule 'ldp:9:3' at column 5: min bits '9' is "
                  "greater than max bits '3'"},
      {"ldp:3:8:cycles=2", "invalid schedule 'ldp:3:8:cycles=2' at column 9: "
                           "unexpected 'cycles=2' after 'ldp:3:8'"},
      {" cpt:3:8",
       "invalid schedule ' cpt:3:8' at column 1: unknown schedule ' cpt' "
       "(expected fp32, static, cpt, cyclic, ldp or a named schedule such "
       "as cosine-repeated)"},
      {"cpt:3:8 ", "invalid schedule 'cpt:3:8 ' at column 7: expected a "
                   "non-negative integer for max bits, got '8 '"},
      {"cpt:3:8\x01", "invalid schedule 'cpt:3:8\\x01' at column 7: expected "
                      "a non-negative integer for max bits, got '8\\x01'"},
      {"cpt:\xff:8", "invalid schedule 'cpt:\\xff:8' at column 5: expected a "
                     "non-negative integer for min bits, got '\\xff'"},
  };
  for (const auto &[text, expected] : cases) {
    Schedule schedule = Schedule::staticBits(7);
    Status status = parseSchedule(text, schedule);
    ASSERT_TRUE(status.failed()) << text;
    EXPECT_EQ(status.message(), expected);
    // A failed parse leaves the output alone.
    EXPECT_EQ(schedule, Schedule::staticBits(7));
  }
}

TEST(ScheduleParserTest, EmbeddedNulAndLongInputs) {
  Schedule schedule;
  std::string withNul("cpt:3:8\0:cycles=2", 17);
  Status status = parseSchedule(withNul, schedule);
  ASSERT_TRUE(status.failed());
  EXPECT_EQ(status.message(),
            "invalid schedule 'cpt:3:8\\x00:cycles=2' at column 7: expected a "
            "non-negative integer for max bits, got '8\\x00'");
  // Long inputs are elided in the message.
  std::string longText = "cpt:3:8:" + std::string(1000, 'x');
  status = parseSchedule(longText, schedule);
  ASSERT_TRUE(status.failed());
  EXPECT_LT(status.message().size(), 300u);
  EXPECT_NE(status.message().find("..."), std::string::npos);
  EXPECT_NE(status.message().find("at column 9"), std::string::npos);
}

TEST(ScheduleParserTest, NeverCrashesOnMutations) {
  // A small deterministic fuzz: every prefix, and single-byte mutations of
  // valid strings, must parse or fail cleanly; successes must round-trip.
  const char *seeds[] = {
      "fp32",
      "static:8",
      "cpt:3:8:cycles=32",
      "ldp:3:8",
      "cyclic:rex:3:8:mode=triangular:flip=horizontal:cycles=4:period=floor",
      "exp-triangular-vertical:2:6:cycles=3"};
  const char alphabet[] = {':', '=', '0', '9', 'a', '-', '\0', '\xff', ' '};
  int parsed = 0, failed = 0;
  for (const char *seed : seeds) {
    std::string text = seed;
    for (size_t cut = 0; cut <= text.size(); ++cut) {
      for (size_t pos = 0; pos <= cut; ++pos) {
        for (char c : alphabet) {
          std::string mutated = text.substr(0, cut);
          if (pos < mutated.size())
            mutated[pos] = c;
          else
            mutated += c;
          Schedule schedule;
          Status status = parseSchedule(mutated, schedule);
          if (status.failed()) {
            ++failed;
            EXPECT_EQ(status.message().rfind("invalid schedule '", 0), 0u);
            continue;
          }
          ++parsed;
          EXPECT_TRUE(verifySchedule(schedule).isOk()) << mutated;
          Schedule again;
          ASSERT_TRUE(parseSchedule(printSchedule(schedule), again).isOk());
          EXPECT_EQ(again, schedule) << mutated;
        }
      }
    }
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(failed, 0);
}

} // namespace

TEST(BitListTest, RangesAndLists) {
  std::vector<int> bits;
  ASSERT_TRUE(parseBitList("3:8", bits).isOk());
  EXPECT_EQ(bits, (std::vector<int>{3, 4, 5, 6, 7, 8}));
  ASSERT_TRUE(parseBitList("8,4,8,16", bits).isOk());
  EXPECT_EQ(bits, (std::vector<int>{8, 4, 16}));
  ASSERT_TRUE(parseBitList("5:5", bits).isOk());
  EXPECT_EQ(bits, (std::vector<int>{5}));
}

TEST(BitListTest, Errors) {
  std::vector<int> bits = {1};
  Status s = parseBitList("9:3", bits);
  ASSERT_TRUE(s.failed());
  EXPECT_EQ(s.message(),
            "invalid bit list '9:3': the range is empty (min > max)");
  s = parseBitList("8,x", bits);
  ASSERT_TRUE(s.failed());
  EXPECT_EQ(s.message(), "invalid bit list '8,x': 'x' is not a bitwidth in "
                         "[1, 16] (write MIN:MAX or B,B,...)");
  for (const char *text :
       {"", "0", "17", "3:", ":8", "3:8:9", "4,,5", "-1", "123"})
    EXPECT_TRUE(parseBitList(text, bits).failed()) << text;
  EXPECT_EQ(bits, (std::vector<int>{1})) << "left unchanged on failure";
}
