//===- Batch.cpp - From dataset samples to the bundle's input -------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Batch.h"

#include "qtrain/runtime/Philox.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

using namespace qtrain::rt;

namespace {

std::string shapeName(int64_t c, int64_t h, int64_t w) {
  return std::to_string(c) + "x" + std::to_string(h) + "x" + std::to_string(w);
}

/// Parses a comma-separated list of finite numbers.
bool parseList(const std::string &text, std::vector<float> &out) {
  out.clear();
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma - start);
    char *end = nullptr;
    errno = 0;
    double v = std::strtod(item.c_str(), &end);
    if (item.empty() || *end || errno || !std::isfinite(v))
      return false;
    out.push_back(float(v));
    if (comma == std::string::npos)
      return true;
    start = comma + 1;
  }
}

/// A uniform integer in [0, bound) from a 32-bit word, by multiply-shift.
int below(uint32_t word, uint32_t bound) {
  return int((uint64_t(word) * bound) >> 32);
}

} // namespace

Normalization qtrain::rt::cifar10Normalization() {
  return {{0.4914f, 0.4822f, 0.4465f}, {0.2470f, 0.2435f, 0.2616f}};
}

Normalization qtrain::rt::cifar100Normalization() {
  return {{0.5071f, 0.4865f, 0.4409f}, {0.2673f, 0.2564f, 0.2762f}};
}

Status qtrain::rt::parseNormalization(const std::string &text,
                                      Normalization &out) {
  if (text == "none") {
    out = Normalization();
    return Status::success();
  }
  size_t slash = text.find('/');
  Normalization n;
  if (slash == std::string::npos || !parseList(text.substr(0, slash), n.mean) ||
      !parseList(text.substr(slash + 1), n.std))
    return Status::error("expected MEANS/STDS (comma-separated numbers, "
                         "e.g. 0.4914,0.4822,0.4465/0.2470,0.2435,0.2616) or "
                         "none, got '" +
                         text + "'");
  if (n.mean.size() != n.std.size())
    return Status::error(std::to_string(n.mean.size()) + " means but " +
                         std::to_string(n.std.size()) + " standard deviations");
  for (float s : n.std)
    if (!(s > 0))
      return Status::error("every standard deviation must be positive, got " +
                           std::to_string(s));
  out = std::move(n);
  return Status::success();
}

AugmentDraw qtrain::rt::augmentDraw(uint64_t seed, int64_t step,
                                    int64_t position) {
  PhiloxStream stream(seed, kAugmentStream, static_cast<uint32_t>(step));
  PhiloxCounter words = stream.block(uint64_t(position));
  AugmentDraw d;
  d.rowOffset = below(words[0], 2 * kCropPadding + 1);
  d.colOffset = below(words[1], 2 * kCropPadding + 1);
  d.flip = (words[2] >> 31) != 0;
  return d;
}

Status qtrain::rt::makeInputPipeline(const Dataset &data,
                                     const std::vector<int64_t> &inputShape,
                                     const Normalization &normalization,
                                     bool augment, uint64_t seed,
                                     InputPipeline &out,
                                     std::vector<std::string> &notices) {
  InputPipeline p;
  if (data.isIds) {
    // Ids index tables: any change to them would pick other rows.
    if (inputShape.size() != 2 || inputShape[1] != data.cols)
      return Status::error(
          "the bundle's input is " +
          std::string(inputShape.size() == 2
                          ? std::to_string(inputShape[1]) + " token ids"
                          : "token ids of rank " +
                                std::to_string(inputShape.size())) +
          " per sample, the data has " + std::to_string(data.cols) +
          " (N x S ids for a [batch, S] input)");
    if (!normalization.mean.empty() || !normalization.std.empty())
      return Status::error("token ids are not normalized (drop "
                           "--normalize/--mean/--std)");
    if (augment)
      return Status::error("token ids are not augmented (drop "
                           "--augment=crop-flip)");
    p.dataRows = p.rows = 1;
    p.dataCols = p.cols = data.cols;
    p.isIds = true;
    p.seed = seed;
    out = std::move(p);
    return Status::success();
  }
  p.dataChannels = data.channels;
  p.dataRows = data.rows;
  p.dataCols = data.cols;
  int64_t perSample = 1;
  for (size_t i = 1; i < inputShape.size(); ++i)
    perSample *= inputShape[i];
  if (inputShape.size() == 4) {
    p.channels = inputShape[1];
    p.rows = inputShape[2];
    p.cols = inputShape[3];
  } else if (inputShape.size() == 3) {
    p.channels = 1;
    p.rows = inputShape[1];
    p.cols = inputShape[2];
  } else if (perSample == data.sampleSize()) {
    // A flat input (an MLP's [B, 784]): the data's shape, as it is.
    p.channels = data.channels;
    p.rows = data.rows;
    p.cols = data.cols;
  } else {
    return Status::error("the bundle takes " + std::to_string(perSample) +
                         " inputs per sample, the data has " +
                         shapeName(data.channels, data.rows, data.cols) +
                         " = " + std::to_string(data.sampleSize()));
  }
  std::string mismatch =
      "the bundle takes " + shapeName(p.channels, p.rows, p.cols) +
      " inputs per sample (C x H x W), the data has " +
      shapeName(data.channels, data.rows, data.cols) + " images";
  if (data.channels != p.channels) {
    if (data.channels != 1 || p.channels != 3)
      return Status::error(mismatch + " (only 1 channel into 3 is converted)");
    p.replicate = true;
    notices.push_back("the data has 1 channel and the bundle takes 3: each "
                      "image is replicated into the 3 channels");
  }
  int64_t extraRows = p.rows - data.rows, extraCols = p.cols - data.cols;
  if (extraRows != 0 || extraCols != 0) {
    if (extraRows < 0 || extraCols < 0 || extraRows % 2 || extraCols % 2)
      return Status::error(mismatch +
                           " (only images smaller by an even amount on each "
                           "side are padded)");
    p.padRows = extraRows / 2;
    p.padCols = extraCols / 2;
    notices.push_back("the data's " + std::to_string(data.rows) + "x" +
                      std::to_string(data.cols) +
                      " images are zero-padded, centered, to the bundle's " +
                      std::to_string(p.rows) + "x" + std::to_string(p.cols) +
                      " (after normalization)");
  }
  size_t n = normalization.mean.size();
  if (n != normalization.std.size())
    return Status::error(
        "the normalization has " + std::to_string(n) + " means but " +
        std::to_string(normalization.std.size()) + " standard deviations");
  if (n != 0 && n != 1 && int64_t(n) != data.channels)
    return Status::error("the normalization has " + std::to_string(n) +
                         " values per statistic, the data has " +
                         std::to_string(data.channels) + " channel" +
                         (data.channels == 1 ? "" : "s") +
                         " (give one value, or one per channel)");
  for (int64_t c = 0; c < data.channels; ++c) {
    p.mean.push_back(n == 0 ? 0.0f : normalization.mean[n == 1 ? 0 : c]);
    p.std.push_back(n == 0 ? 1.0f : normalization.std[n == 1 ? 0 : c]);
  }
  p.isFloat = data.isFloat;
  if (!p.isFloat)
    for (int64_t c = 0; c < data.channels; ++c)
      for (int v = 0; v < 256; ++v) {
        float unit = float(v) / 255.0f;
        p.table.push_back((unit - p.mean[size_t(c)]) / p.std[size_t(c)]);
      }
  p.augment = augment;
  p.seed = seed;
  out = std::move(p);
  return Status::success();
}

void qtrain::rt::fillSample(const Dataset &data, int64_t index,
                            const InputPipeline &p, const AugmentDraw *draw,
                            float *out) {
  int64_t plane = p.dataRows * p.dataCols;
  size_t base = size_t(index * p.dataChannels * plane);
  for (int64_t c = 0; c < p.channels; ++c) {
    int64_t dc = p.replicate ? 0 : c;
    const float *table = p.isFloat ? nullptr : &p.table[size_t(dc * 256)];
    float mean = p.mean[size_t(dc)], std = p.std[size_t(dc)];
    for (int64_t y = 0; y < p.rows; ++y)
      for (int64_t x = 0; x < p.cols; ++x) {
        // The fitted image's pixel this output reads, then the data's.
        int64_t fy = y, fx = x;
        if (draw) {
          fy = y + draw->rowOffset - kCropPadding;
          fx = (draw->flip ? p.cols - 1 - x : x) + draw->colOffset -
               kCropPadding;
        }
        int64_t r = fy - p.padRows, q = fx - p.padCols;
        float value = 0.0f;
        if (r >= 0 && r < p.dataRows && q >= 0 && q < p.dataCols) {
          size_t at = base + size_t(dc * plane + r * p.dataCols + q);
          value = p.isFloat ? (data.values[at] - mean) / std
                            : table[data.pixels[at]];
        }
        out[(c * p.rows + y) * p.cols + x] = value;
      }
  }
}

void qtrain::rt::fillSamples(const Dataset &data, const int64_t *indices,
                             size_t count, const InputPipeline &p, float *out) {
  for (size_t i = 0; i < count; ++i)
    fillSample(data, indices[i], p, nullptr, out + i * size_t(p.sampleSize()));
}

void qtrain::rt::fillBatch(const Dataset &data,
                           const std::vector<int64_t> &order, int64_t pos,
                           int64_t batch, int64_t step, const InputPipeline &p,
                           float *x, int64_t *labels) {
  const int64_t *indices = &order[size_t(pos * batch)];
  for (int64_t i = 0; i < batch; ++i) {
    AugmentDraw draw;
    if (p.augment)
      draw = augmentDraw(p.seed, step, i);
    fillSample(data, indices[i], p, p.augment ? &draw : nullptr,
               x + size_t(i * p.sampleSize()));
    labels[i] = data.labels[size_t(indices[i])];
  }
}

void qtrain::rt::fillIdSamples(const Dataset &data, const int64_t *indices,
                               size_t count, int64_t *out) {
  size_t n = size_t(data.sampleSize());
  for (size_t i = 0; i < count; ++i)
    std::copy_n(&data.ids[size_t(indices[i]) * n], n, out + i * n);
}

void qtrain::rt::fillIdBatch(const Dataset &data,
                             const std::vector<int64_t> &order, int64_t pos,
                             int64_t batch, int64_t *x, int64_t *labels) {
  const int64_t *indices = &order[size_t(pos * batch)];
  fillIdSamples(data, indices, size_t(batch), x);
  for (int64_t i = 0; i < batch; ++i)
    labels[i] = data.labels[size_t(indices[i])];
}
