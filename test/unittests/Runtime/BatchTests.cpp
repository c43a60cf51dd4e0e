//===- BatchTests.cpp - Normalization, fitting and augmentation -*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Batch.h"
#include "qtrain/runtime/Philox.h"

#include "gtest/gtest.h"

#include <set>
#include <string>
#include <vector>

using namespace qtrain::rt;

namespace {

/// `count` u8 samples of c x h x w, pixel i of sample s = (s * 50 + i) % 256.
Dataset bytes(int64_t count, int64_t c, int64_t h, int64_t w) {
  Dataset d;
  d.count = count;
  d.channels = c;
  d.rows = h;
  d.cols = w;
  for (int64_t s = 0; s < count; ++s) {
    d.labels.push_back(int32_t(s % 3));
    for (int64_t i = 0; i < c * h * w; ++i)
      d.pixels.push_back(uint8_t((s * 50 + i) % 256));
  }
  d.classes = 3;
  return d;
}

InputPipeline pipeline(const Dataset &d, std::vector<int64_t> shape,
                       Normalization n = {}, bool augment = false,
                       uint64_t seed = 1) {
  InputPipeline p;
  std::vector<std::string> notices;
  Status s = makeInputPipeline(d, shape, n, augment, seed, p, notices);
  EXPECT_TRUE(s.isOk()) << s.message();
  return p;
}

std::string error(const Dataset &d, std::vector<int64_t> shape,
                  Normalization n = {}) {
  InputPipeline p;
  std::vector<std::string> notices;
  return makeInputPipeline(d, shape, n, false, 1, p, notices).message();
}

std::vector<float> sample(const Dataset &d, const InputPipeline &p,
                          int64_t index, const AugmentDraw *draw = nullptr) {
  std::vector<float> out(size_t(p.sampleSize()), -99.0f);
  fillSample(d, index, p, draw, out.data());
  return out;
}

} // namespace

TEST(BatchTest, NormalizesPerChannelInFp32) {
  Dataset d = bytes(2, 3, 1, 2);
  Normalization n = cifar10Normalization();
  InputPipeline p = pipeline(d, {4, 3, 1, 2}, n);
  std::vector<float> x = sample(d, p, 1);
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < 2; ++i) {
      uint8_t v = d.pixels[size_t(6 + 2 * c + i)];
      EXPECT_EQ(x[size_t(2 * c + i)],
                (float(v) / 255.0f - n.mean[size_t(c)]) / n.std[size_t(c)]);
    }
  // No normalization: v / 255 exactly.
  p = pipeline(d, {4, 3, 1, 2});
  EXPECT_EQ(sample(d, p, 0)[5], 5.0f / 255.0f);
  // One value for every channel.
  p = pipeline(d, {4, 3, 1, 2}, {{0.5f}, {0.25f}});
  EXPECT_EQ(sample(d, p, 0)[4], (4.0f / 255.0f - 0.5f) / 0.25f);
}

TEST(BatchTest, FloatSamplesAreTakenAsTheyAre) {
  Dataset d;
  d.count = 1;
  d.channels = 2;
  d.rows = d.cols = 1;
  d.isFloat = true;
  d.values = {3.5f, -1e9f};
  d.labels = {0};
  EXPECT_EQ(sample(d, pipeline(d, {1, 2, 1, 1}), 0),
            (std::vector<float>{3.5f, -1e9f}));
  EXPECT_EQ(sample(d, pipeline(d, {1, 2, 1, 1}, {{1, 2}, {2, 4}}), 0),
            (std::vector<float>{(3.5f - 1) / 2, (-1e9f - 2) / 4}));
}

TEST(BatchTest, OneChannelIsReplicatedAndSmallImagesPadded) {
  Dataset d = bytes(1, 1, 2, 2);
  InputPipeline p;
  std::vector<std::string> notices;
  ASSERT_TRUE(
      makeInputPipeline(d, {8, 3, 4, 6}, {{0.5f}, {0.5f}}, false, 1, p, notices)
          .isOk());
  ASSERT_EQ(notices.size(), 2u);
  EXPECT_EQ(notices[0], "the data has 1 channel and the bundle takes 3: each "
                        "image is replicated into the 3 channels");
  EXPECT_EQ(notices[1], "the data's 2x2 images are zero-padded, centered, to "
                        "the bundle's 4x6 (after normalization)");
  std::vector<float> x = sample(d, p, 0);
  auto norm = [](int v) { return (float(v) / 255.0f - 0.5f) / 0.5f; };
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < 4; ++y)
      for (int xx = 0; xx < 6; ++xx) {
        bool inside = y >= 1 && y < 3 && xx >= 2 && xx < 4;
        float want = inside ? norm((y - 1) * 2 + (xx - 2)) : 0.0f;
        EXPECT_EQ(x[size_t((c * 4 + y) * 6 + xx)], want) << c << y << xx;
      }
  // A flat input of the data's size takes the data's shape.
  p = pipeline(d, {8, 4});
  EXPECT_EQ(p.channels, 1);
  EXPECT_EQ(p.rows, 2);
}

TEST(BatchTest, OtherShapeMismatchesAreErrors) {
  EXPECT_EQ(error(bytes(1, 2, 4, 4), {8, 3, 4, 4}),
            "the bundle takes 3x4x4 inputs per sample (C x H x W), the data "
            "has 2x4x4 images (only 1 channel into 3 is converted)");
  EXPECT_EQ(error(bytes(1, 3, 4, 4), {8, 1, 4, 4}),
            "the bundle takes 1x4x4 inputs per sample (C x H x W), the data "
            "has 3x4x4 images (only 1 channel into 3 is converted)");
  EXPECT_EQ(error(bytes(1, 1, 4, 4), {8, 1, 5, 4}),
            "the bundle takes 1x5x4 inputs per sample (C x H x W), the data "
            "has 1x4x4 images (only images smaller by an even amount on each "
            "side are padded)");
  EXPECT_EQ(error(bytes(1, 1, 4, 4), {8, 1, 2, 2}),
            "the bundle takes 1x2x2 inputs per sample (C x H x W), the data "
            "has 1x4x4 images (only images smaller by an even amount on each "
            "side are padded)");
  EXPECT_EQ(error(bytes(1, 1, 4, 4), {8, 20}),
            "the bundle takes 20 inputs per sample, the data has 1x4x4 = 16");
  EXPECT_EQ(error(bytes(1, 1, 4, 4), {8, 1, 4, 4}, cifar10Normalization()),
            "the normalization has 3 values per statistic, the data has 1 "
            "channel (give one value, or one per channel)");
}

TEST(BatchTest, ParsesNormalizations) {
  Normalization n;
  ASSERT_TRUE(parseNormalization("0.5,0.25,1/2,4,8", n).isOk());
  EXPECT_EQ(n.mean, (std::vector<float>{0.5f, 0.25f, 1.0f}));
  EXPECT_EQ(n.std, (std::vector<float>{2.0f, 4.0f, 8.0f}));
  ASSERT_TRUE(parseNormalization("none", n).isOk());
  EXPECT_TRUE(n.mean.empty() && n.std.empty());
  EXPECT_EQ(parseNormalization("1,2/3", n).message(),
            "2 means but 1 standard deviations");
  EXPECT_EQ(parseNormalization("1/0", n).message(),
            "every standard deviation must be positive, got 0.000000");
  EXPECT_NE(parseNormalization("1,/2,3", n).message().find("expected MEANS"),
            std::string::npos);
  EXPECT_NE(parseNormalization("0.5", n).message().find("expected MEANS"),
            std::string::npos);
  EXPECT_NE(parseNormalization("nan/1", n).message().find("expected MEANS"),
            std::string::npos);
}

TEST(BatchTest, AKnownDrawGivesAKnownWindow) {
  // 1x4x4 with pixel values 0..15, normalization none: x = v / 255.
  Dataset d = bytes(1, 1, 4, 4);
  InputPipeline p = pipeline(d, {1, 1, 4, 4});
  auto at = [&](int y, int x) {
    return y < 0 || y >= 4 || x < 0 || x >= 4 ? 0.0f
                                              : float(y * 4 + x) / 255.0f;
  };
  // Window at (0, 8) of the image padded by 4: rows -4..-1 and columns
  // 4..7 of the image: all padding.
  AugmentDraw corner{0, 8, false};
  EXPECT_EQ(sample(d, p, 0, &corner), std::vector<float>(16, 0.0f));
  // Window at (5, 3): the image shifted up by one row and right by one
  // column.
  AugmentDraw shift{5, 3, false};
  std::vector<float> x = sample(d, p, 0, &shift);
  for (int y = 0; y < 4; ++y)
    for (int c = 0; c < 4; ++c)
      EXPECT_EQ(x[size_t(y * 4 + c)], at(y + 1, c - 1)) << y << c;
  // The centered window, flipped: the exact mirror image.
  AugmentDraw flip{4, 4, true};
  x = sample(d, p, 0, &flip);
  for (int y = 0; y < 4; ++y)
    for (int c = 0; c < 4; ++c)
      EXPECT_EQ(x[size_t(y * 4 + c)], at(y, 3 - c));
  // Crop, then flip the window.
  AugmentDraw both{4, 5, true};
  x = sample(d, p, 0, &both);
  for (int y = 0; y < 4; ++y)
    for (int c = 0; c < 4; ++c)
      EXPECT_EQ(x[size_t(y * 4 + c)], at(y, 3 - c + 1));
}

TEST(BatchTest, DrawsComeFromThePhiloxStreamOfTheStep) {
  // Position 5 of step 7, seed 3: Philox block 5 of stream 0x4147, step 7.
  PhiloxCounter w = PhiloxStream(3, 0x4147, 7).block(5);
  AugmentDraw d = augmentDraw(3, 7, 5);
  EXPECT_EQ(d.rowOffset, int((uint64_t(w[0]) * 9) >> 32));
  EXPECT_EQ(d.colOffset, int((uint64_t(w[1]) * 9) >> 32));
  EXPECT_EQ(d.flip, (w[2] >> 31) != 0);
  // Every offset and both flips occur, about equally often.
  std::vector<int> rows(9, 0), cols(9, 0);
  int flips = 0;
  for (int64_t i = 0; i < 9000; ++i) {
    AugmentDraw a = augmentDraw(1, i / 100, i % 100);
    ++rows[size_t(a.rowOffset)];
    ++cols[size_t(a.colOffset)];
    flips += a.flip;
  }
  for (int k = 0; k < 9; ++k) {
    EXPECT_NEAR(rows[size_t(k)], 1000, 150);
    EXPECT_NEAR(cols[size_t(k)], 1000, 150);
  }
  EXPECT_NEAR(flips, 4500, 250);
}

TEST(BatchTest, TrainingBatchesReplayAtTheSameStepOnly) {
  Dataset d = bytes(8, 3, 8, 8);
  InputPipeline p = pipeline(d, {4, 3, 8, 8}, cifar10Normalization(), true, 9);
  std::vector<int64_t> order = {7, 6, 5, 4, 3, 2, 1, 0};
  size_t n = size_t(4 * p.sampleSize());
  std::vector<float> a(n), b(n), c(n), e(n), plain(n);
  std::vector<int64_t> la(4), lb(4);
  fillBatch(d, order, 1, 4, 12, p, a.data(), la.data());
  fillBatch(d, order, 1, 4, 12, p, b.data(), lb.data());
  EXPECT_EQ(a, b);
  EXPECT_EQ(la, (std::vector<int64_t>{0, 2, 1, 0}));
  fillBatch(d, order, 1, 4, 13, p, c.data(), lb.data());
  EXPECT_NE(a, c);
  InputPipeline other = p;
  other.seed = 10;
  fillBatch(d, order, 1, 4, 12, other, e.data(), lb.data());
  EXPECT_NE(a, e);
  // Each sample is its own draw of the step.
  for (int64_t i = 0; i < 4; ++i) {
    AugmentDraw draw = augmentDraw(9, 12, i);
    std::vector<float> one = sample(d, p, order[size_t(4 + i)], &draw);
    EXPECT_TRUE(std::equal(one.begin(), one.end(),
                           a.begin() + long(i * p.sampleSize())));
  }
  // Evaluation is never augmented, whatever the pipeline says.
  int64_t indices[] = {3, 2, 1, 0};
  fillSamples(d, indices, 4, p, plain.data());
  InputPipeline off = p;
  off.augment = false;
  fillBatch(d, order, 1, 4, 12, off, b.data(), lb.data());
  EXPECT_EQ(plain, b);
}
