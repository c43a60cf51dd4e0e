//===- CheckpointTests.cpp - Training checkpoints ---------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Checkpoint.h"

#include "qtrain/runtime/Bundle.h"
#include "qtrain/runtime/Trainer.h"

#include "fixtures/ToyBundle.h"

#include "gtest/gtest.h"

#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <tuple>
#include <unistd.h>

using namespace qtrain::rt;

namespace {

Checkpoint sample() {
  Checkpoint c;
  c.config = R"({"seed":1,"schedule":"cpt:3:8"})";
  c.step = 1234;
  c.totalBitOps = 5.5e12;
  c.epochLossSum = 0.1 + 0.2 + 0.7;
  c.epochLossCount = 3;
  c.buffers = {{1.0f, -2.0f, 3.5f}, {}, {0.25f}};
  return c;
}

std::string tempPath() {
  char name[] = "/tmp/qtrain-ckpt-XXXXXX";
  int fd = ::mkstemp(name);
  ::close(fd);
  return name;
}

std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

} // namespace

TEST(CheckpointTest, RoundTrips) {
  std::string path = tempPath();
  ASSERT_FALSE(saveCheckpoint(path, sample()).failed());
  Checkpoint c;
  ASSERT_FALSE(loadCheckpoint(path, c).failed());
  EXPECT_EQ(c.config, sample().config);
  EXPECT_EQ(c.step, 1234);
  EXPECT_EQ(c.totalBitOps, 5.5e12);
  // Bit for bit: a resumed run continues the epoch's sum exactly.
  EXPECT_EQ(c.epochLossSum, 0.1 + 0.2 + 0.7);
  EXPECT_EQ(c.epochLossCount, 3);
  EXPECT_EQ(c.buffers, sample().buffers);
  // Atomic: no temporary file left behind.
  EXPECT_NE(::access((path + ".tmp").c_str(), F_OK), 0);
  std::remove(path.c_str());
}

TEST(CheckpointTest, RoundTripsEmptyBuffers) {
  // Regression (fuzz/checkpoint.cpp under UBSan): a buffer of zero floats
  // was copied with memcpy from a null pointer.
  Checkpoint c;
  c.config = "{}";
  c.buffers = {{}, {1.0f, 2.0f}, {}};
  std::string path = tempPath();
  ASSERT_FALSE(saveCheckpoint(path, c).failed());
  Checkpoint back;
  ASSERT_TRUE(loadCheckpoint(path, back).isOk());
  ASSERT_EQ(back.buffers.size(), 3u);
  EXPECT_TRUE(back.buffers[0].empty());
  EXPECT_EQ(back.buffers[1], (std::vector<float>{1.0f, 2.0f}));
  EXPECT_TRUE(back.buffers[2].empty());
}

TEST(CheckpointTest, RefusesStepsAndBitOpsNoRunHas) {
  // Regression (fuzz/checkpoint.cpp): a negative step with a valid CRC
  // loaded, and only a later restore refused it.
  for (auto [step, bitOps, what] :
       {std::tuple<int64_t, double, const char *>{-192, 0.0, "step -192"},
        {int64_t(1) << 40, 0.0, "is outside [0, 2^31 - 1]"},
        {5, -1.0, "BitOps count"},
        {5, std::nan(""), "BitOps count"}}) {
    Checkpoint c;
    c.config = "{}";
    c.step = step;
    c.totalBitOps = bitOps;
    std::string path = tempPath();
    ASSERT_FALSE(saveCheckpoint(path, c).failed());
    Checkpoint back;
    Status s = loadCheckpoint(path, back);
    EXPECT_TRUE(s.failed());
    EXPECT_NE(s.message().find(what), std::string::npos) << s.message();
  }
}

TEST(CheckpointTest, RefusesDamage) {
  std::string path = tempPath();
  ASSERT_FALSE(saveCheckpoint(path, sample()).failed());
  std::string good = readBytes(path);
  Checkpoint c;

  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x10;
  writeBytes(path, flipped);
  EXPECT_EQ(loadCheckpoint(path, c).message(),
            path + ": corrupt checkpoint (CRC mismatch)");

  writeBytes(path, good.substr(0, good.size() - 9));
  EXPECT_EQ(loadCheckpoint(path, c).message(),
            path + ": corrupt checkpoint (CRC mismatch)");

  writeBytes(path, "QTRAIN");
  EXPECT_EQ(loadCheckpoint(path, c).message(),
            path + ": not a qtrain checkpoint (bad magic)");

  writeBytes(path, "");
  EXPECT_EQ(loadCheckpoint(path, c).message(),
            path + ": not a qtrain checkpoint (bad magic)");

  std::remove(path.c_str());
  EXPECT_NE(loadCheckpoint(path, c).message().find(path + ": cannot open: "),
            std::string::npos);
}

namespace {
/// Rewrites the CRC-32 at the end of `bytes`.
void fixCrc(std::string &bytes) {
  uint32_t crc =
      uint32_t(crc32(0, reinterpret_cast<const Bytef *>(bytes.data()),
                     uInt(bytes.size() - 4)));
  std::memcpy(&bytes[bytes.size() - 4], &crc, 4);
}
} // namespace

TEST(CheckpointTest, RefusesAnotherVersion) {
  std::string path = tempPath();
  ASSERT_FALSE(saveCheckpoint(path, sample()).failed());
  std::string bytes = readBytes(path);
  bytes[8] = 3; // version 3, with a valid CRC
  fixCrc(bytes);
  writeBytes(path, bytes);
  Checkpoint out;
  EXPECT_EQ(loadCheckpoint(path, out).message(),
            path + ": checkpoint version 3 (this runtime reads 2)");
  std::remove(path.c_str());
}

TEST(CheckpointTest, RefusesVersion1WithTheReason) {
  // Version 1 has no running loss of its epoch: resuming from it logged
  // the epoch's mean from steps.csv, or a wrong one without it. A version-1
  // file is the version-2 layout without the 16 bytes after the BitOps.
  Checkpoint c = sample();
  std::string path = tempPath();
  ASSERT_FALSE(saveCheckpoint(path, c).failed());
  std::string bytes = readBytes(path);
  size_t epochSums = 8 + 4 + 4 + c.config.size() + 8 + 8;
  bytes.erase(epochSums, 16);
  bytes[8] = 1;
  fixCrc(bytes);
  writeBytes(path, bytes);
  Checkpoint out;
  Status s = loadCheckpoint(path, out);
  EXPECT_NE(s.message().find("checkpoint version 1 (this runtime reads 2): it "
                             "does not record the running training loss"),
            std::string::npos)
      << s.message();
  std::remove(path.c_str());
}

TEST(CheckpointTest, RefusesEpochSumsNoRunHas) {
  for (auto [sum, count, what] :
       {std::tuple<double, int64_t, const char *>{1.0, -1, "epoch loss count"},
        {1.0, 1235, "epoch loss count"},
        {std::nan(""), 3, "epoch loss sum"},
        {HUGE_VAL, 3, "epoch loss sum"},
        {2.5, 0, "epoch loss sum"}}) {
    Checkpoint c = sample();
    c.epochLossSum = sum;
    c.epochLossCount = count;
    std::string path = tempPath();
    ASSERT_FALSE(saveCheckpoint(path, c).failed());
    Checkpoint back;
    Status s = loadCheckpoint(path, back);
    EXPECT_TRUE(s.failed());
    EXPECT_NE(s.message().find(what), std::string::npos) << s.message();
    std::remove(path.c_str());
  }
}

TEST(CheckpointTest, RestoresATrainerExactly) {
  std::unique_ptr<Bundle> opened;
  ASSERT_FALSE(
      openBundle(qtrain::rt::testing::toyBundleDir(), opened).failed());
  std::shared_ptr<const Bundle> bundle(std::move(opened));
  const Manifest &m = bundle->getManifest();
  TrainerOptions o;
  o.schedule = "cpt:3:8:cycles=2";
  o.totalSteps = 8;
  o.seed = 3;
  std::vector<float> x(size_t(m.input.numel), 0.5f);
  std::vector<int64_t> labels(size_t(m.labels.numel), 1);
  auto run = [&](std::unique_ptr<Trainer> &t, int steps) {
    for (int i = 0; i < steps; ++i) {
      float loss;
      ASSERT_FALSE(t->step(x.data(), labels.data(), loss).failed());
    }
  };
  std::unique_ptr<Trainer> a, b;
  ASSERT_FALSE(Trainer::create(bundle, o, a).failed());
  ASSERT_FALSE(Trainer::create(bundle, o, b).failed());
  run(a, 3);
  Checkpoint c = captureCheckpoint(*a, "{}");
  run(a, 5);
  ASSERT_FALSE(restoreCheckpoint(*b, c).failed());
  EXPECT_EQ(b->getStep(), 3);
  run(b, 5);
  EXPECT_EQ(b->getTotalBitOps(), a->getTotalBitOps());
  for (size_t i = 0; i < a->getNumBuffers(); ++i)
    for (size_t k = 0; k < a->getBufferSize(i); ++k)
      ASSERT_EQ(a->getBuffer(i)[k], b->getBuffer(i)[k]) << i << " " << k;

  c.buffers.pop_back();
  EXPECT_NE(restoreCheckpoint(*b, c).message().find("buffers"),
            std::string::npos);
}

TEST(CheckpointTest, RefusesNonFiniteParametersAndMomentum) {
  // Regression: a checkpoint with NaN or inf in its parameters or momentum
  // was restored, and the run trained and evaluated on them.
  std::unique_ptr<Bundle> opened;
  ASSERT_FALSE(
      openBundle(qtrain::rt::testing::toyBundleDir(), opened).failed());
  std::shared_ptr<const Bundle> bundle(std::move(opened));
  const Manifest &m = bundle->getManifest();
  TrainerOptions o;
  o.schedule = "cpt:3:8:cycles=2";
  o.totalSteps = 8;
  std::unique_ptr<Trainer> t;
  ASSERT_FALSE(Trainer::create(bundle, o, t).failed());
  size_t p = m.parameters.size();
  ASSERT_GE(p, 1u);
  ASSERT_GE(t->getBufferSize(0), 2u);
  const Checkpoint good = captureCheckpoint(*t, "{}");
  for (auto [buffer, value, what] :
       {std::tuple<size_t, float, std::string>{
            0, std::nanf(""),
            "parameter '" + m.parameters[0].name + "' has NaN at element 1"},
        {p, -HUGE_VALF,
         "the momentum of parameter '" + m.parameters[0].name +
             "' has an infinity at element 1"}}) {
    Checkpoint c = good;
    c.buffers[buffer][1] = value;
    c.step = 2;
    Status s = restoreCheckpoint(*t, c);
    EXPECT_TRUE(s.failed());
    EXPECT_NE(s.message().find(what), std::string::npos) << s.message();
    // Nothing changed.
    EXPECT_EQ(t->getStep(), 0);
    for (size_t i = 0; i < t->getNumBuffers(); ++i)
      for (size_t k = 0; k < t->getBufferSize(i); ++k)
        ASSERT_EQ(t->getBuffer(i)[k], good.buffers[i][k]) << i << " " << k;
  }
}

TEST(CheckpointTest, SaveFailsCleanlyInAMissingDirectory) {
  Status s = saveCheckpoint("/nonexistent-dir/x.qck", sample());
  EXPECT_TRUE(s.failed());
  EXPECT_NE(s.message().find("/nonexistent-dir/x.qck.tmp: cannot create"),
            std::string::npos)
      << s.message();
}
