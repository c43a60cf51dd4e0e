//===- PhiloxTests.cpp - Tests of the Philox4x32-10 generator ------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Philox.h"

#include "gtest/gtest.h"

#include <cmath>
#include <vector>

using namespace qtrain::rt;

namespace {

struct KnownAnswer {
  unsigned rounds;
  PhiloxCounter counter;
  PhiloxKey key;
  PhiloxCounter expected;
};

// Random123's kat_vectors file, the philox4x32 lines
// (rounds, counter words 0..3, key words 0..1, expected output words 0..3).
const KnownAnswer kKnownAnswers[] = {
    {7, {0, 0, 0, 0}, {0, 0}, {0x5f6fb709, 0x0d893f64, 0x4f121f81, 0x4f730a48}},
    {7,
     {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x5207ddc2, 0x45165e59, 0x4d8ee751, 0x8c52f662}},
    {7,
     {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0x4dfccaba, 0x190a87f0, 0xc47362ba, 0xb6b5242a}},
    {10,
     {0, 0, 0, 0},
     {0, 0},
     {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {10,
     {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {10,
     {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

TEST(PhiloxTest, KnownAnswerVectors) {
  for (const KnownAnswer &kat : kKnownAnswers) {
    PhiloxCounter out = philox4x32(kat.counter, kat.key, kat.rounds);
    for (int w = 0; w < 4; ++w)
      EXPECT_EQ(out[w], kat.expected[w])
          << "rounds " << kat.rounds << " word " << w;
  }
}

TEST(PhiloxTest, DefaultIsTenRounds) {
  PhiloxCounter ctr = {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344};
  PhiloxKey key = {0xa4093822, 0x299f31d0};
  EXPECT_EQ(philox4x32(ctr, key), philox4x32(ctr, key, 10));
  EXPECT_NE(philox4x32(ctr, key), philox4x32(ctr, key, 7));
}

TEST(PhiloxTest, StreamLayout) {
  // A seed and an index with non-zero high words, to pin word order.
  uint64_t seed = 0x0123456789abcdefULL;
  PhiloxStream stream(seed, /*streamId=*/7, /*step=*/12345);
  EXPECT_EQ(stream.key(), (PhiloxKey{0x89abcdefu, 0x01234567u}));
  uint64_t index = (uint64_t(5) << 34) + 4 * 3 + 2; // block 5 * 2^32 + 3
  EXPECT_EQ(stream.counter(index / 4), (PhiloxCounter{3u, 5u, 7u, 12345u}));
  PhiloxCounter words =
      philox4x32({3u, 5u, 7u, 12345u}, {0x89abcdefu, 0x01234567u});
  for (unsigned w = 0; w < 4; ++w)
    EXPECT_EQ(stream.word(index - 2 + w), words[w]);
  EXPECT_EQ(stream.noise(index), uniformNoise(words[2]));
}

TEST(PhiloxTest, StreamsAreIndependent) {
  PhiloxStream base(42, 0, 0);
  EXPECT_NE(base.word(0), PhiloxStream(43, 0, 0).word(0));
  EXPECT_NE(base.word(0), PhiloxStream(42, 1, 0).word(0));
  EXPECT_NE(base.word(0), PhiloxStream(42, 0, 1).word(0));
  EXPECT_NE(base.word(0), base.word(1));
  EXPECT_NE(base.word(0), base.word(4));
  // Pure function: asking twice gives the same word.
  EXPECT_EQ(base.word(123456789), PhiloxStream(42, 0, 0).word(123456789));
}

TEST(PhiloxTest, UniformNoiseMapping) {
  // float(u >> 8) * 2^-24 - 0.5f.
  EXPECT_EQ(uniformNoise(0u), -0.5f);
  EXPECT_EQ(uniformNoise(0xffu), -0.5f); // the low 8 bits are dropped
  EXPECT_EQ(uniformNoise(0x100u), -0.5f + std::ldexp(1.0f, -24));
  EXPECT_EQ(uniformNoise(0x80000000u), 0.0f);
  EXPECT_EQ(uniformNoise(0x7fffffffu), -std::ldexp(1.0f, -24));
  EXPECT_EQ(uniformNoise(0xffffffffu), 0.5f - std::ldexp(1.0f, -24));
  EXPECT_EQ(uniformNoise(0xc0000000u), 0.25f);
}

TEST(PhiloxTest, FillNoiseMatchesElementwise) {
  PhiloxStream stream(2024, 3, 99);
  for (uint64_t first : {uint64_t(0), uint64_t(1), uint64_t(3), uint64_t(6),
                         uint64_t(1) << 33}) {
    for (size_t count : {size_t(0), size_t(1), size_t(2), size_t(5), size_t(9),
                         size_t(1000)}) {
      std::vector<float> noise(count, 7.0f);
      stream.fillNoise(first, noise.data(), count);
      for (size_t j = 0; j < count; ++j)
        ASSERT_EQ(noise[j], stream.noise(first + j))
            << "first " << first << " j " << j;
    }
  }
}

TEST(PhiloxTest, NoiseStatistics) {
  // 1e6 draws: all in [-0.5, 0.5), mean within 6 standard errors of the
  // exact mean -2^-25 (sd of U(-0.5, 0.5) is 1/sqrt(12), so 6 se = 0.0017),
  // and each quarter of the interval holds a quarter of the draws.
  constexpr size_t kCount = 1000000;
  std::vector<float> noise(kCount);
  PhiloxStream(7, 0, 0).fillNoise(0, noise.data(), kCount);
  double sum = 0;
  size_t quarters[4] = {0, 0, 0, 0};
  for (float n : noise) {
    ASSERT_GE(n, -0.5f);
    ASSERT_LT(n, 0.5f);
    sum += n;
    ++quarters[int((double(n) + 0.5) * 4)];
  }
  EXPECT_NEAR(sum / kCount, -std::ldexp(1.0, -25), 0.0017);
  for (size_t q : quarters)
    EXPECT_NEAR(double(q) / kCount, 0.25, 0.0026); // 6 se of a proportion
}

} // namespace
