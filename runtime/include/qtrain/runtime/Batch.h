//===- Batch.h - From dataset samples to the bundle's input -----*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// How a sample of a Dataset (Data.h) becomes one sample of a bundle's
/// input, in this order:
///   1. per-channel normalization x = (v - mean[c]) / std[c] in fp32, v a
///      u8 pixel / 255 or an fp32 value as it is;
///   2. fitting to the bundle's C x H x W, two explicit conveniences only:
///      one data channel into a bundle of 3 (replicated), and images
///      smaller by an even amount per side (zero-padded, centered, after
///      normalization, so the pad value is 0); anything else is an error;
///   3. for training batches with augmentation on, the CIFAR recipe:
///      random crop of the bundle's H x W from the image zero-padded by
///      kCropPadding on each side, then a horizontal flip with p = 0.5.
///      Evaluation batches are never augmented.
///
/// Token ids (Dataset::isIds) skip all three: a sample's ids are copied to
/// the bundle's i64 input as they are (fillIdBatch()), and a pipeline that
/// asks for normalization, a fit or augmentation is refused.
///
/// Augmentation is replayable without saved state: the crop offsets and
/// the flip of the sample at position p of training step t come from
/// Philox block p of the stream (key: the run seed, stream kAugmentStream
/// ("AG"), step t): word 0 gives the row offset, word 1 the column offset
/// (each uniform in [0, 2 * kCropPadding] by multiply-shift), the top bit
/// of word 2 the flip. A resumed run gets the batches of an uninterrupted
/// one.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_BATCH_H
#define QTRAIN_RUNTIME_BATCH_H

#include "qtrain/runtime/Data.h"
#include "qtrain/runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qtrain::rt {

constexpr int kCropPadding = 4;
constexpr uint32_t kAugmentStream = 0x4147u;

/// Per-channel means and standard deviations: one value for every channel,
/// or one per data channel; both empty: none (mean 0, std 1, exact).
struct Normalization {
  std::vector<float> mean, std;
};

/// CIFAR-10's and CIFAR-100's usual per-channel statistics.
Normalization cifar10Normalization();
Normalization cifar100Normalization();

/// Parses "M0,M1,M2/S0,S1,S2" (any equal count of finite numbers, each
/// std positive) or "none".
Status parseNormalization(const std::string &text, Normalization &out);

/// The crop and flip of one training sample.
struct AugmentDraw {
  int rowOffset = kCropPadding, colOffset = kCropPadding;
  bool flip = false;
};

/// The draw of the sample at `position` of training step `step`.
AugmentDraw augmentDraw(uint64_t seed, int64_t step, int64_t position);

/// Everything that turns a dataset's samples into a bundle's input.
struct InputPipeline {
  /// The data's sample shape and the bundle's.
  int64_t dataChannels = 1, dataRows = 0, dataCols = 0;
  int64_t channels = 1, rows = 0, cols = 0;
  /// Data channel 0 goes to every bundle channel.
  bool replicate = false;
  /// Zero rows above (and below) and columns left (and right) of the data.
  int64_t padRows = 0, padCols = 0;
  /// Float data: per data channel mean and std. u8 data: the normalized
  /// value of each pixel value, 256 per data channel.
  bool isFloat = false;
  std::vector<float> mean, std, table;
  /// Token ids, copied as they are (fillIdBatch()).
  bool isIds = false;
  /// Crop and flip training batches, with the run's seed.
  bool augment = false;
  uint64_t seed = 0;

  /// channels * rows * cols.
  int64_t sampleSize() const { return channels * rows * cols; }
};

/// The pipeline from samples of `data` to inputs of shape `inputShape`
/// (the bundle's, batch first: [B, C, H, W], [B, H, W] as C = 1, or any
/// other rank, taken as the data's own shape when the sizes agree).
/// `notices` gets one line per convenience applied. Errors say what the
/// data and the bundle have.
Status makeInputPipeline(const Dataset &data,
                         const std::vector<int64_t> &inputShape,
                         const Normalization &normalization, bool augment,
                         uint64_t seed, InputPipeline &out,
                         std::vector<std::string> &notices);

/// Writes sample `index` of `data` into `out` (p.sampleSize() floats):
/// normalized, fitted and, when `draw` is given, cropped and flipped.
void fillSample(const Dataset &data, int64_t index, const InputPipeline &p,
                const AugmentDraw *draw, float *out);

/// Samples `indices` into `out`, never augmented (evaluation).
void fillSamples(const Dataset &data, const int64_t *indices, size_t count,
                 const InputPipeline &p, float *out);
/// The same for token ids (data.isIds): each sample's ids into `out`.
void fillIdSamples(const Dataset &data, const int64_t *indices, size_t count,
                   int64_t *out);

/// Training batch `pos` of an epoch that visits the samples in `order`,
/// run as training step `step`: samples order[pos * batch, (pos + 1) *
/// batch) into `x`, augmented when p.augment, and their labels.
void fillBatch(const Dataset &data, const std::vector<int64_t> &order,
               int64_t pos, int64_t batch, int64_t step, const InputPipeline &p,
               float *x, int64_t *labels);
/// fillBatch() of token ids (data.isIds): the ids as they are.
void fillIdBatch(const Dataset &data, const std::vector<int64_t> &order,
                 int64_t pos, int64_t batch, int64_t *x, int64_t *labels);

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_BATCH_H
