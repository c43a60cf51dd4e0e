//===- GradientExchangeTests.cpp - Averaging gradients over ranks ---------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
//
// The exchange's arithmetic against a communicator that stands for P ranks
// holding the same data (a sum is P times the value), bf16 rounding, the
// bucket layout and byte counts, and the Trainer's exchange path on the toy
// bundle: with one rank and fp32 it is the compiled update bit for bit. The
// real MPI collectives are tested by test/tools/run-data-parallel.test.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/GradientExchange.h"

#include "qtrain/runtime/Trainer.h"

#include "fixtures/ToyBundle.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace qtrain::rt;
using namespace qtrain::rt::testing;

namespace {

/// P ranks that all hold what this one holds: a sum is P times each value
/// (rounded to bf16 for BF16, as MPI's partial sums are), a maximum is the
/// value. Counts the elements it reduced.
class Replicated final : public Communicator {
public:
  explicit Replicated(int ranks, int rank = 0) : ranks(ranks), rank(rank) {}
  int getRank() const override { return rank; }
  int getSize() const override { return ranks; }
  std::string getName() const override { return "replicated"; }
  Status allReduce(void *data, size_t count, CommType type,
                   CommOp op) override {
    reduced += count;
    lastType = type;
    if (op == CommOp::Max)
      return Status::success();
    for (size_t i = 0; i < count; ++i) {
      switch (type) {
      case CommType::F32:
        static_cast<float *>(data)[i] *= float(ranks);
        break;
      case CommType::BF16: {
        uint16_t &v = static_cast<uint16_t *>(data)[i];
        float sum = fromBf16(v);
        for (int r = 1; r < ranks; ++r)
          sum = fromBf16(toBf16(sum + fromBf16(v)));
        v = toBf16(sum);
        break;
      }
      case CommType::I16: {
        int16_t v;
        std::memcpy(&v, static_cast<char *>(data) + 2 * i, 2);
        v = int16_t(v * ranks);
        std::memcpy(static_cast<char *>(data) + 2 * i, &v, 2);
        break;
      }
      case CommType::I32:
        static_cast<int32_t *>(data)[i] *= ranks;
        break;
      case CommType::U8:
        return Status::error("no u8 sums");
      }
    }
    return Status::success();
  }
  Status broadcast(void *, size_t, int) override { return Status::success(); }
  Status barrier() override { return Status::success(); }
  [[noreturn]] void abort(int code) override { std::exit(code); }

  int ranks, rank;
  size_t reduced = 0;
  CommType lastType = CommType::F32;
};

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = scale * (float(int(i % 17)) - 8.0f) / 8.0f;
  return v;
}

} // namespace

TEST(Bf16Test, RoundsToNearestEven) {
  EXPECT_EQ(toBf16(1.0f), 0x3F80);
  EXPECT_EQ(fromBf16(0x3F80), 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even 1.
  EXPECT_EQ(toBf16(1.0f + 0x1p-8f), 0x3F80);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6: up.
  EXPECT_EQ(fromBf16(toBf16(1.0f + 3 * 0x1p-8f)), 1.0f + 0x1p-6f);
  EXPECT_EQ(fromBf16(toBf16(1.0f + 0x1p-8f + 0x1p-20f)), 1.0f + 0x1p-7f);
  EXPECT_EQ(fromBf16(toBf16(-2.5f)), -2.5f);
  EXPECT_TRUE(std::isnan(fromBf16(toBf16(std::nanf("")))));
  EXPECT_EQ(fromBf16(toBf16(std::numeric_limits<float>::infinity())),
            std::numeric_limits<float>::infinity());
}

TEST(GradientExchangeTest, BucketsNeverSpanTwoTensors) {
  Replicated ranks(2);
  GradientExchange x(ranks, {ExchangeMode::Int8, 4096}, {5000, 3, 10}, 1);
  EXPECT_EQ(x.getSize(), 5013u);
  EXPECT_EQ(x.getOffset(1), 5000u);
  EXPECT_EQ(x.getOffset(2), 5003u);
  // 5000 = 4096 + 904, then 3, then 10.
  EXPECT_EQ(x.getNumBuckets(), 4u);
  // int16 carrier and a 4-byte scale per bucket; a ring sends 2 (P-1)/P.
  EXPECT_EQ(x.getWireType(), CommType::I16);
  EXPECT_EQ(x.getPayloadBytes(), 2 * 5013 + 4 * 4);
  EXPECT_EQ(x.getSentBytes(), 2 * 5013 + 4 * 4);
  GradientExchange f(ranks, {ExchangeMode::Fp32, 4096}, {5000, 3, 10}, 1);
  EXPECT_EQ(f.getPayloadBytes(), 4 * 5013);
  Replicated four(4);
  GradientExchange b(four, {ExchangeMode::Bf16, 4096}, {5000, 3, 10}, 1);
  EXPECT_EQ(b.getPayloadBytes(), 2 * 5013);
  EXPECT_EQ(b.getSentBytes(), 2 * 3 * 2 * 5013 / 4);
}

TEST(GradientExchangeTest, WideSumsPastInt16) {
  Replicated many(258), more(259);
  EXPECT_EQ(
      GradientExchange(many, {ExchangeMode::Int8, 64}, {10}, 1).getWireType(),
      CommType::I16);
  GradientExchange x(more, {ExchangeMode::Int8, 64}, {10}, 1);
  EXPECT_EQ(x.getWireType(), CommType::I32);
  std::vector<float> g = ramp(10, 1.0f);
  std::copy(g.begin(), g.end(), x.getData());
  ASSERT_TRUE(x.average(0).isOk());
  EXPECT_EQ(more.lastType, CommType::I32);
  for (size_t i = 0; i < 10; ++i)
    EXPECT_NEAR(x.getData()[i], g[i], 1.0f / 127.0f) << i;
}

TEST(GradientExchangeTest, Fp32IsTheMean) {
  Replicated ranks(4);
  GradientExchange x(ranks, {ExchangeMode::Fp32, 16}, {100}, 1);
  std::vector<float> g = ramp(100, 3.0f);
  std::copy(g.begin(), g.end(), x.getData());
  ASSERT_TRUE(x.average(7).isOk());
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_EQ(x.getData()[i], g[i]) << i;
}

TEST(GradientExchangeTest, Bf16KeepsEightBits) {
  Replicated ranks(2);
  GradientExchange x(ranks, {ExchangeMode::Bf16, 16}, {100}, 1);
  std::vector<float> g(100);
  for (size_t i = 0; i < g.size(); ++i)
    g[i] = 1.0f + float(i) * 0x1p-12f;
  std::copy(g.begin(), g.end(), x.getData());
  ASSERT_TRUE(x.average(0).isOk());
  for (size_t i = 0; i < g.size(); ++i) {
    EXPECT_EQ(x.getData()[i], fromBf16(toBf16(g[i]))) << i;
    EXPECT_LE(std::fabs(x.getData()[i] - g[i]), 0x1p-8f) << i;
  }
}

TEST(GradientExchangeTest, Int8ErrorIsBoundedPerBucket) {
  Replicated ranks(2);
  // Two buckets of very different magnitudes: each has its own scale.
  GradientExchange x(ranks, {ExchangeMode::Int8, 50}, {100}, 3);
  std::vector<float> g = ramp(100, 1.0f);
  for (size_t i = 50; i < 100; ++i)
    g[i] *= 1e-4f;
  std::copy(g.begin(), g.end(), x.getData());
  ASSERT_TRUE(x.average(0).isOk());
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_LE(std::fabs(x.getData()[i] - g[i]),
              (i < 50 ? 1.0f : 1e-4f) / 127.0f * 1.0001f)
        << i;
}

TEST(GradientExchangeTest, Int8TinyScales) {
  // Below 127 / FLT_MAX, 127 / scale overflows; g / scale does not.
  Replicated ranks(300); // int32 sums
  GradientExchange x(ranks, {ExchangeMode::Int8, 4}, {4}, 1);
  const float g[4] = {1e-38f, -5e-39f, 0.0f, 2e-45f};
  std::copy(g, g + 4, x.getData());
  ASSERT_TRUE(x.average(0).isOk());
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(std::isfinite(x.getData()[i])) << i;
    EXPECT_LE(std::fabs(x.getData()[i] - g[i]), 1e-38f / 127.0f * 1.01f) << i;
  }
  EXPECT_EQ(x.getData()[2], 0.0f);
}

TEST(GradientExchangeTest, Int8RoundingIsUnbiased) {
  // A value between two levels rounds up with the probability of its
  // distance: over many steps the mean is the value.
  Replicated ranks(2);
  GradientExchange x(ranks, {ExchangeMode::Int8, 4}, {4}, 11);
  const float g[4] = {1.0f, 0.3f / 127.0f, -0.55f / 127.0f, 0.0f};
  double sum[4] = {0, 0, 0, 0};
  const int steps = 4000;
  for (int step = 0; step < steps; ++step) {
    std::copy(g, g + 4, x.getData());
    ASSERT_TRUE(x.average(uint32_t(step)).isOk());
    for (int i = 0; i < 4; ++i)
      sum[i] += x.getData()[i];
  }
  EXPECT_EQ(sum[0], double(steps));
  EXPECT_EQ(sum[3], 0.0);
  // Standard error of a Bernoulli(0.3) mean over 4000 draws: 0.007 levels.
  EXPECT_NEAR(sum[1] / steps * 127.0, 0.3, 0.03);
  EXPECT_NEAR(sum[2] / steps * 127.0, -0.55, 0.03);
}

TEST(GradientExchangeTest, Int8RoundingDependsOnRankAndStep) {
  Replicated rank0(2, 0), rank1(2, 1);
  GradientExchange a(rank0, {ExchangeMode::Int8, 256}, {256}, 5);
  GradientExchange b(rank1, {ExchangeMode::Int8, 256}, {256}, 5);
  std::vector<float> g = ramp(256, 1.0f);
  g[0] = 1.0f + 0x1p-10f; // not a level multiple of the others
  auto run = [&](GradientExchange &x, uint32_t step) {
    std::copy(g.begin(), g.end(), x.getData());
    EXPECT_TRUE(x.average(step).isOk());
    return std::vector<float>(x.getData(), x.getData() + 256);
  };
  std::vector<float> a0 = run(a, 0), b0 = run(b, 0), a1 = run(a, 1);
  EXPECT_EQ(a0, run(a, 0));
  EXPECT_NE(a0, b0);
  EXPECT_NE(a0, a1);
}

TEST(GradientExchangeTest, NonFiniteGradientPoisonsItsBucketOnly) {
  for (ExchangeMode mode :
       {ExchangeMode::Fp32, ExchangeMode::Bf16, ExchangeMode::Int8}) {
    Replicated ranks(2);
    GradientExchange x(ranks, {mode, 8}, {16}, 1);
    std::vector<float> g = ramp(16, 1.0f);
    g[3] = std::numeric_limits<float>::infinity();
    std::copy(g.begin(), g.end(), x.getData());
    ASSERT_TRUE(x.average(0).isOk());
    EXPECT_FALSE(std::isfinite(x.getData()[3])) << toString(mode);
    for (size_t i = 8; i < 16; ++i)
      EXPECT_TRUE(std::isfinite(x.getData()[i])) << toString(mode) << i;
  }
}

TEST(GradientExchangeTest, ModeNames) {
  ExchangeMode mode = ExchangeMode::Fp32;
  EXPECT_TRUE(parseExchangeMode("int8", mode));
  EXPECT_EQ(mode, ExchangeMode::Int8);
  EXPECT_TRUE(parseExchangeMode("bf16", mode));
  EXPECT_EQ(mode, ExchangeMode::Bf16);
  EXPECT_FALSE(parseExchangeMode("fp16", mode));
  EXPECT_STREQ(toString(ExchangeMode::Fp32), "fp32");
}

namespace {

std::unique_ptr<Trainer> toyTrainer(std::shared_ptr<Communicator> c,
                                    ExchangeMode mode, int steps) {
  std::unique_ptr<Bundle> opened;
  EXPECT_TRUE(openBundle(toyBundleDir(), opened).isOk());
  TrainerOptions o;
  o.schedule = "static:8";
  o.totalSteps = steps;
  o.seed = 3;
  o.learningRate = 0.1f;
  o.momentum = 0.9f;
  o.weightDecay = 0.01f;
  o.communicator = std::move(c);
  o.exchange.mode = mode;
  std::unique_ptr<Trainer> t;
  Status s =
      Trainer::create(std::shared_ptr<const Bundle>(std::move(opened)), o, t);
  EXPECT_TRUE(s.isOk()) << s.message();
  return t;
}

std::vector<float> trainToy(Trainer &t, int steps, std::vector<float> &losses) {
  ToyBatch batch = toyBatch();
  for (int i = 0; i < steps; ++i) {
    float loss = 0;
    Status s = t.step(batch.x.data(), batch.labels.data(), loss);
    EXPECT_TRUE(s.isOk()) << s.message();
    losses.push_back(loss);
  }
  std::vector<float> all;
  for (size_t i = 0; i < t.getNumBuffers(); ++i)
    all.insert(all.end(), t.getBuffer(i), t.getBuffer(i) + t.getBufferSize(i));
  return all;
}

} // namespace

TEST(TrainerExchangeTest, OneRankFp32IsTheCompiledUpdateBitForBit) {
  const int steps = 6;
  std::vector<float> fusedLosses, splitLosses;
  std::unique_ptr<Trainer> fused =
      toyTrainer(nullptr, ExchangeMode::Fp32, steps);
  std::unique_ptr<Trainer> split =
      toyTrainer(std::shared_ptr<Communicator>(makeSingleProcess()),
                 ExchangeMode::Fp32, steps);
  std::vector<float> a = trainToy(*fused, steps, fusedLosses);
  std::vector<float> b = trainToy(*split, steps, splitLosses);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
  EXPECT_EQ(fusedLosses, splitLosses);
  ASSERT_NE(split->getGradientExchange(), nullptr);
  EXPECT_EQ(fused->getGradientExchange(), nullptr);
}

TEST(TrainerExchangeTest, ReplicatedRanksTrainAsOne) {
  // Two ranks with the same batch average to that batch's gradient.
  const int steps = 4;
  std::vector<float> oneLosses, twoLosses;
  std::unique_ptr<Trainer> one = toyTrainer(nullptr, ExchangeMode::Fp32, steps);
  auto two = std::make_shared<Replicated>(2);
  std::unique_ptr<Trainer> pair = toyTrainer(two, ExchangeMode::Fp32, steps);
  std::vector<float> a = trainToy(*one, steps, oneLosses);
  std::vector<float> b = trainToy(*pair, steps, twoLosses);
  EXPECT_EQ(a, b);
  EXPECT_EQ(oneLosses, twoLosses);
  EXPECT_GT(two->reduced, 0u);
}

TEST(TrainerExchangeTest, Int8ExchangeStaysClose) {
  const int steps = 4;
  std::vector<float> fpLosses, qLosses;
  std::unique_ptr<Trainer> fp = toyTrainer(nullptr, ExchangeMode::Fp32, steps);
  std::unique_ptr<Trainer> q =
      toyTrainer(std::shared_ptr<Communicator>(makeSingleProcess()),
                 ExchangeMode::Int8, steps);
  std::vector<float> a = trainToy(*fp, steps, fpLosses);
  std::vector<float> b = trainToy(*q, steps, qLosses);
  EXPECT_NE(a, b);
  for (size_t i = 0; i < fpLosses.size(); ++i)
    EXPECT_NEAR(qLosses[i], fpLosses[i], 0.02f * std::fabs(fpLosses[i])) << i;
}

TEST(TrainerExchangeTest, RefusesEmptyBuckets) {
  std::unique_ptr<Bundle> opened;
  ASSERT_TRUE(openBundle(toyBundleDir(), opened).isOk());
  TrainerOptions o;
  o.schedule = "static:8";
  o.totalSteps = 1;
  o.communicator = std::shared_ptr<Communicator>(makeSingleProcess());
  o.exchange.bucketElements = 0;
  std::unique_ptr<Trainer> t;
  ErrorKind kind = ErrorKind::None;
  Status s = Trainer::create(std::shared_ptr<const Bundle>(std::move(opened)),
                             o, t, &kind);
  EXPECT_TRUE(s.failed());
  EXPECT_EQ(kind, ErrorKind::InvalidArgument);
  EXPECT_EQ(s.message(), "gradient buckets must hold at least one element, "
                         "got 0");
}
