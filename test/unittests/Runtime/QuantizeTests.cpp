//===- QuantizeTests.cpp - Tests of the reference fake quantizer ---------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Quantize.h"

#include "gtest/gtest.h"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace qtrain::rt;

namespace {

uint32_t bitsOf(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

std::vector<float> randomTensor(size_t count, float lo, float hi,
                                unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> x(count);
  for (float &v : x)
    v = dist(rng);
  return x;
}

std::vector<float> quantizePerTensor(const std::vector<float> &x, int bits,
                                     Rounding rounding = Rounding::Nearest,
                                     const PhiloxStream *noise = nullptr) {
  std::vector<float> y(x.size());
  Status status =
      fakeQuantPerTensor(x.data(), y.data(), x.size(), bits, rounding, noise);
  EXPECT_TRUE(status.isOk()) << status.message();
  return y;
}

/// The integer level q with y == q * s + mn (computed in that order), or
/// -1 if y is not on the grid.
int64_t levelOf(float y, const QuantGrid &grid) {
  double guess = std::nearbyint((double(y) - grid.min) / grid.scale);
  if (!std::isfinite(guess)) // y = +inf: only the top levels can overflow
    guess = y > 0 ? grid.levels : 0.0;
  guess = std::min(std::max(guess, 0.0), double(grid.levels));
  for (double q = guess - 2; q <= guess + 2; ++q) {
    if (q < 0 || q > grid.levels)
      continue;
    float onGrid = float(q) * grid.scale;
    onGrid = onGrid + grid.min;
    if (bitsOf(onGrid) == bitsOf(y))
      return int64_t(q);
  }
  return -1;
}

TEST(QuantizeTest, Levels) {
  EXPECT_EQ(quantLevels(1), 1.0f);
  EXPECT_EQ(quantLevels(2), 3.0f);
  EXPECT_EQ(quantLevels(8), 255.0f);
  EXPECT_EQ(quantLevels(16), 65535.0f);
  EXPECT_TRUE(verifyQuantBits(0).isOk());
  EXPECT_TRUE(verifyQuantBits(16).isOk());
  EXPECT_EQ(verifyQuantBits(17).message(),
            "quantization bits 17 out of range [0, 16] (0 = full precision)");
  EXPECT_EQ(verifyQuantBits(-1).message(),
            "quantization bits -1 out of range [0, 16] (0 = full precision)");
}

TEST(QuantizeTest, HandComputedNearestWithTies) {
  // mn = -1, mx = 2, b = 2: L = 3, s = 1 exactly, v = x + 1.
  std::vector<float> x = {-1.0f, -0.5f, 0.5f, 1.5f, 2.0f, 0.4f, 0.6f, 0.0f};
  // v = 0, 0.5, 1.5, 2.5, 3, 1.4, 1.6, 1: rint half even -> 0, 0, 2, 2, 3,
  // 1, 2, 1.
  std::vector<float> expected = {-1.0f, -1.0f, 1.0f, 1.0f,
                                 2.0f,  0.0f,  1.0f, 0.0f};
  EXPECT_EQ(quantizePerTensor(x, 2), expected);
}

TEST(QuantizeTest, HandComputedScale) {
  // mn = 0, mx = 1, b = 8: s = float(1 / 255); x = 0.5 -> v = 127.5 in exact
  // arithmetic, but fp32 gives 0.5f / s = 127.49999... or 127.5...: pin the
  // exact fp32 sequence of operations instead of guessing.
  std::vector<float> x = {0.0f, 0.5f, 1.0f, 0.25f};
  std::vector<float> y = quantizePerTensor(x, 8);
  float s = 1.0f / 255.0f;
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[2], 255.0f * s); // the top of the grid, L * s + mn
  float v = 0.5f / s;
  float q = std::nearbyint(v);
  EXPECT_EQ(y[1], q * s);
  EXPECT_EQ(y[3], std::nearbyint(0.25f / s) * s);
}

TEST(QuantizeTest, NearestErrorBoundAndGrid) {
  for (int bits : {1, 2, 3, 4, 5, 8, 12, 16}) {
    for (unsigned seed : {1u, 2u}) {
      std::vector<float> x =
          randomTensor(20000, seed == 1 ? -3.0f : 100.0f,
                       seed == 1 ? 5.0f : 100.5f, seed * 100 + bits);
      std::vector<float> y = quantizePerTensor(x, bits);
      FiniteRange range = finiteRange(x.data(), x.size());
      QuantGrid grid;
      ASSERT_TRUE(makeQuantGrid(range.min, range.max, bits, grid).isOk());
      // fp32 rounding of v and y adds a few ulps of the largest magnitude.
      float magnitude = std::max(std::fabs(range.min), std::fabs(range.max));
      double slack = 4.0 * (std::nextafter(magnitude, INFINITY) - magnitude);
      double bound = double(grid.scale) / 2 * (1 + 1e-6) + slack;
      int64_t lowest = int64_t(grid.levels), highest = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_LE(std::fabs(double(y[i]) - x[i]), bound)
            << "bits " << bits << " x " << x[i] << " y " << y[i];
        int64_t q = levelOf(y[i], grid);
        ASSERT_GE(q, 0) << "off grid: bits " << bits << " y " << y[i];
        lowest = std::min(lowest, q);
        highest = std::max(highest, q);
      }
      // The range's ends map to the grid's ends.
      EXPECT_EQ(lowest, 0);
      EXPECT_EQ(highest, int64_t(grid.levels));
    }
  }
}

TEST(QuantizeTest, StochasticFormulaAndReplay) {
  std::vector<float> x = randomTensor(5000, -2.0f, 3.0f, 5);
  PhiloxStream stream(/*seed=*/1234, /*streamId=*/2, /*step=*/17);
  std::vector<float> y = quantizePerTensor(x, 4, Rounding::Stochastic, &stream);
  FiniteRange range = finiteRange(x.data(), x.size());
  QuantGrid grid;
  ASSERT_TRUE(makeQuantGrid(range.min, range.max, 4, grid).isOk());
  for (size_t i = 0; i < x.size(); ++i) {
    // Element i draws noise index i, and the order of operations is fixed.
    float v = (x[i] - grid.min) / grid.scale;
    v = v + stream.noise(i);
    v = std::min(std::max(v, 0.0f), grid.levels);
    float q = std::nearbyint(v);
    float expected = q * grid.scale;
    expected = expected + grid.min;
    ASSERT_EQ(bitsOf(y[i]), bitsOf(expected)) << i;
    ASSERT_GE(levelOf(y[i], grid), 0);
  }
  // Same (seed, stream, step): identical. Another step: different.
  EXPECT_EQ(quantizePerTensor(x, 4, Rounding::Stochastic, &stream), y);
  PhiloxStream nextStep(1234, 2, 18);
  EXPECT_NE(quantizePerTensor(x, 4, Rounding::Stochastic, &nextStep), y);
  // Chunked evaluation with firstIndex reproduces the whole.
  std::vector<float> chunked(x.size());
  for (size_t start = 0; start < x.size(); start += 333) {
    size_t n = std::min<size_t>(333, x.size() - start);
    ASSERT_TRUE(fakeQuantWithGrid(x.data() + start, chunked.data() + start, n,
                                  grid, Rounding::Stochastic, &stream, start)
                    .isOk());
  }
  EXPECT_EQ(chunked, y);
}

TEST(QuantizeTest, StochasticRoundingIsUnbiased) {
  // 1e6 copies of x = 0.3 on the grid [0, 1] with b = 1 (s = 1): q is 1
  // with probability 0.3. Standard error sqrt(0.21 / 1e6) = 4.6e-4; the
  // tolerance 0.0025 is over 5 standard errors (and nearest rounding, which
  // always gives 0, fails it).
  constexpr size_t kCount = 1000000;
  std::vector<float> x(kCount, 0.3f);
  x[0] = 0.0f;
  x[1] = 1.0f;
  PhiloxStream stream(99, 0, 0);
  std::vector<float> y = quantizePerTensor(x, 1, Rounding::Stochastic, &stream);
  double ones = 0;
  for (size_t i = 2; i < kCount; ++i) {
    ASSERT_TRUE(y[i] == 0.0f || y[i] == 1.0f) << y[i];
    ones += y[i];
  }
  EXPECT_NEAR(ones / (kCount - 2), 0.3, 0.0025);

  // Random x over a 4-bit grid: mean error E[y - x] within 0.002 * s
  // (standard error of the mean is at most s / 2 / 1000).
  std::vector<float> r = randomTensor(kCount, -1.0f, 1.0f, 77);
  r[0] = -1.0f;
  r[1] = 1.0f;
  std::vector<float> yr =
      quantizePerTensor(r, 4, Rounding::Stochastic, &stream);
  double error = 0;
  for (size_t i = 0; i < kCount; ++i)
    error += double(yr[i]) - r[i];
  float s = (1.0f - -1.0f) / 15.0f;
  EXPECT_NEAR(error / kCount, 0.0, 0.002 * s);
  // Nearest rounding of the same data has a deterministic, much smaller
  // spread per element but is biased for x = 0.3: check the contrast.
  EXPECT_EQ(quantizePerTensor(x, 1)[5], 0.0f);
}

TEST(QuantizeTest, StochasticNeedsNoise) {
  std::vector<float> x = {1.0f, 2.0f}, y(2);
  Status status =
      fakeQuantPerTensor(x.data(), y.data(), 2, 8, Rounding::Stochastic);
  ASSERT_TRUE(status.failed());
  EXPECT_EQ(status.message(), "stochastic rounding needs a noise stream");
  // Not needed for b = 0.
  EXPECT_TRUE(fakeQuantPerTensor(x.data(), y.data(), 2, 0, Rounding::Stochastic)
                  .isOk());
}

//===----------------------------------------------------------------------===//
// Policies
//===----------------------------------------------------------------------===//

TEST(QuantizePolicyTest, ZeroBitsIsIdentity) {
  std::vector<float> x = {1.234567f, -1e30f, NAN, INFINITY, -0.0f, 1e-40f};
  std::vector<float> y = quantizePerTensor(x, 0);
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(bitsOf(y[i]), bitsOf(x[i])) << i;
}

TEST(QuantizePolicyTest, BitsOutOfRange) {
  std::vector<float> x = {1.0f}, y = {7.0f};
  for (int bits : {-1, 17, 32}) {
    Status status =
        fakeQuantPerTensor(x.data(), y.data(), 1, bits, Rounding::Nearest);
    ASSERT_TRUE(status.failed());
    EXPECT_EQ(status.message(), "quantization bits " + std::to_string(bits) +
                                    " out of range [0, 16] (0 = full "
                                    "precision)");
    EXPECT_EQ(y[0], 7.0f); // nothing written
  }
}

TEST(QuantizePolicyTest, NanAndInfinities) {
  // Range over finite elements only: mn = -1, mx = 2, b = 2, s = 1.
  std::vector<float> x = {-1.0f, 2.0f, NAN, INFINITY, -INFINITY, 0.4f};
  std::vector<float> y = quantizePerTensor(x, 2);
  EXPECT_EQ(y[0], -1.0f);
  EXPECT_EQ(y[1], 2.0f);
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_EQ(y[3], 2.0f);  // +inf -> q = L
  EXPECT_EQ(y[4], -1.0f); // -inf -> q = 0
  EXPECT_EQ(y[5], 0.0f);
  // Same with noise: NaN stays NaN, infinities stay at the ends.
  PhiloxStream stream(5, 0, 0);
  std::vector<float> z = quantizePerTensor(x, 2, Rounding::Stochastic, &stream);
  EXPECT_TRUE(std::isnan(z[2]));
  EXPECT_EQ(z[3], 2.0f);
  EXPECT_EQ(z[4], -1.0f);
}

TEST(QuantizePolicyTest, NoFiniteElement) {
  // mn = mx = 0, s = 1e-8f: NaN stays, infinities go to 0 and L * 1e-8f.
  std::vector<float> x = {NAN, INFINITY, -INFINITY};
  std::vector<float> y = quantizePerTensor(x, 8);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 255.0f * 1e-8f);
  EXPECT_EQ(y[2], 0.0f);
  FiniteRange range = finiteRange(x.data(), x.size());
  EXPECT_FALSE(range.hasFinite);
  EXPECT_EQ(range.min, 0.0f);
  EXPECT_EQ(range.max, 0.0f);
  // Empty tensors are fine.
  EXPECT_TRUE(
      fakeQuantPerTensor(nullptr, nullptr, 0, 8, Rounding::Nearest).isOk());
}

TEST(QuantizePolicyTest, ConstantTensor) {
  for (float c : {0.0f, 3.75f, -1e30f, 1e-30f}) {
    std::vector<float> x(100, c);
    x[7] = NAN;
    QuantGrid grid;
    ASSERT_TRUE(makeQuantGrid(c, c, 8, grid).isOk());
    EXPECT_EQ(grid.scale, kMinQuantScale);
    std::vector<float> y = quantizePerTensor(x, 8);
    PhiloxStream stream(11, 0, 0);
    std::vector<float> z =
        quantizePerTensor(x, 8, Rounding::Stochastic, &stream);
    for (size_t i = 0; i < x.size(); ++i) {
      if (i == 7) {
        EXPECT_TRUE(std::isnan(y[i]) && std::isnan(z[i]));
        continue;
      }
      ASSERT_EQ(y[i], c);
      ASSERT_EQ(z[i], c);
    }
  }
}

TEST(QuantizePolicyTest, SignedZerosDoNotMatter) {
  // Whether +0 or -0 becomes the range's end never changes y.
  std::vector<float> a = {-0.0f, 0.0f, 1.0f, 0.5f};
  std::vector<float> b = {0.0f, -0.0f, 1.0f, 0.5f};
  std::vector<float> ya = quantizePerTensor(a, 3);
  std::vector<float> yb = quantizePerTensor(b, 3);
  EXPECT_EQ(bitsOf(ya[0]), bitsOf(yb[1]));
  EXPECT_EQ(bitsOf(ya[1]), bitsOf(yb[0]));
  EXPECT_EQ(bitsOf(ya[0]), bitsOf(0.0f));
  EXPECT_EQ(bitsOf(ya[1]), bitsOf(0.0f));
  EXPECT_EQ(ya[2], yb[2]);
  EXPECT_EQ(ya[3], yb[3]);
  // All-negative data whose max is a zero.
  std::vector<float> c = {-1.0f, -0.0f, 0.0f};
  std::vector<float> d = {-1.0f, 0.0f, -0.0f};
  std::vector<float> yc = quantizePerTensor(c, 2);
  std::vector<float> yd = quantizePerTensor(d, 2);
  EXPECT_EQ(bitsOf(yc[1]), bitsOf(yd[2]));
  EXPECT_EQ(bitsOf(yc[2]), bitsOf(yd[1]));
}

TEST(QuantizePolicyTest, TinyRangeUsesMinimumScale) {
  // mx - mn = 1e-7 with 8 bits would give s = 3.9e-10 < 1e-8.
  QuantGrid grid;
  ASSERT_TRUE(makeQuantGrid(1.0f, 1.0f + 1.1920929e-07f, 8, grid).isOk());
  EXPECT_EQ(grid.scale, 1e-8f);
  EXPECT_EQ(grid.min, 1.0f);
  EXPECT_EQ(grid.levels, 255.0f);
}

TEST(QuantizePolicyTest, RangeOverflow) {
  // mx - mn overflows: s = mx / L - mn / L, no NaN for finite input.
  std::vector<float> x = {-FLT_MAX, FLT_MAX, 0.0f,     1.0f,
                          -3e38f,   3e38f,   INFINITY, -INFINITY};
  for (int bits : {2, 8, 16}) {
    QuantGrid grid;
    ASSERT_TRUE(makeQuantGrid(-FLT_MAX, FLT_MAX, bits, grid).isOk());
    float levels = quantLevels(bits);
    EXPECT_EQ(grid.scale, FLT_MAX / levels - -FLT_MAX / levels);
    EXPECT_TRUE(std::isfinite(grid.scale));
    std::vector<float> y = quantizePerTensor(x, bits);
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_FALSE(std::isnan(y[i])) << bits << " " << i;
      ASSERT_GE(levelOf(y[i], grid), 0) << bits << " " << i;
    }
    EXPECT_EQ(y[0], -FLT_MAX);
    // The top grid points lie beyond FLT_MAX: y = q * s + mn overflows.
    EXPECT_EQ(y[1], INFINITY);
  }
  // b = 1: even mx / 1 - mn / 1 overflows, so s = FLT_MAX.
  QuantGrid grid;
  ASSERT_TRUE(makeQuantGrid(-FLT_MAX, FLT_MAX, 1, grid).isOk());
  EXPECT_EQ(grid.scale, FLT_MAX);
  std::vector<float> y = quantizePerTensor(x, 1);
  for (float v : y)
    EXPECT_TRUE(v == -FLT_MAX || v == 0.0f) << v; // {mn, s + mn}
}

TEST(QuantizePolicyTest, OneBitHasTwoLevels) {
  std::vector<float> x = randomTensor(1000, -3.0f, 1.0f, 9);
  x[0] = -3.0f;
  x[1] = 1.0f;
  std::vector<float> y = quantizePerTensor(x, 1);
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_TRUE(y[i] == -3.0f || y[i] == 1.0f) << y[i]; // s = 4 exactly
    ASSERT_EQ(y[i], x[i] < -1.0f ? -3.0f : 1.0f) << x[i];
  }
  // x = -1 is the midpoint: v = 0.5 rounds to the even level 0.
  std::vector<float> mid = {-3.0f, 1.0f, -1.0f};
  EXPECT_EQ(quantizePerTensor(mid, 1)[2], -3.0f);
}

TEST(QuantizePolicyTest, SixteenBits) {
  // mn = 0, mx = 65535: s = 1, integers are exact, halves tie to even.
  std::vector<float> x = {0.0f, 65535.0f, 1234.0f, 2.5f,
                          3.5f, 65534.5f, 70000.0f};
  x.pop_back(); // keep the range at [0, 65535]
  std::vector<float> y = quantizePerTensor(x, 16);
  std::vector<float> expected = {0.0f, 65535.0f, 1234.0f, 2.0f, 4.0f, 65534.0f};
  EXPECT_EQ(y, expected);
  QuantGrid grid;
  ASSERT_TRUE(makeQuantGrid(0.0f, 65535.0f, 16, grid).isOk());
  EXPECT_EQ(grid.scale, 1.0f);
  EXPECT_EQ(grid.levels, 65535.0f);
}

TEST(QuantizePolicyTest, ExplicitRange) {
  // Values outside the given range clamp to its ends.
  std::vector<float> x = {-5.0f, -1.0f, 0.6f, 2.0f, 9.0f, NAN}, y(6);
  ASSERT_TRUE(fakeQuantWithRange(x.data(), y.data(), 6, 2, -1.0f, 2.0f,
                                 Rounding::Nearest)
                  .isOk());
  EXPECT_EQ(y[0], -1.0f);
  EXPECT_EQ(y[1], -1.0f);
  EXPECT_EQ(y[2], 1.0f);
  EXPECT_EQ(y[3], 2.0f);
  EXPECT_EQ(y[4], 2.0f);
  EXPECT_TRUE(std::isnan(y[5]));
  // Errors.
  EXPECT_EQ(fakeQuantWithRange(x.data(), y.data(), 6, 2, 2.0f, -1.0f,
                               Rounding::Nearest)
                .message(),
            "quantization range min 2.000000 is greater than max -1.000000");
  EXPECT_EQ(
      fakeQuantWithRange(x.data(), y.data(), 6, 2, NAN, 1.0f, Rounding::Nearest)
          .message(),
      "quantization range must be finite");
  EXPECT_EQ(fakeQuantWithRange(x.data(), y.data(), 6, 2, 0.0f, INFINITY,
                               Rounding::Nearest)
                .message(),
            "quantization range must be finite");
  QuantGrid grid;
  EXPECT_EQ(makeQuantGrid(0.0f, 1.0f, 0, grid).message(),
            "a quantization grid needs bits in [1, 16], got 0");
  EXPECT_EQ(makeQuantGridFromRange(0.0f, -1.0f, 8, grid).message(),
            "quantization range -1.000000 is negative");
  // b = 0 ignores the range entirely.
  EXPECT_TRUE(fakeQuantWithRange(x.data(), y.data(), 6, 0, 2.0f, -1.0f,
                                 Rounding::Nearest)
                  .isOk());
  // Invalid grids are refused.
  QuantGrid bad{0.0f, 0.0f, 255.0f};
  EXPECT_EQ(
      fakeQuantWithGrid(x.data(), y.data(), 6, bad, Rounding::Nearest, nullptr)
          .message(),
      "invalid quantization grid");
}

//===----------------------------------------------------------------------===//
// Per channel
//===----------------------------------------------------------------------===//

TEST(QuantizePerChannelTest, MatchesPerTensorOnEachSlice) {
  const std::vector<int64_t> shape = {3, 4, 5};
  std::vector<float> x = randomTensor(60, -1.0f, 1.0f, 21);
  // Give each slice of every axis a distinct range.
  for (size_t i = 0; i < x.size(); ++i)
    x[i] *= float(1 + i % 7);
  x[13] = NAN;
  x[22] = INFINITY;
  PhiloxStream stream(3, 1, 4);
  for (int axis : {0, 1, 2, -1, -3}) {
    int a = axis < 0 ? axis + 3 : axis;
    int64_t strides[3] = {20, 5, 1};
    for (Rounding rounding : {Rounding::Nearest, Rounding::Stochastic}) {
      std::vector<float> y(x.size());
      ASSERT_TRUE(fakeQuantPerChannel(x.data(), y.data(), shape, axis, 3,
                                      rounding, &stream)
                      .isOk());
      for (int64_t c = 0; c < shape[a]; ++c) {
        // Gather the slice, with the flat indices of its elements.
        std::vector<float> slice;
        std::vector<size_t> flat;
        for (int64_t i = 0; i < 3; ++i)
          for (int64_t j = 0; j < 4; ++j)
            for (int64_t k = 0; k < 5; ++k) {
              int64_t index[3] = {i, j, k};
              if (index[a] != c)
                continue;
              flat.push_back(
                  size_t(i * strides[0] + j * strides[1] + k * strides[2]));
              slice.push_back(x[flat.back()]);
            }
        FiniteRange range = finiteRange(slice.data(), slice.size());
        QuantGrid grid;
        ASSERT_TRUE(makeQuantGrid(range.min, range.max, 3, grid).isOk());
        for (size_t e = 0; e < slice.size(); ++e) {
          // Noise comes from the element's flat index in the whole tensor.
          float expected =
              rounding == Rounding::Nearest
                  ? fakeQuantNearest(slice[e], grid)
                  : fakeQuantStochastic(slice[e], grid, stream.noise(flat[e]));
          ASSERT_EQ(bitsOf(y[flat[e]]), bitsOf(expected))
              << "axis " << axis << " channel " << c << " flat " << flat[e];
        }
      }
    }
  }
}

TEST(QuantizePerChannelTest, WeightsPerOutputChannel) {
  // A [2, 3] weight: row 0 in [0, 3], row 1 in [10, 13]; b = 2, s = 1.
  std::vector<float> w = {0.0f, 1.4f, 3.0f, 10.0f, 12.5f, 13.0f};
  std::vector<float> y(6);
  ASSERT_TRUE(
      fakeQuantPerChannel(w.data(), y.data(), {2, 3}, 0, 2, Rounding::Nearest)
          .isOk());
  EXPECT_EQ(y, (std::vector<float>{0.0f, 1.0f, 3.0f, 10.0f, 12.0f, 13.0f}));
  // Per tensor the same data has s = 13 / 3 and loses row 0 entirely.
  std::vector<float> t = quantizePerTensor(w, 2);
  EXPECT_EQ(t[1], 0.0f);
  // In place.
  ASSERT_TRUE(
      fakeQuantPerChannel(w.data(), w.data(), {2, 3}, 0, 2, Rounding::Nearest)
          .isOk());
  EXPECT_EQ(w, y);
}

TEST(QuantizePerChannelTest, Errors) {
  std::vector<float> x(6, 1.0f), y(6);
  EXPECT_EQ(
      fakeQuantPerChannel(x.data(), y.data(), {2, 3}, 2, 8, Rounding::Nearest)
          .message(),
      "channel axis 2 out of range for rank 2");
  EXPECT_EQ(
      fakeQuantPerChannel(x.data(), y.data(), {2, 3}, -3, 8, Rounding::Nearest)
          .message(),
      "channel axis -3 out of range for rank 2");
  EXPECT_EQ(fakeQuantPerChannel(x.data(), y.data(), {}, 0, 8, Rounding::Nearest)
                .message(),
            "per-channel quantization needs a tensor of rank >= 1");
  EXPECT_EQ(
      fakeQuantPerChannel(x.data(), y.data(), {2, -3}, 0, 8, Rounding::Nearest)
          .message(),
      "negative dimension -3 in shape");
  EXPECT_EQ(fakeQuantPerChannel(x.data(), y.data(), {2, 3}, 0, 8,
                                Rounding::Stochastic)
                .message(),
            "stochastic rounding needs a noise stream");
  EXPECT_EQ(
      fakeQuantPerChannel(x.data(), y.data(), {2, 3}, 0, 20, Rounding::Nearest)
          .message(),
      "quantization bits 20 out of range [0, 16] (0 = full precision)");
  EXPECT_EQ(fakeQuantPerChannel(x.data(), y.data(),
                                {int64_t(1) << 40, int64_t(1) << 40}, 0, 8,
                                Rounding::Nearest)
                .message(),
            "tensor too large");
  // Empty tensors and b = 0 are fine.
  EXPECT_TRUE(
      fakeQuantPerChannel(nullptr, nullptr, {0, 3}, 1, 8, Rounding::Nearest)
          .isOk());
  EXPECT_TRUE(
      fakeQuantPerChannel(x.data(), y.data(), {2, 3}, 1, 0, Rounding::Nearest)
          .isOk());
  EXPECT_EQ(y, x);
}

//===----------------------------------------------------------------------===//
// EMA
//===----------------------------------------------------------------------===//

TEST(RangeEmaTest, UpdatesLikeCpt) {
  // float(1.0 - 0.9) is PyTorch's 0.1f, not 1.0f - 0.9f.
  EXPECT_EQ(float(1.0 - 0.9), 0.1f);
  EXPECT_NE(1.0f - 0.9f, 0.1f);
  RangeEma ema;
  EXPECT_EQ(ema.getMin(), 0.0f);
  EXPECT_EQ(ema.getRange(), 0.0f);
  ema.update(-2.0f, 6.0f); // range 8
  float min1 = 0.0f * 0.9f + -2.0f * 0.1f;
  float range1 = 0.0f * 0.9f + 8.0f * 0.1f;
  EXPECT_EQ(ema.getMin(), min1);
  EXPECT_EQ(ema.getRange(), range1);
  std::vector<float> batch = {-4.0f, NAN, 0.0f, 4.0f, -INFINITY}; // range 8
  ema.update(batch.data(), batch.size());
  float min2 = min1 * 0.9f;
  min2 = min2 + -4.0f * 0.1f;
  float range2 = range1 * 0.9f;
  range2 = range2 + 8.0f * 0.1f;
  EXPECT_EQ(ema.getMin(), min2);
  EXPECT_EQ(ema.getRange(), range2);
  // Converges to the batch statistics.
  for (int i = 0; i < 400; ++i)
    ema.update(-4.0f, 4.0f);
  EXPECT_NEAR(ema.getMin(), -4.0f, 1e-5);
  EXPECT_NEAR(ema.getRange(), 8.0f, 1e-5);
}

TEST(RangeEmaTest, EvaluationGrid) {
  RangeEma ema(0.5);
  ema.update(-1.0f, 5.0f); // min -0.5, range 3
  EXPECT_EQ(ema.getMin(), -0.5f);
  EXPECT_EQ(ema.getRange(), 3.0f);
  QuantGrid grid;
  ASSERT_TRUE(ema.grid(2, grid).isOk());
  EXPECT_EQ(grid.min, -0.5f);
  EXPECT_EQ(grid.scale, 1.0f); // max(3 / 3, 1e-8)
  std::vector<float> x = {-3.0f, 0.0f, 0.6f, 9.0f}, y(4);
  ASSERT_TRUE(
      ema.fakeQuant(x.data(), y.data(), 4, 2, Rounding::Nearest).isOk());
  EXPECT_EQ(y, (std::vector<float>{-0.5f, -0.5f, 0.5f, 2.5f}));
  ASSERT_TRUE(
      ema.fakeQuant(x.data(), y.data(), 4, 0, Rounding::Nearest).isOk());
  EXPECT_EQ(y, x);
  // A fresh EMA has range 0: the minimum scale.
  RangeEma fresh;
  ASSERT_TRUE(fresh.grid(8, grid).isOk());
  EXPECT_EQ(grid.scale, kMinQuantScale);
}

} // namespace

// The grid index is the integer fakeQuantNearest dequantizes: q * s + mn
// (two fp32 roundings) reproduces it bit for bit, at every width.
TEST(QuantizeTest, IndexDequantizesToFakeQuant) {
  std::mt19937 gen(5);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (int bits = 1; bits <= kMaxQuantBits; ++bits) {
    QuantGrid grid;
    ASSERT_FALSE(makeQuantGrid(-4.0f, 5.5f, bits, grid).failed());
    for (int i = 0; i < 1000; ++i) {
      float x = normal(gen);
      int q = quantIndexNearest(x, grid);
      ASSERT_GE(q, 0);
      ASSERT_LE(q, (1 << bits) - 1);
      float y = float(q) * grid.scale;
      y = y + grid.min;
      ASSERT_EQ(y, fakeQuantNearest(x, grid)) << "bits " << bits << " x " << x;
    }
  }
  QuantGrid grid;
  ASSERT_FALSE(makeQuantGrid(-1.0f, 1.0f, 8, grid).failed());
  EXPECT_EQ(quantIndexNearest(-INFINITY, grid), 0);
  EXPECT_EQ(quantIndexNearest(INFINITY, grid), 255);
  EXPECT_EQ(quantIndexNearest(NAN, grid), 0);
}
