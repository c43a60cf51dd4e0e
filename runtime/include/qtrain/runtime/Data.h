//===- Data.h - Image classification datasets: IDX, CIFAR, npy --*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The datasets qtrain-run trains on (docs/run.md, "Data"), read into one
/// in-memory form, and the seeded batch order of a training run. Every
/// reader checks every header field, size and label, and a failure names
/// the file and what is wrong.
///
/// Formats:
///   * IDX (MNIST format): train-images-idx3-ubyte, train-labels-idx1-ubyte,
///     t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, each optionally with
///     a .gz suffix (the Debian package dataset-fashion-mnist installs the
///     gzipped ones in /usr/share/datasets/fashion-mnist). u8 [count, rows,
///     cols] images, u8 labels.
///   * CIFAR-10, binary version: data_batch_1.bin .. data_batch_5.bin
///     (train), test_batch.bin (test); records of 1 label byte and 3072
///     pixel bytes (3x32x32, channel-major).
///   * CIFAR-100, binary version: train.bin, test.bin; records of 1 coarse
///     label byte (20 classes), 1 fine label byte (100 classes) and 3072
///     pixel bytes.
///   * npy: train_x.npy, train_y.npy, test_x.npy, test_y.npy; x is
///     N x C x H x W (or N x H x W, one channel) of |u1 or <f4 in C order,
///     y a 1-d array of |u1, <i4 or <i8 labels (readNpy()). For a bundle
///     whose input is token ids (i64), x is instead N x S of |u1, <i4 or
///     <i8 non-negative ids (DataSource::tokenIds).
///
/// Samples stay as the file has them (u8 pixels or fp32 values): a batch is
/// normalized when it is filled (Batch.h), so CIFAR-10's 50000 training
/// images take 150 MiB, not 600.
///
/// Batch order: epoch e of a run with seed S visits the training samples in
/// the permutation shuffleOrder(S, e, count) (a Fisher-Yates shuffle whose
/// random words come from the Philox stream of key S, stream 0x5348 ("SH"),
/// step e), so the order of any step follows from (S, e) alone and a
/// resumed run replays it without saved RNG state. An epoch has
/// floor(count / batch) steps; the remainder of the permutation is not
/// visited that epoch (the compiled step has a fixed batch).
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_DATA_H
#define QTRAIN_RUNTIME_DATA_H

#include "qtrain/runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qtrain::rt {

/// Where dataset-fashion-mnist installs Fashion-MNIST.
constexpr const char *kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
constexpr float kFashionMnistMean = 0.2860f;
constexpr float kFashionMnistStd = 0.3530f;

/// One split of an image classification dataset: `count` samples of
/// channels x rows x cols, C order.
struct Dataset {
  int64_t count = 0, channels = 1, rows = 0, cols = 0;
  /// True: the samples are fp32 values (`values`), taken as they are;
  /// false: u8 pixels (`pixels`), scaled by 1/255 when normalized.
  bool isFloat = false;
  std::vector<uint8_t> pixels;
  std::vector<float> values;
  /// True: the samples are token ids (`ids`, 1 x 1 x S per sample, each
  /// non-negative), copied to an i64 input as they are (never normalized
  /// or augmented).
  bool isIds = false;
  std::vector<int64_t> ids;
  /// count labels, each in [0, classes).
  std::vector<int32_t> labels;
  /// 1 + the largest label.
  int classes = 0;

  /// channels * rows * cols.
  int64_t sampleSize() const { return channels * rows * cols; }
  /// Keeps the first `n` samples (n < count).
  void truncate(int64_t n);
};

/// The on-disk layouts of a dataset directory.
enum class DataFormat { Idx, Cifar10, Cifar100, Npy };

/// How a directory is read: its format and, for CIFAR-100, which label.
struct DataSource {
  DataFormat format = DataFormat::Idx;
  std::string dir;
  /// CIFAR-100: train on the 20 coarse labels instead of the 100 fine ones.
  bool coarseLabels = false;
  /// npy: x holds token ids, for a bundle whose input is i64.
  bool tokenIds = false;
};

/// Reads split "train" or "test" of `source`.
Status loadSplit(const DataSource &source, const std::string &split,
                 Dataset &out);

/// Reads one IDX file (`path`, or `path` + ".gz" when `path` is missing)
/// with the given number of dimensions; `dims` gets the sizes, `data` the
/// bytes. Errors name the file.
Status readIdx(const std::string &path, int rank, std::vector<int64_t> &dims,
               std::vector<uint8_t> &data);

/// Reads split "train" or "test" (t10k) of the MNIST-format directory `dir`.
Status loadDataset(const std::string &dir, const std::string &split,
                   Dataset &out);

/// Reads split "train" or "test" of a CIFAR-10 (`hundred` false) or
/// CIFAR-100 binary directory.
Status loadCifar(const std::string &dir, const std::string &split, bool hundred,
                 bool coarseLabels, Dataset &out);

/// An array read from a .npy file (format version 1.0 or 2.0).
struct NpyArray {
  /// The dtype as the header spells it: "|u1", "<f4", "<i4" or "<i8".
  std::string dtype;
  std::vector<int64_t> shape;
  /// The elements in C order, little-endian, as in the file.
  std::vector<uint8_t> bytes;
};

/// Reads `path` strictly: the magic, the version, the header dict (exactly
/// 'descr', 'fortran_order' False and 'shape'), a dtype in `allowed`, and
/// a data size equal to what the shape implies. Errors name the file.
Status readNpy(const std::string &path, const std::vector<std::string> &allowed,
               NpyArray &out);

/// Reads split "train" or "test" of an npy directory: <split>_x.npy and
/// <split>_y.npy. fp32 samples must be finite; labels non-negative. With
/// `tokenIds`, x is N x S integer token ids, each non-negative.
Status loadNpy(const std::string &dir, const std::string &split, Dataset &out,
               bool tokenIds = false);

/// The visiting order of epoch `epoch` of a run seeded with `seed`.
std::vector<int64_t> shuffleOrder(uint64_t seed, int64_t epoch, int64_t count);

namespace detail {
/// The whole of file `path` (a regular file, File.h), inflated when it is
/// gzip; at most 4 GiB.
Status readAll(const std::string &path, std::vector<uint8_t> &out);
/// Checks that `dir` is an existing directory; `what` names its files in
/// the message ("the IDX files").
Status checkDirectory(const std::string &dir, const std::string &what);
/// Sets `classes` from the labels.
void countClasses(Dataset &d);
} // namespace detail

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_DATA_H
