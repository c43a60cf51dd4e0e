//===- DataTests.cpp - IDX, CIFAR and npy datasets; batch order -*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Batch.h"
#include "qtrain/runtime/Data.h"

#include "gtest/gtest.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
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
  EXPECT_EQ(train.labels, (std::vector<int32_t>{2, 0, 1}));
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
  InputPipeline p;
  std::vector<std::string> notices;
  ASSERT_TRUE(makeInputPipeline(train, {1, 1, 2, 2}, {{0.2860f}, {0.3530f}},
                                false, 1, p, notices)
                  .isOk());
  EXPECT_TRUE(notices.empty());
  fillSamples(train, indices, 1, p, out);
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

//===----------------------------------------------------------------------===//
// CIFAR-10 and CIFAR-100 binary files
//===----------------------------------------------------------------------===//

namespace {

/// `count` CIFAR records: the label bytes, then 3072 pixels whose value is
/// (record * 7 + pixel) % 256.
std::vector<uint8_t>
cifarRecords(const std::vector<std::vector<uint8_t>> &labels, int first = 0) {
  std::vector<uint8_t> out;
  for (size_t r = 0; r < labels.size(); ++r) {
    out.insert(out.end(), labels[r].begin(), labels[r].end());
    for (int p = 0; p < 3072; ++p)
      out.push_back(uint8_t((int(r) + first) * 7 + p));
  }
  return out;
}

void writeCifar10(const TempDir &dir) {
  for (int i = 1; i <= 5; ++i)
    write(dir.file("data_batch_" + std::to_string(i) + ".bin"),
          cifarRecords({{uint8_t(i)}, {uint8_t(9 - i)}}, 2 * (i - 1)));
  write(dir.file("test_batch.bin"), cifarRecords({{3}}));
}

} // namespace

TEST(CifarTest, ReadsTheFiveTrainingBatchesInOrder) {
  TempDir dir;
  writeCifar10(dir);
  Dataset train, test;
  ASSERT_TRUE(loadCifar(dir.path, "train", false, false, train).isOk());
  ASSERT_TRUE(loadCifar(dir.path, "test", false, false, test).isOk());
  EXPECT_EQ(train.count, 10);
  EXPECT_EQ(train.channels, 3);
  EXPECT_EQ(train.rows, 32);
  EXPECT_EQ(train.cols, 32);
  EXPECT_FALSE(train.isFloat);
  EXPECT_EQ(train.labels, (std::vector<int32_t>{1, 8, 2, 7, 3, 6, 4, 5, 5, 4}));
  EXPECT_EQ(train.classes, 9);
  ASSERT_EQ(train.pixels.size(), size_t(10 * 3072));
  // Record 3 (the second of data_batch_2.bin), its blue channel's first
  // pixel: channel-major, as the file has it.
  EXPECT_EQ(train.pixels[3 * 3072 + 2048], uint8_t(3 * 7 + 2048));
  EXPECT_EQ(test.count, 1);
  EXPECT_EQ(test.labels, (std::vector<int32_t>{3}));
}

TEST(CifarTest, Cifar100TakesTheFineOrTheCoarseLabel) {
  TempDir dir;
  write(dir.file("train.bin"), cifarRecords({{19, 99}, {0, 42}}));
  write(dir.file("test.bin"), cifarRecords({{5, 7}}));
  Dataset fine, coarse;
  ASSERT_TRUE(loadCifar(dir.path, "train", true, false, fine).isOk());
  ASSERT_TRUE(loadCifar(dir.path, "train", true, true, coarse).isOk());
  EXPECT_EQ(fine.labels, (std::vector<int32_t>{99, 42}));
  EXPECT_EQ(coarse.labels, (std::vector<int32_t>{19, 0}));
  EXPECT_EQ(fine.pixels, coarse.pixels);
  EXPECT_EQ(fine.pixels[3072], uint8_t(7));
  DataSource source{DataFormat::Cifar100, dir.path, false};
  Dataset test;
  ASSERT_TRUE(loadSplit(source, "test", test).isOk());
  EXPECT_EQ(test.labels, (std::vector<int32_t>{7}));
}

TEST(CifarTest, MalformedFilesAreErrorsNamingTheFile) {
  TempDir dir;
  writeCifar10(dir);
  Dataset d;
  ::unlink(dir.file("data_batch_4.bin").c_str());
  EXPECT_EQ(loadCifar(dir.path, "train", false, false, d).message(),
            dir.file("data_batch_4.bin") +
                ": no such file (the CIFAR-10 binary version has "
                "data_batch_1.bin .. data_batch_5.bin and test_batch.bin)");
  writeCifar10(dir);
  std::vector<uint8_t> cut = cifarRecords({{1}, {2}});
  cut.resize(cut.size() - 100);
  write(dir.file("data_batch_2.bin"), cut);
  EXPECT_EQ(loadCifar(dir.path, "train", false, false, d).message(),
            dir.file("data_batch_2.bin") +
                ": truncated or not a CIFAR-10 file: 6046 bytes is not a "
                "whole number of 3073-byte records (1 records and 2973 bytes)");
  writeCifar10(dir);
  write(dir.file("test_batch.bin"), cifarRecords({{1}, {10}}));
  EXPECT_EQ(loadCifar(dir.path, "test", false, false, d).message(),
            dir.file("test_batch.bin") +
                ": record 1 has label 10, not one of the 10 classes of "
                "CIFAR-10");
  write(dir.file("test_batch.bin"), {});
  EXPECT_EQ(loadCifar(dir.path, "test", false, false, d).message(),
            dir.file("test_batch.bin") + ": empty (no CIFAR-10 records)");
  // A CIFAR-10 directory read as CIFAR-100.
  EXPECT_EQ(loadCifar(dir.path, "test", true, false, d).message(),
            dir.file("test.bin") + ": no such file (the CIFAR-100 binary "
                                   "version has train.bin and test.bin)");
  write(dir.file("test.bin"), cifarRecords({{3, 100}}));
  EXPECT_EQ(loadCifar(dir.path, "test", true, false, d).message(),
            dir.file("test.bin") + ": record 0 has label 100, not one of the "
                                   "100 classes of CIFAR-100");
  write(dir.file("test.bin"), cifarRecords({{20, 5}}));
  EXPECT_EQ(loadCifar(dir.path, "test", true, false, d).message(),
            dir.file("test.bin") +
                ": record 0 has coarse label 20, out of range for CIFAR-100");
  EXPECT_EQ(loadCifar(dir.file("test.bin"), "test", true, false, d).message(),
            dir.file("test.bin") + ": not a directory (give --data-dir the "
                                   "folder of the CIFAR-100 binary files "
                                   "(*.bin))");
}

//===----------------------------------------------------------------------===//
// .npy files and npy datasets
//===----------------------------------------------------------------------===//

namespace {

/// A .npy file as numpy writes it: magic, version, header length, the dict
/// padded with spaces to a multiple of 64 bytes and ended by '\n', data.
std::vector<uint8_t> npy(const std::string &descr, const std::string &shape,
                         const std::vector<uint8_t> &data, int major = 1,
                         const std::string &order = "False") {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + order +
                     ", 'shape': " + shape + ", }";
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + dict.size() + 1) % 64 != 0)
    dict += ' ';
  dict += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), 0};
  size_t n = dict.size();
  out.push_back(uint8_t(n));
  out.push_back(uint8_t(n >> 8));
  if (major != 1) {
    out.push_back(uint8_t(n >> 16));
    out.push_back(uint8_t(n >> 24));
  }
  out.insert(out.end(), dict.begin(), dict.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

template <typename T>
std::vector<uint8_t> bytesOf(const std::vector<T> &values) {
  std::vector<uint8_t> out(values.size() * sizeof(T));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

/// Two 1x2x2 u8 training samples, one test sample, labels <i8.
void writeNpyToy(const TempDir &dir) {
  write(dir.file("train_x.npy"),
        npy("|u1", "(2, 1, 2, 2)", {0, 51, 102, 255, 1, 2, 3, 4}));
  write(dir.file("train_y.npy"), npy("<i8", "(2,)", bytesOf<int64_t>({4, 0})));
  write(dir.file("test_x.npy"), npy("|u1", "(1, 2, 2)", {9, 9, 9, 9}, 2));
  write(dir.file("test_y.npy"), npy("|u1", "(1,)", {1}));
}

} // namespace

TEST(NpyTest, ReadsVersion1And2AndEveryDtype) {
  TempDir dir;
  writeNpyToy(dir);
  Dataset train, test;
  ASSERT_TRUE(loadNpy(dir.path, "train", train).isOk());
  EXPECT_EQ(train.count, 2);
  EXPECT_EQ(train.channels, 1);
  EXPECT_EQ(train.rows, 2);
  EXPECT_EQ(train.cols, 2);
  EXPECT_EQ(train.pixels, (std::vector<uint8_t>{0, 51, 102, 255, 1, 2, 3, 4}));
  EXPECT_EQ(train.labels, (std::vector<int32_t>{4, 0}));
  EXPECT_EQ(train.classes, 5);
  // Version 2.0, N x H x W: one channel.
  ASSERT_TRUE(loadNpy(dir.path, "test", test).isOk());
  EXPECT_EQ(test.channels, 1);
  EXPECT_EQ(test.labels, (std::vector<int32_t>{1}));

  write(dir.file("train_x.npy"),
        npy("<f4", "(1, 3, 1, 1)", bytesOf<float>({0.5f, -2.0f, 1e9f})));
  write(dir.file("train_y.npy"), npy("<i4", "(1,)", bytesOf<int32_t>({7})));
  ASSERT_TRUE(loadNpy(dir.path, "train", train).isOk());
  EXPECT_TRUE(train.isFloat);
  EXPECT_EQ(train.channels, 3);
  EXPECT_EQ(train.values, (std::vector<float>{0.5f, -2.0f, 1e9f}));
  EXPECT_EQ(train.labels, (std::vector<int32_t>{7}));
}

TEST(NpyTest, MalformedFilesAreErrorsNamingTheFile) {
  TempDir dir;
  writeNpyToy(dir);
  std::string x = dir.file("train_x.npy"), y = dir.file("train_y.npy");
  Dataset d;
  auto expectError = [&](const std::string &expected) {
    EXPECT_EQ(loadNpy(dir.path, "train", d).message(), expected);
    writeNpyToy(dir);
  };
  std::vector<uint8_t> bytes = npy("|u1", "(1, 1, 1)", {0});
  bytes[1] = 'X';
  write(x, bytes);
  expectError(x + ": not a .npy file (no \\x93NUMPY magic)");
  bytes = npy("|u1", "(1, 1, 1)", {0});
  bytes[6] = 3;
  write(x, bytes);
  expectError(x + ": .npy format version 3.0 is not supported (1.0 or 2.0)");
  write(x, npy("|u1", "(1, 1, 1)", {0}, 1, "True"));
  expectError(x + ": fortran_order is True; save the array in C order "
                  "(numpy.ascontiguousarray)");
  write(x, npy("<f8", "(1, 1, 1)", std::vector<uint8_t>(8)));
  expectError(x + ": dtype '<f8' is not supported here (expected |u1, <f4)");
  write(y, npy("<u2", "(2,)", std::vector<uint8_t>(4)));
  expectError(y + ": dtype '<u2' is not supported here (expected |u1, <i4, "
                  "<i8)");
  write(x, npy("|u1", "(2, 1, 2, 2)", {1, 2, 3}));
  expectError(x + ": shape (2, 1, 2, 2) of |u1 needs 8 data bytes, the file "
                  "has 3");
  write(x, npy("<f4", "(1, 2, 2)", std::vector<uint8_t>(20)));
  expectError(x + ": shape (1, 2, 2) of <f4 needs 16 data bytes, the file "
                  "has 20");
  bytes = npy("|u1", "(1, 1, 1)", {0});
  bytes.resize(30);
  write(x, bytes);
  expectError(x + ": truncated .npy header (118 bytes announced, 20 present)");
  write(x, npy("|u1", "(3, 1, 2, 2)", std::vector<uint8_t>(12)));
  expectError(x + " has 3 samples but " + y + " has 2 labels");
  write(y, npy("<i4", "(2,)", bytesOf<int32_t>({1, -1})));
  expectError(y + ": label -1 at index 1 is negative (labels are class "
                  "indices from 0)");
  write(y, npy("<i8", "(2,)", bytesOf<int64_t>({int64_t(1) << 40, 0})));
  expectError(y + ": label 1099511627776 at index 0 is too large (at most "
                  "16777215)");
  write(x, npy("|u1", "(2, 4)", std::vector<uint8_t>(8)));
  expectError(x + ": shape (2, 4): expected N x C x H x W or N x H x W");
  write(y, npy("|u1", "(2, 1)", {0, 1}));
  expectError(y + ": shape (2, 1): expected a 1-d array of labels");
  write(x, npy("|u1", "(2, 0, 2, 2)", {}));
  expectError(x + ": shape (2, 0, 2, 2) has a zero dimension");
  write(x,
        npy("<f4", "(2, 1, 1)",
            bytesOf<float>({1.0f, std::numeric_limits<float>::quiet_NaN()})));
  expectError(x + ": element 1 (sample 1) is NaN");
  ::unlink(y.c_str());
  expectError(y + ": no such file (an npy dataset directory holds "
                  "train_x.npy, train_y.npy, test_x.npy and test_y.npy)");
}

TEST(NpyTest, TheHeaderDictIsParsedStrictly) {
  TempDir dir;
  std::string path = dir.file("a.npy");
  NpyArray a;
  auto header = [&](const std::string &dict) {
    std::vector<uint8_t> out = {
        0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, uint8_t(dict.size()), 0};
    out.insert(out.end(), dict.begin(), dict.end());
    out.push_back(7);
    write(path, out);
    return readNpy(path, {"|u1"}, a).message();
  };
  EXPECT_EQ(header("{'descr': '|u1', 'fortran_order': False, 'shape': (1,)}"),
            "");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{1}));
  EXPECT_EQ(a.bytes, (std::vector<uint8_t>{7}));
  EXPECT_EQ(header("{\"descr\": \"|u1\", \"shape\": (1, ), "
                   "\"fortran_order\": False, }\n"),
            "");
  EXPECT_EQ(header("{'descr': '|u1', 'shape': (1,)}"),
            path + ": malformed .npy header at offset 31: missing key "
                   "'fortran_order'");
  EXPECT_EQ(header("{'descr': '|u1', 'fortran_order': False, 'shape': (1,), "
                   "'x': 1}"),
            path + ": malformed .npy header at offset 56: unexpected key 'x' "
                   "(expected 'descr', 'fortran_order', 'shape')");
  EXPECT_EQ(header("{'descr': '|u1', 'descr': '|u1'}"),
            path + ": malformed .npy header at offset 17: key 'descr' given "
                   "twice");
  EXPECT_EQ(header("{'descr': '|u1', 'fortran_order': 0, 'shape': (1,)}"),
            path + ": malformed .npy header at offset 34: expected True or "
                   "False");
  EXPECT_EQ(header("{'descr': '|u1', 'fortran_order': False, 'shape': (-1,)}"),
            path + ": malformed .npy header at offset 51: expected a "
                   "dimension (a non-negative integer)");
  EXPECT_EQ(header("{'descr': '|u1', 'fortran_order': False, 'shape': (1,)} x"),
            path + ": malformed .npy header at offset 56: unexpected text "
                   "after the dict");
  EXPECT_EQ(header("['descr']"),
            path + ": malformed .npy header at offset 0: expected '{'");
}
