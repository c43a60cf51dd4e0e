//===- GradientExchange.h - Averaging gradients over ranks ------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Data-parallel training averages every gradient over the ranks before the
/// optimizer step (docs/scale-out.md). A GradientExchange lays the gradients
/// out in one flat buffer, in the order the caller gives (the Trainer: the
/// last layer first, as a bucketed exchange that overlapped the backward
/// pass would send them), cuts it into buckets of at most
/// ExchangeOptions::bucketElements elements that never span two tensors,
/// and averages it through a Communicator in one of three wire formats:
///
/// - fp32: the gradients as they are;
/// - bf16: rounded to bfloat16 (nearest even), summed in fp32 and rounded
///   to bf16 again at each partial sum;
/// - int8: per bucket, the largest |g| over all ranks (an fp32 max
///   all-reduce) sets the scale s; each value becomes
///   q = clamp(floor(g * 127/s + u), -127, 127) with u uniform in [0, 1)
///   from Philox (key: the run seed, stream kExchangeStream + rank, step:
///   the training step; element index: the position in the flat buffer),
///   an unbiased stochastic rounding; the q are summed exactly in a wider
///   integer (int16 while ranks * 127 fits, else int32) and the mean is
///   sum * s / (127 * ranks).
///
/// Every rank ends with the same bits (Communicator's contract). A
/// gradient that is not finite on any rank leaves NaN or an infinity in
/// its bucket on every rank, so that the ranks skip or fail the step
/// together.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_GRADIENTEXCHANGE_H
#define QTRAIN_RUNTIME_GRADIENTEXCHANGE_H

#include "qtrain/runtime/Communicator.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qtrain::rt {

enum class ExchangeMode { Fp32, Bf16, Int8 };

/// "fp32", "bf16" or "int8".
const char *toString(ExchangeMode mode);
/// The mode named `text`; false for another name.
bool parseExchangeMode(std::string_view text, ExchangeMode &mode);

struct ExchangeOptions {
  ExchangeMode mode = ExchangeMode::Fp32;
  /// The most elements of a bucket (int8: one scale each); at least 1.
  int64_t bucketElements = 4096;
};

/// The Philox stream of int8 rounding on rank r: kExchangeStream + r
/// ("GX" in the high half).
constexpr uint32_t kExchangeStream = 0x47580000u;

class GradientExchange {
public:
  /// `sizes`: the element count of each gradient tensor, in buffer order.
  GradientExchange(Communicator &communicator, ExchangeOptions options,
                   const std::vector<size_t> &sizes, uint64_t seed);

  /// The flat buffer: tensor k at getOffset(k), getSize() floats in all.
  float *getData() { return data.data(); }
  size_t getOffset(size_t tensor) const { return offsets[tensor]; }
  size_t getSize() const { return data.size(); }
  size_t getNumBuckets() const { return buckets.size(); }

  /// Replaces the buffer with its mean over the ranks; `step` keys the
  /// int8 rounding.
  Status average(uint32_t step);

  /// What one rank puts on the wire per exchange: the elements in the
  /// wire format, plus the int8 scales (4 bytes a bucket).
  int64_t getPayloadBytes() const;
  /// The bytes one rank sends per exchange in a ring (or reduce-scatter
  /// plus all-gather) all-reduce of that payload: 2 (P - 1) / P of it.
  int64_t getSentBytes() const;
  /// The integer type the int8 sums travel in.
  CommType getWireType() const;

private:
  struct Bucket {
    size_t offset = 0, count = 0;
  };
  Status averageInt8(uint32_t step);

  Communicator &communicator;
  ExchangeOptions options;
  uint64_t seed;
  std::vector<float> data;
  std::vector<size_t> offsets;
  std::vector<Bucket> buckets;
  /// Scratch: the wire buffer and the bucket scales.
  std::vector<uint16_t> half;
  std::vector<int32_t> wide;
  std::vector<float> scales;
  std::vector<float> noise;
};

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_GRADIENTEXCHANGE_H
