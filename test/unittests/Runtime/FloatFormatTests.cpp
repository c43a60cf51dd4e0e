//===- FloatFormatTests.cpp - Tests of FP(e, m, bias) rounding -----------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/FloatFormat.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
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

float floatOf(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

/// Bit-identical comparison (distinguishes -0 from +0).
#define EXPECT_SAME_FLOAT(a, b)                                                \
  EXPECT_EQ(bitsOf(a), bitsOf(b)) << (a) << " vs " << (b)

const FloatFormat kFp434{4, 3, 4};
const FloatFormat kFp520{5, 2, 0};
const FloatFormat kFp690{6, 9, 0};

TEST(FloatFormatTest, DerivedValuesOfThePaperFormats) {
  // FP(4,3,4): bias 11, top binade 2^4, max 1.875 * 16 = 30.
  EXPECT_EQ(kFp434.bias(), 11);
  EXPECT_EQ(kFp434.totalBits(), 8);
  EXPECT_FALSE(kFp434.hasInfNan());
  EXPECT_EQ(kFp434.maxExponent(), 4);
  EXPECT_EQ(kFp434.minExponent(), -10);
  EXPECT_EQ(kFp434.maxFinite(), 30.0);
  EXPECT_EQ(kFp434.overflowThreshold(), 31.0);
  EXPECT_EQ(kFp434.minNormal(), std::ldexp(1.0, -10));
  EXPECT_EQ(kFp434.minSubnormal(), std::ldexp(1.0, -13));
  EXPECT_EQ(kFp434.underflowThreshold(), std::ldexp(1.0, -14));

  // FP(5,2,0): bias 15, top binade 2^16, max 1.75 * 65536 = 114688.
  EXPECT_EQ(kFp520.bias(), 15);
  EXPECT_EQ(kFp520.maxFinite(), 114688.0);
  EXPECT_EQ(kFp520.overflowThreshold(), 122880.0);
  EXPECT_EQ(kFp520.minSubnormal(), std::ldexp(1.0, -16));
  EXPECT_EQ(kFp520.underflowThreshold(), std::ldexp(1.0, -17));

  // FP(6,9,0), the 16-bit "high" format: bias 31, top binade 2^32.
  EXPECT_EQ(kFp690.totalBits(), 16);
  EXPECT_EQ(kFp690.maxFinite(), (2.0 - std::ldexp(1.0, -9)) * 4294967296.0);
  EXPECT_EQ(kFp690.minSubnormal(), std::ldexp(1.0, -39));

  // e = 8 reserves the top exponent field: fp32 and bf16.
  FloatFormat fp32 = FloatFormat::fp32();
  EXPECT_TRUE(fp32.hasInfNan());
  EXPECT_EQ(fp32.bias(), 127);
  EXPECT_EQ(fp32.maxFinite(), double(FLT_MAX));
  EXPECT_EQ(fp32.minNormal(), double(FLT_MIN));
  EXPECT_EQ(fp32.minSubnormal(), std::ldexp(1.0, -149));
  EXPECT_EQ(FloatFormat::bf16().maxFinite(), double(floatOf(0x7f7f0000u)));
  EXPECT_EQ(FloatFormat::bf16().toString(), "FP(8,7,0)");
  EXPECT_EQ(kFp434.toString(), "FP(4,3,4)");
}

TEST(FloatFormatTest, Verification) {
  auto message = [](FloatFormat f) {
    Status status = f.verify();
    return status.failed() ? status.message() : std::string("ok");
  };
  EXPECT_EQ(message(kFp434), "ok");
  EXPECT_EQ(message({1, 0, 0}), "ok");
  EXPECT_EQ(message({8, 23, 0}), "ok");
  EXPECT_EQ(message({0, 3, 0}),
            "exponent bits 0 out of range [1, 8] in FP(0,3,0)");
  EXPECT_EQ(message({9, 3, 0}),
            "exponent bits 9 out of range [1, 8] in FP(9,3,0)");
  EXPECT_EQ(message({5, 24, 0}),
            "mantissa bits 24 out of range [0, 23] in FP(5,24,0)");
  EXPECT_EQ(message({5, -1, 0}),
            "mantissa bits -1 out of range [0, 23] in FP(5,-1,0)");
  EXPECT_EQ(message({8, 23, -1}),
            "largest values of FP(8,23,-1) exceed fp32's range (max exponent "
            "128 > 127)");
  EXPECT_EQ(message({8, 23, 1}),
            "smallest subnormal of FP(8,23,1) is below fp32's (2^-150 < "
            "2^-149)");
  EXPECT_EQ(message({7, 2, -100}),
            "largest values of FP(7,2,-100) exceed fp32's range (max "
            "exponent 164 > 127)");
  EXPECT_EQ(message({4, 3, 5000}),
            "extra bias 5000 out of range in FP(4,3,5000)");
  // Negative extra bias within range is fine: FP(5,2,-10) tops at 2^26.
  EXPECT_EQ(message({5, 2, -10}), "ok");
  // An invalid format rounds to NaN and the array form writes nothing.
  EXPECT_TRUE(std::isnan(roundToFormat(1.0f, {9, 3, 0}, Overflow::Infinity)));
  float in[2] = {1.0f, 2.0f}, out[2] = {5.0f, 5.0f};
  EXPECT_TRUE(
      roundToFormat(in, out, 2, {0, 0, 0}, Overflow::Saturate).failed());
  EXPECT_EQ(out[0], 5.0f);
}

TEST(FloatFormatTest, ThresholdsOfFp434) {
  const float below31 = std::nextafter(31.0f, 0.0f);
  EXPECT_EQ(roundToFormat(30.0f, kFp434, Overflow::Infinity), 30.0f);
  EXPECT_EQ(roundToFormat(below31, kFp434, Overflow::Infinity), 30.0f);
  EXPECT_EQ(roundToFormat(31.0f, kFp434, Overflow::Infinity), INFINITY);
  EXPECT_EQ(roundToFormat(31.0f, kFp434, Overflow::Saturate), 30.0f);
  EXPECT_EQ(roundToFormat(-31.0f, kFp434, Overflow::Infinity), -INFINITY);
  EXPECT_EQ(roundToFormat(-31.0f, kFp434, Overflow::Saturate), -30.0f);
  EXPECT_EQ(roundToFormat(1e30f, kFp434, Overflow::Saturate), 30.0f);
  // Top binade spacing is 2: 29 is a tie between 28 and 30 -> 28 (even).
  EXPECT_EQ(roundToFormat(29.0f, kFp434, Overflow::Infinity), 28.0f);
  EXPECT_EQ(roundToFormat(27.0f, kFp434, Overflow::Infinity), 28.0f);

  const float sub = std::ldexp(1.0f, -13); // min subnormal
  EXPECT_SAME_FLOAT(
      roundToFormat(std::ldexp(1.0f, -14), kFp434, Overflow::Infinity), 0.0f);
  EXPECT_SAME_FLOAT(
      roundToFormat(-std::ldexp(1.0f, -14), kFp434, Overflow::Infinity), -0.0f);
  EXPECT_EQ(roundToFormat(std::nextafter(std::ldexp(1.0f, -14), 1.0f), kFp434,
                          Overflow::Infinity),
            sub);
  // Subnormal ties: 2.5 and 3.5 units go to 2 and 4 units.
  EXPECT_EQ(roundToFormat(2.5f * sub, kFp434, Overflow::Infinity), 2 * sub);
  EXPECT_EQ(roundToFormat(3.5f * sub, kFp434, Overflow::Infinity), 4 * sub);
  EXPECT_EQ(roundToFormat(3.0f * sub, kFp434, Overflow::Infinity), 3 * sub);
  // 7.5 units rounds up into the first normal binade (8 units = 2^-10).
  EXPECT_EQ(roundToFormat(7.5f * sub, kFp434, Overflow::Infinity),
            std::ldexp(1.0f, -10));
}

TEST(FloatFormatTest, ThresholdsOfFp520) {
  EXPECT_EQ(roundToFormat(114688.0f, kFp520, Overflow::Infinity), 114688.0f);
  EXPECT_EQ(roundToFormat(std::nextafter(122880.0f, 0.0f), kFp520,
                          Overflow::Infinity),
            114688.0f);
  EXPECT_EQ(roundToFormat(122880.0f, kFp520, Overflow::Infinity), INFINITY);
  EXPECT_EQ(roundToFormat(122880.0f, kFp520, Overflow::Saturate), 114688.0f);
  EXPECT_EQ(roundToFormat(std::ldexp(1.0f, -17), kFp520, Overflow::Infinity),
            0.0f);
  EXPECT_EQ(roundToFormat(std::nextafter(std::ldexp(1.0f, -17), 1.0f), kFp520,
                          Overflow::Infinity),
            std::ldexp(1.0f, -16));
  // 1.125 is a tie between 1 and 1.25 -> 1 (even); 1.375 -> 1.5.
  EXPECT_EQ(roundToFormat(1.125f, kFp520, Overflow::Infinity), 1.0f);
  EXPECT_EQ(roundToFormat(1.375f, kFp520, Overflow::Infinity), 1.5f);
}

TEST(FloatFormatTest, SpecialValuePolicy) {
  for (FloatFormat format :
       {kFp434, kFp520, FloatFormat::bf16(), FloatFormat::fp32()}) {
    float maxFinite = float(format.maxFinite());
    for (Overflow overflow : {Overflow::Saturate, Overflow::Infinity}) {
      EXPECT_TRUE(std::isnan(roundToFormat(NAN, format, overflow)));
      EXPECT_TRUE(std::isnan(roundToFormat(-NAN, format, overflow)));
      EXPECT_SAME_FLOAT(roundToFormat(0.0f, format, overflow), 0.0f);
      EXPECT_SAME_FLOAT(roundToFormat(-0.0f, format, overflow), -0.0f);
      EXPECT_SAME_FLOAT(roundToFormat(std::ldexp(1.0f, -149), format, overflow),
                        format == FloatFormat::fp32() ? std::ldexp(1.0f, -149)
                                                      : 0.0f);
    }
    EXPECT_EQ(roundToFormat(INFINITY, format, Overflow::Infinity), INFINITY);
    EXPECT_EQ(roundToFormat(-INFINITY, format, Overflow::Infinity), -INFINITY);
    EXPECT_EQ(roundToFormat(INFINITY, format, Overflow::Saturate), maxFinite);
    EXPECT_EQ(roundToFormat(-INFINITY, format, Overflow::Saturate), -maxFinite);
    EXPECT_EQ(roundToFormat(FLT_MAX, format, Overflow::Saturate), maxFinite);
  }
  // The NaN payload is kept.
  float payload = floatOf(0x7fc12345u);
  EXPECT_EQ(bitsOf(roundToFormat(payload, kFp434, Overflow::Saturate)),
            0x7fc12345u);
}

/// An independent reference: every non-negative value of a small format,
/// enumerated from its fields, and nearest-even rounding by search.
class EnumeratedFormat {
public:
  explicit EnumeratedFormat(FloatFormat format) : format(format) {
    int m = format.mantissaBits;
    int fields = (1 << format.exponentBits) - (format.hasInfNan() ? 1 : 0);
    for (int e = 0; e < fields; ++e)
      for (int frac = 0; frac < (1 << m); ++frac)
        values.push_back(
            e == 0
                ? std::ldexp(double(frac), 1 - format.bias() - m)
                : std::ldexp(double((1 << m) + frac), e - format.bias() - m));
  }

  /// Rounds x (finite) to the nearest value, ties to the even code, and
  /// applies the overflow policy. For m = 0 every normal significand is 1
  /// and ties between two normals go to the larger magnitude (the even
  /// multiple of the lower value's quantum), as the header documents.
  float round(float x, Overflow overflow) const {
    double a = std::fabs(double(x));
    double top = values.back();
    // Half the distance to the next binade's first value, 2^(Emax+1), the
    // first value a wider format would have (for m = 0 that is twice the
    // spacing below top).
    double halfUlp =
        std::ldexp(1.0, format.maxExponent() - format.mantissaBits - 1);
    if (a >= top + halfUlp)
      return overflow == Overflow::Saturate ? std::copysign(float(top), x)
                                            : std::copysign(INFINITY, x);
    if (a >= top)
      return std::copysign(float(top), x);
    size_t hi = std::upper_bound(values.begin(), values.end(), a) -
                values.begin(); // values[hi - 1] <= a < values[hi]
    size_t lo = hi - 1;
    double below = a - values[lo], above = values[hi] - a; // exact
    size_t tie = format.mantissaBits == 0 && lo > 0 ? hi : (lo % 2 ? hi : lo);
    size_t pick = below < above ? lo : above < below ? hi : tie;
    return std::copysign(float(values[pick]), x);
  }

  FloatFormat format;
  std::vector<double> values;
};

TEST(FloatFormatTest, MatchesEnumeratedReference) {
  const FloatFormat formats[] = {kFp434,    kFp520,     kFp690,     {1, 0, 0},
                                 {2, 1, 0}, {3, 2, -1}, {5, 10, 0}, {4, 0, 3},
                                 {8, 7, 0}, {8, 3, 5},  {7, 12, 20}};
  std::mt19937 rng(12345);
  for (const FloatFormat &format : formats) {
    ASSERT_TRUE(format.verify().isOk()) << format.toString();
    EnumeratedFormat reference(format);
    const std::vector<double> &values = reference.values;
    ASSERT_EQ(values.front(), 0.0);
    ASSERT_EQ(values.back(), format.maxFinite()) << format.toString();
    ASSERT_EQ(values[1], format.minSubnormal()) << format.toString();
    std::vector<float> probes;
    // Every value, midpoint and the floats next to them (where exact).
    for (size_t i = 0; i + 1 < values.size(); ++i) {
      float v = float(values[i]);
      probes.push_back(v);
      probes.push_back(std::nextafter(v, INFINITY));
      double mid = (values[i] + values[i + 1]) / 2;
      if (double(float(mid)) == mid) {
        probes.push_back(float(mid));
        probes.push_back(std::nextafter(float(mid), 0.0f));
        probes.push_back(std::nextafter(float(mid), INFINITY));
      }
    }
    probes.push_back(float(format.overflowThreshold()));
    probes.push_back(std::nextafter(float(format.overflowThreshold()), 0.0f));
    // Random magnitudes spanning the format's range and beyond.
    std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
    std::uniform_int_distribution<int> exponent(
        std::max(-149, format.minExponent() - format.mantissaBits - 4),
        std::min(127, format.maxExponent() + 2));
    for (int i = 0; i < 20000; ++i)
      probes.push_back(std::ldexp(mantissa(rng), exponent(rng)));
    for (float p : probes) {
      for (float x : {p, -p}) {
        if (!std::isfinite(x))
          continue;
        for (Overflow overflow : {Overflow::Saturate, Overflow::Infinity}) {
          float expected = reference.round(x, overflow);
          float actual = roundToFormat(x, format, overflow);
          ASSERT_EQ(bitsOf(actual), bitsOf(expected))
              << format.toString() << " x = " << x << " (0x" << std::hex
              << bitsOf(x) << ")";
        }
      }
    }
  }
}

/// bf16 round to nearest even by bit manipulation (finite inputs).
float bf16ByBits(float x) {
  uint32_t u = bitsOf(x);
  uint32_t lsb = (u >> 16) & 1u;
  u += 0x7fffu + lsb;
  return floatOf(u & 0xffff0000u);
}

TEST(FloatFormatTest, Bf16MatchesBitManipulation) {
  std::mt19937 rng(777);
  std::uniform_int_distribution<uint32_t> any;
  int checked = 0;
  auto check = [&](uint32_t u) {
    float x = floatOf(u);
    if (!std::isfinite(x))
      return;
    ++checked;
    float expected = bf16ByBits(x); // overflows to inf past bf16's max
    ASSERT_EQ(bitsOf(roundToFormat(x, FloatFormat::bf16(), Overflow::Infinity)),
              bitsOf(expected))
        << std::hex << u;
  };
  for (int i = 0; i < 1000000; ++i)
    check(any(rng));
  // Ties, subnormals, the overflow boundary and signed zeros.
  for (uint32_t u : {0x3f808000u, 0x3f818000u, 0x00008000u, 0x00018000u,
                     0x0000ffffu, 0x00000001u, 0x7f7f7fffu, 0x7f7f8000u,
                     0x7f7fffffu, 0xff7f8000u, 0x80000000u, 0x807fffffu})
    check(u);
  EXPECT_GT(checked, 990000);
}

TEST(FloatFormatTest, Fp32IsIdentity) {
  std::mt19937 rng(4242);
  std::uniform_int_distribution<uint32_t> any;
  for (int i = 0; i < 1000000; ++i) {
    float x = floatOf(any(rng));
    for (Overflow overflow : {Overflow::Saturate, Overflow::Infinity}) {
      float y = roundToFormat(x, FloatFormat::fp32(), overflow);
      if (std::isnan(x)) {
        ASSERT_TRUE(std::isnan(y));
        continue;
      }
      if (std::isinf(x) && overflow == Overflow::Saturate) {
        ASSERT_EQ(y, std::copysign(FLT_MAX, x));
        continue;
      }
      ASSERT_EQ(bitsOf(y), bitsOf(x)) << std::hex << bitsOf(x);
    }
  }
  // Every subnormal and the edges.
  for (uint32_t u = 0; u < 0x00800000u; u += 97)
    ASSERT_EQ(bitsOf(roundToFormat(floatOf(u), FloatFormat::fp32(),
                                   Overflow::Infinity)),
              u);
  EXPECT_EQ(roundToFormat(FLT_MAX, FloatFormat::fp32(), Overflow::Infinity),
            FLT_MAX);
}

#ifdef __FLT16_MAX__
TEST(FloatFormatTest, Fp5_10MatchesHalfWithinHalfRange) {
  // FP(5,10,0) has IEEE half's grid but keeps its top exponent finite, so
  // it agrees with _Float16 wherever half does not overflow (|x| < 65520).
  const FloatFormat fp5_10{5, 10, 0};
  EXPECT_EQ(fp5_10.maxFinite(), 131008.0);
  std::mt19937 rng(99);
  std::uniform_int_distribution<uint32_t> any;
  int checked = 0;
  for (int i = 0; i < 2000000; ++i) {
    float x = floatOf(any(rng));
    if (!std::isfinite(x) || std::fabs(x) >= 65520.0f)
      continue;
    ++checked;
    float expected = float(_Float16(x));
    ASSERT_EQ(bitsOf(roundToFormat(x, fp5_10, Overflow::Infinity)),
              bitsOf(expected))
        << std::hex << bitsOf(x);
  }
  EXPECT_GT(checked, 500000);
  EXPECT_EQ(roundToFormat(65520.0f, fp5_10, Overflow::Infinity), 65536.0f);
  // Top spacing 64: the overflow threshold is 131008 + 32.
  EXPECT_EQ(fp5_10.overflowThreshold(), 131040.0);
  EXPECT_EQ(roundToFormat(131039.0f, fp5_10, Overflow::Infinity), 131008.0f);
  EXPECT_EQ(roundToFormat(131040.0f, fp5_10, Overflow::Infinity), INFINITY);
}
#endif

TEST(FloatFormatTest, ArrayFormMatchesScalarAndMayAlias) {
  std::vector<float> data = {0.1f, -3.3f, 31.5f, -1e-5f, NAN, INFINITY, 7.0f};
  std::vector<float> expected;
  for (float x : data)
    expected.push_back(roundToFormat(x, kFp434, Overflow::Saturate));
  ASSERT_TRUE(roundToFormat(data.data(), data.data(), data.size(), kFp434,
                            Overflow::Saturate)
                  .isOk());
  for (size_t i = 0; i < data.size(); ++i)
    EXPECT_EQ(bitsOf(data[i]), bitsOf(expected[i])) << i;
  EXPECT_EQ(data[2], 30.0f);
  EXPECT_EQ(data[5], 30.0f);
}

TEST(FloatFormatTest, ScaledExponentIsTheSmallestThatFits) {
  const float m = 57344.0f; // 1.75 * 2^15
  EXPECT_EQ(scaledExponent(1.75f, m), -15);
  EXPECT_EQ(scaledExponent(std::nextafter(1.75f, 2.0f), m), -14);
  EXPECT_EQ(scaledExponent(1.0f, m), -15);
  EXPECT_EQ(scaledExponent(57344.0f, m), 0);
  EXPECT_EQ(scaledExponent(57345.0f, m), 1);
  EXPECT_EQ(scaledExponent(1e-3f, m), -25); // 2^-10 * 1.024: 57344 * 2^-25
  // The clamp, zero, subnormals, inf and NaN.
  EXPECT_EQ(scaledExponent(0.0f, m), -100);
  EXPECT_EQ(scaledExponent(1e-40f, m), -100);
  EXPECT_EQ(scaledExponent(std::ldexp(1.0f, 120), m), 100);
  EXPECT_EQ(scaledExponent(INFINITY, m), 100);
  EXPECT_EQ(scaledExponent(NAN, m), 100);
  for (int k = -100; k <= 100; ++k) {
    float amax = std::ldexp(1.3f, 15 + k);
    ASSERT_EQ(scaledExponent(amax, m), k) << amax;
    EXPECT_LE(amax, std::ldexp(m, k));
    EXPECT_GT(amax, std::ldexp(m, k - 1));
  }
}

TEST(FloatFormatTest, RoundScaledKeepsThreeSignificantBitsAtAnyRange) {
  const FloatFormat e5m2{5, 2, 0};
  for (int shift : {-60, -20, 0, 30}) {
    std::vector<float> in = {1.1f, -0.3f, 0.07f, 1.75f, -1e-10f, 0.0f};
    for (float &x : in)
      x = std::ldexp(x, shift);
    std::vector<float> out(in.size());
    ASSERT_TRUE(roundScaled(in.data(), out.data(), in.size(), e5m2, 57344.0f,
                            Overflow::Infinity)
                    .isOk());
    // max |x| = 1.75 * 2^shift maps to 57344 exactly: k = shift - 15.
    EXPECT_EQ(out[3], in[3]);
    EXPECT_EQ(out[0], std::ldexp(1.0f, shift)); // 1.1 -> 1.0 (3 bits)
    EXPECT_EQ(out[1], std::ldexp(-0.3125f, shift));
    EXPECT_EQ(out[2], std::ldexp(0.0625f, shift)); // 0.07 -> 2^-4 (3 bits)
    EXPECT_EQ(out[5], 0.0f);
    // -1e-10 * 2^15 is below e5m2's subnormals: zero, sign kept.
    EXPECT_EQ(out[4], 0.0f);
    EXPECT_TRUE(std::signbit(out[4]));
  }
  float bad = 1.0f;
  EXPECT_TRUE(
      roundScaled(&bad, &bad, 1, e5m2, 0.0f, Overflow::Infinity).failed());
  EXPECT_TRUE(roundScaled(&bad, &bad, 1, FloatFormat{9, 2, 0}, 57344.0f,
                          Overflow::Infinity)
                  .failed());
}

} // namespace
