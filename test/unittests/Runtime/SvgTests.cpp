//===- SvgTests.cpp - Tests of qtrain-run's charts ------------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "../../../runtime/tools/qtrain-run/Svg.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

using namespace qtrain::run;

namespace {

TEST(ChartTicksTest, RoundStepsCoverTheRange) {
  EXPECT_EQ(chartTicks(0, 10), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(chartTicks(-1, 1), (std::vector<double>{-1, -0.5, 0, 0.5, 1}));
  EXPECT_EQ(chartTicks(2.3, 2.31).size(), 3u); // 2.3, 2.305, 2.31
  EXPECT_EQ(chartTicks(3, 3), (std::vector<double>{3}));
}

TEST(ChartTicksTest, RangesBelowTheValuesResolutionGetTheirEnds) {
  // A constant loss of 3e15 widened by 0.5: the step (0.2) is below the
  // values' ulp (0.5), which once stalled the tick loop and grew memory
  // without bound (a diverged run's plots).
  std::vector<double> t = chartTicks(3e15 - 0.5, 3e15 + 0.5);
  EXPECT_LE(t.size(), 21u);
  EXPECT_EQ(t.front(), 3e15 - 0.5);
  double big = 5.6096531e27;
  EXPECT_LE(chartTicks(big, std::nextafter(big, 1e30)).size(), 21u);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(chartTicks(-inf, inf).size(), 1u);
  EXPECT_EQ(chartTicks(-1e308, 1e308).size(), 1u);
  EXPECT_EQ(chartTicks(0, std::nan("")).size(), 1u);
  // A step above the values' ulp whose tick indices are past 2^53, where
  // counting them in doubles stalled (found against the stand-in driver:
  // std::bad_alloc in a plot of garbage losses).
  std::vector<double> far =
      chartTicks(-2.3584615464698604e+178, -2.3584615464698597e+178);
  EXPECT_LE(far.size(), 21u);
  EXPECT_EQ(far.front(), -2.3584615464698604e+178);
}

TEST(SvgTest, AConstantHugeSeriesHasFiniteCoordinates) {
  Chart chart;
  chart.title = "loss";
  Series s;
  s.name = "train";
  s.color = "#000";
  for (int i = 0; i < 10; ++i)
    s.points.push_back({double(i), 3e15});
  chart.series.push_back(s);
  std::string path = ::testing::TempDir() + "qtrain-svg-test.svg";
  ASSERT_TRUE(writeSvg(path, chart));
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str().find("nan"), std::string::npos);
  EXPECT_LT(text.str().size(), 100000u);
  std::remove(path.c_str());
}

} // namespace
