//===- DataTests.cpp - IDX datasets and batch order -------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Data.h"

#include "gtest/gtest.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace qtrain::rt;

namespace {

/// A temporary directory, removed with its files.
struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/qtrain-data-XXXXXX";
    path = ::mkdtemp(name);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string file(const std::string &name) const { return path + "/" + name; }
};

std::vector<uint8_t> idx(std::vector<uint32_t> dims,
                         std::vector<uint8_t> data) {
  std::vector<uint8_t> out = {0, 0, 8, uint8_t(dims.size())};
  for (uint32_t d : dims)
    for (int shift : {24, 16, 8, 0})
      out.push_back(uint8_t(d >> shift));
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

void write(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char *>(bytes.data()),
             std::streamsize(bytes.size()));
}

void writeGz(const std::string &path, const std::vector<uint8_t> &bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, bytes.data(), unsigned(bytes.size()));
  gzclose(f);
}

/// A 3-sample, 2x2 dataset (plain train split, gzipped test split).
void writeToy(const TempDir &dir) {
  write(dir.file("train-images-idx3-ubyte"),
        idx({3, 2, 2}, {0, 255, 51, 102, 1, 2, 3, 4, 5, 6, 7, 8}));
  write(dir.file("train-labels-idx1-ubyte"), idx({3}, {2, 0, 1}));
  writeGz(dir.file("t10k-images-idx3-ubyte.gz"), idx({1, 2, 2}, {9, 9, 9, 9}));
  writeGz(dir.file("t10k-labels-idx1-ubyte.gz"), idx({1}, {1}));
}

} // namespace

TEST(DataTest, ReadsPlainAndGzippedSplits) {
  TempDir dir;
  writeToy(dir);
  Dataset train, test;
  ASSERT_FALSE(loadDataset(dir.path, "train", train).failed());
  ASSERT_FALSE(loadDataset(dir.path, "test", test).failed());
  EXPECT_EQ(train.count, 3);
  EXPECT_EQ(train.rows, 2);
  EXPECT_EQ(train.cols, 2);
  EXPECT_EQ(train.classes, 3);
  EXPECT_EQ(train.labels, (std::vector<uint8_t>{2, 0, 1}));
  EXPECT_EQ(test.count, 1);
  EXPECT_EQ(test.pixels, (std::vector<uint8_t>{9, 9, 9, 9}));
}

TEST(DataTest, NormalizesInFp32) {
  TempDir dir;
  writeToy(dir);
  Dataset train;
  ASSERT_FALSE(loadDataset(dir.path, "train", train).failed());
  int64_t indices[] = {0};
  float out[4];
  normalizeBatch(train, indices, 1, 0.2860f, 0.3530f, out);
  EXPECT_EQ(out[0], (0.0f / 255.0f - 0.2860f) / 0.3530f);
  EXPECT_EQ(out[1], (255.0f / 255.0f - 0.2860f) / 0.3530f);
  EXPECT_EQ(out[2], (51.0f / 255.0f - 0.2860f) / 0.3530f);
}

TEST(DataTest, ErrorsNameTheFileAndTheProblem) {
  TempDir dir;
  Dataset d;
  std::string message = loadDataset(dir.file("none"), "train", d).message();
  EXPECT_EQ(message, dir.file("none") + ": no such directory");
  message = loadDataset(kFashionMnistDir + std::string("-missing"), "train", d)
                .message();
  EXPECT_NE(message.find("no such directory"), std::string::npos);
  // A regular file where the directory should be is not "no such".
  write(dir.file("plain"), {1, 2, 3});
  message = loadDataset(dir.file("plain"), "train", d).message();
  EXPECT_EQ(message, dir.file("plain") + ": not a directory (give --data-dir "
                                         "the folder of the IDX files)");

  writeToy(dir);
  write(dir.file("train-labels-idx1-ubyte"), idx({4}, {0, 1, 2, 3}));
  EXPECT_EQ(loadDataset(dir.path, "train", d).message(),
            dir.file("train-*: 3 images but 4 labels"));

  write(dir.file("train-images-idx3-ubyte"), idx({3, 2, 2}, {1, 2, 3}));
  EXPECT_EQ(loadDataset(dir.path, "train", d).message(),
            dir.file("train-images-idx3-ubyte") +
                ": expected 12 data bytes after the header, found 3");

  write(dir.file("train-images-idx3-ubyte"), {0, 0, 8});
  EXPECT_EQ(loadDataset(dir.path, "train", d).message(),
            dir.file("train-images-idx3-ubyte") +
                ": truncated IDX header (3 bytes)");

  write(dir.file("train-images-idx3-ubyte"),
        idx({3, 4}, std::vector<uint8_t>(12)));
  EXPECT_EQ(loadDataset(dir.path, "train", d).message(),
            dir.file("train-images-idx3-ubyte") +
                ": not an IDX file of unsigned bytes with 3 dimensions "
                "(magic 0 0 8 2)");

  ::unlink(dir.file("t10k-images-idx3-ubyte.gz").c_str());
  EXPECT_EQ(loadDataset(dir.path, "test", d).message(),
            dir.file("t10k-images-idx3-ubyte") + "[.gz]: no such file");
  EXPECT_EQ(loadDataset(dir.path, "validation", d).message(),
            "unknown split 'validation' (expected train or test)");
}

TEST(DataTest, AFifoInPlaceOfAFileIsRefusedNotReadForever) {
  // Regression: gzopen blocked on a FIFO without a writer (or read from a
  // device forever); data files are opened like every other file the
  // runtime reads (File.h).
  TempDir dir;
  writeToy(dir);
  std::string images = dir.file("train-images-idx3-ubyte");
  ::unlink(images.c_str());
  ::unlink((images + ".gz").c_str());
  ASSERT_EQ(::mkfifo(images.c_str(), 0600), 0);
  Dataset d;
  EXPECT_EQ(loadDataset(dir.path, "train", d).message(),
            images + ": not a regular file (a FIFO); refusing to read it");
}

TEST(DataTest, CorruptGzipIsAnError) {
  TempDir dir;
  writeToy(dir);
  std::vector<uint8_t> bytes = idx({1}, {1});
  writeGz(dir.file("t10k-labels-idx1-ubyte.gz"), bytes);
  // Keep the gzip header, cut the stream.
  std::ifstream in(dir.file("t10k-labels-idx1-ubyte.gz"), std::ios::binary);
  std::vector<uint8_t> gz((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  gz.resize(gz.size() / 2);
  write(dir.file("t10k-labels-idx1-ubyte.gz"), gz);
  Dataset d;
  std::string message = loadDataset(dir.path, "test", d).message();
  EXPECT_NE(message.find("t10k-labels-idx1-ubyte.gz: corrupt"),
            std::string::npos)
      << message;
}

TEST(DataTest, ShuffleIsASeededPermutationPerEpoch) {
  std::vector<int64_t> a = shuffleOrder(7, 0, 1000);
  std::vector<int64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 1000; ++i)
    ASSERT_EQ(sorted[size_t(i)], i);
  EXPECT_EQ(a, shuffleOrder(7, 0, 1000));
  EXPECT_NE(a, shuffleOrder(7, 1, 1000));
  EXPECT_NE(a, shuffleOrder(8, 0, 1000));
  // Every position is about equally likely to hold sample 0.
  std::vector<int> firstOf(4, 0);
  for (int64_t epoch = 0; epoch < 4000; ++epoch)
    ++firstOf[size_t(shuffleOrder(3, epoch, 4)[0])];
  for (int count : firstOf)
    EXPECT_NEAR(count, 1000, 120);
}
