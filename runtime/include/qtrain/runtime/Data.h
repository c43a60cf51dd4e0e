//===- Data.h - Image classification datasets in IDX files ------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// MNIST-format datasets (IDX files, gzip or plain) and the seeded batch
/// order of a training run.
///
/// A dataset directory holds train-images-idx3-ubyte, train-labels-idx1-ubyte,
/// t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte, each optionally with
/// a .gz suffix (the Debian package dataset-fashion-mnist installs the
/// gzipped ones in /usr/share/datasets/fashion-mnist). Images are u8
/// [count, rows, cols], labels u8 [count]; every header field, size and
/// label is checked, and a failure names the file and what is wrong.
///
/// Inputs are normalized per pixel as x = (v / 255 - mean) / std in fp32
/// (Fashion-MNIST: mean 0.2860, std 0.3530, as torchvision's usual
/// Normalize for it).
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

/// One split of an image classification dataset.
struct Dataset {
  int64_t count = 0, rows = 0, cols = 0;
  /// count x rows x cols raw pixels.
  std::vector<uint8_t> pixels;
  /// count labels.
  std::vector<uint8_t> labels;
  /// 1 + the largest label.
  int classes = 0;
};

/// Reads one IDX file (`path`, or `path` + ".gz" when `path` is missing)
/// with the given number of dimensions; `dims` gets the sizes, `data` the
/// bytes. Errors name the file.
Status readIdx(const std::string &path, int rank, std::vector<int64_t> &dims,
               std::vector<uint8_t> &data);

/// Reads split "train" or "test" (t10k) of the MNIST-format directory `dir`.
Status loadDataset(const std::string &dir, const std::string &split,
                   Dataset &out);

/// Normalizes samples `indices` of `data` into `out` (indices.size() x
/// rows x cols floats): (v / 255 - mean) / std, in fp32.
void normalizeBatch(const Dataset &data, const int64_t *indices, size_t count,
                    float mean, float std, float *out);

/// Training batch `pos` of an epoch that visits the samples in `order`:
/// samples order[pos * batch, (pos + 1) * batch) normalized into `x` (as
/// normalizeBatch()) and their labels into `labels`.
void fillBatch(const Dataset &data, const std::vector<int64_t> &order,
               int64_t pos, int64_t batch, float mean, float std, float *x,
               int64_t *labels);

/// The visiting order of epoch `epoch` of a run seeded with `seed`.
std::vector<int64_t> shuffleOrder(uint64_t seed, int64_t epoch, int64_t count);

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_DATA_H
