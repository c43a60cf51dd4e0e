//===- GradientExchange.cpp - Averaging gradients over ranks --------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/GradientExchange.h"

#include "qtrain/runtime/Philox.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace qtrain::rt;

const char *qtrain::rt::toString(ExchangeMode mode) {
  switch (mode) {
  case ExchangeMode::Fp32:
    return "fp32";
  case ExchangeMode::Bf16:
    return "bf16";
  case ExchangeMode::Int8:
    return "int8";
  }
  return "?";
}

bool qtrain::rt::parseExchangeMode(std::string_view text, ExchangeMode &mode) {
  for (ExchangeMode m :
       {ExchangeMode::Fp32, ExchangeMode::Bf16, ExchangeMode::Int8})
    if (text == toString(m)) {
      mode = m;
      return true;
    }
  return false;
}

GradientExchange::GradientExchange(Communicator &communicator,
                                   ExchangeOptions options,
                                   const std::vector<size_t> &sizes,
                                   uint64_t seed)
    : communicator(communicator), options(options), seed(seed) {
  size_t bucket = size_t(std::max<int64_t>(1, options.bucketElements));
  size_t total = 0;
  for (size_t size : sizes) {
    offsets.push_back(total);
    for (size_t at = 0; at < size; at += bucket)
      buckets.push_back({total + at, std::min(bucket, size - at)});
    total += size;
  }
  data.assign(total, 0.0f);
}

CommType GradientExchange::getWireType() const {
  switch (options.mode) {
  case ExchangeMode::Fp32:
    return CommType::F32;
  case ExchangeMode::Bf16:
    return CommType::BF16;
  case ExchangeMode::Int8:
    // The sum of P values in [-127, 127] must fit.
    return int64_t(communicator.getSize()) * 127 <=
                   std::numeric_limits<int16_t>::max()
               ? CommType::I16
               : CommType::I32;
  }
  return CommType::F32;
}

int64_t GradientExchange::getPayloadBytes() const {
  int64_t bytes = int64_t(data.size() * commTypeSize(getWireType()));
  if (options.mode == ExchangeMode::Int8)
    bytes += int64_t(buckets.size() * sizeof(float));
  return bytes;
}

int64_t GradientExchange::getSentBytes() const {
  int64_t ranks = communicator.getSize();
  return 2 * (ranks - 1) * getPayloadBytes() / ranks;
}

Status GradientExchange::average(uint32_t step) {
  float ranks = float(communicator.getSize());
  switch (options.mode) {
  case ExchangeMode::Fp32:
    if (Status s = communicator.allReduce(data.data(), data.size(),
                                          CommType::F32, CommOp::Sum);
        s.failed())
      return s;
    for (float &g : data)
      g /= ranks;
    return Status::success();
  case ExchangeMode::Bf16:
    half.resize(data.size());
    for (size_t i = 0; i < data.size(); ++i)
      half[i] = toBf16(data[i]);
    if (Status s = communicator.allReduce(half.data(), half.size(),
                                          CommType::BF16, CommOp::Sum);
        s.failed())
      return s;
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = fromBf16(half[i]) / ranks;
    return Status::success();
  case ExchangeMode::Int8:
    return averageInt8(step);
  }
  return Status::success();
}

Status GradientExchange::averageInt8(uint32_t step) {
  // The scale of each bucket: its largest |g| over all ranks; a value that
  // is not finite makes it infinite (MPI's max may drop a NaN).
  scales.assign(buckets.size(), 0.0f);
  for (size_t b = 0; b < buckets.size(); ++b) {
    float largest = 0;
    for (size_t i = 0; i < buckets[b].count; ++i) {
      float g = data[buckets[b].offset + i];
      largest = std::isfinite(g) ? std::max(largest, std::fabs(g))
                                 : std::numeric_limits<float>::infinity();
    }
    scales[b] = largest;
  }
  if (Status s = communicator.allReduce(scales.data(), scales.size(),
                                        CommType::F32, CommOp::Max);
      s.failed())
    return s;

  // Stochastic rounding to [-127, 127]: floor(x + u), u in [0, 1).
  PhiloxStream stream(seed, kExchangeStream + uint32_t(communicator.getRank()),
                      step);
  noise.resize(data.size());
  stream.fillNoise(0, noise.data(), noise.size());
  wide.assign(data.size(), 0);
  for (size_t b = 0; b < buckets.size(); ++b) {
    float scale = scales[b];
    if (!(scale > 0.0f) || !std::isfinite(scale))
      continue;
    // g / scale is in [-1, 1] however small the scale (127 / scale would
    // overflow below 127 / FLT_MAX).
    for (size_t i = buckets[b].offset, e = i + buckets[b].count; i < e; ++i) {
      float q = std::floor(data[i] / scale * 127.0f + (noise[i] + 0.5f));
      wide[i] = int32_t(std::clamp(q, -127.0f, 127.0f));
    }
  }
  CommType wire = getWireType();
  if (wire == CommType::I16) {
    half.resize(data.size());
    for (size_t i = 0; i < data.size(); ++i)
      half[i] = uint16_t(int16_t(wide[i]));
    if (Status s =
            communicator.allReduce(half.data(), half.size(), wire, CommOp::Sum);
        s.failed())
      return s;
    for (size_t i = 0; i < data.size(); ++i)
      wide[i] = int16_t(half[i]);
  } else if (Status s = communicator.allReduce(wide.data(), wide.size(), wire,
                                               CommOp::Sum);
             s.failed()) {
    return s;
  }

  float ranks = float(communicator.getSize());
  for (size_t b = 0; b < buckets.size(); ++b) {
    float scale = scales[b];
    float unit = std::isfinite(scale) ? scale / (127.0f * ranks)
                                      : std::numeric_limits<float>::quiet_NaN();
    for (size_t i = buckets[b].offset, e = i + buckets[b].count; i < e; ++i)
      data[i] =
          scale > 0.0f || !std::isfinite(scale) ? float(wide[i]) * unit : 0.0f;
  }
  return Status::success();
}
