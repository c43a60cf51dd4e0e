//===- Quantize.cpp - Reference min/max fake quantization ----------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Quantize.h"

#include <cfloat>
#include <cmath>

using namespace qtrain::rt;

Status qtrain::rt::verifyQuantBits(int bits) {
  if (bits < 0 || bits > kMaxQuantBits)
    return Status::error("quantization bits " + std::to_string(bits) +
                         " out of range [0, 16] (0 = full precision)");
  return Status::success();
}

float qtrain::rt::quantLevels(int bits) {
  return float((uint32_t(1) << bits) - 1);
}

FiniteRange qtrain::rt::finiteRange(const float *x, size_t count) {
  FiniteRange range;
  for (size_t i = 0; i < count; ++i) {
    float v = x[i];
    if (!std::isfinite(v))
      continue;
    if (!range.hasFinite) {
      range.min = range.max = v;
      range.hasFinite = true;
      continue;
    }
    if (v < range.min)
      range.min = v;
    if (v > range.max)
      range.max = v;
  }
  return range;
}

namespace {
Status verifyGridBits(int bits) {
  if (bits < 1 || bits > kMaxQuantBits)
    return Status::error("a quantization grid needs bits in [1, 16], got " +
                         std::to_string(bits));
  return Status::success();
}

float clampScale(float scale) {
  return scale < kMinQuantScale ? kMinQuantScale : scale;
}

/// The grid of (mn, mx) for verified arguments.
QuantGrid gridOf(float mn, float mx, int bits) {
  float levels = quantLevels(bits);
  float width = mx - mn;
  float scale;
  if (std::isinf(width)) {
    // The range spans more than FLT_MAX: divide before subtracting.
    scale = mx / levels - mn / levels;
    if (std::isinf(scale))
      scale = FLT_MAX;
  } else {
    scale = width / levels;
  }
  return {mn, clampScale(scale), levels};
}

/// clamp(v, 0, L) then round half to even; v is not NaN. Exact: v <= L <
/// 2^16, so floor and the fraction are exact.
float clampAndRound(float v, float levels) {
  if (v < 0.0f)
    v = 0.0f;
  else if (v > levels)
    v = levels;
  float lower = std::floor(v);
  float frac = v - lower;
  if (frac > 0.5f || (frac == 0.5f && (uint32_t(lower) & 1u) != 0))
    return lower + 1.0f;
  return lower;
}

float dequantize(float q, const QuantGrid &grid) {
  float y = q * grid.scale;
  y = y + grid.min;
  return y;
}

Status identity(const float *x, float *y, size_t count) {
  if (x != y)
    for (size_t i = 0; i < count; ++i)
      y[i] = x[i];
  return Status::success();
}

Status verifyNoise(Rounding rounding, const PhiloxStream *noise) {
  if (rounding == Rounding::Stochastic && !noise)
    return Status::error("stochastic rounding needs a noise stream");
  return Status::success();
}
} // namespace

Status qtrain::rt::makeQuantGrid(float mn, float mx, int bits, QuantGrid &out) {
  Status status = verifyGridBits(bits);
  if (status.failed())
    return status;
  if (!std::isfinite(mn) || !std::isfinite(mx))
    return Status::error("quantization range must be finite");
  if (mn > mx)
    return Status::error("quantization range min " + std::to_string(mn) +
                         " is greater than max " + std::to_string(mx));
  out = gridOf(mn, mx, bits);
  return Status::success();
}

Status qtrain::rt::makeQuantGridFromRange(float mn, float range, int bits,
                                          QuantGrid &out) {
  Status status = verifyGridBits(bits);
  if (status.failed())
    return status;
  if (!std::isfinite(mn) || !std::isfinite(range))
    return Status::error("quantization min and range must be finite");
  if (range < 0.0f)
    return Status::error("quantization range " + std::to_string(range) +
                         " is negative");
  float levels = quantLevels(bits);
  out = {mn, clampScale(range / levels), levels};
  return Status::success();
}

int qtrain::rt::quantIndexNearest(float x, const QuantGrid &grid) {
  if (std::isnan(x))
    return 0;
  float v = (x - grid.min) / grid.scale;
  return static_cast<int>(clampAndRound(v, grid.levels));
}

float qtrain::rt::fakeQuantNearest(float x, const QuantGrid &grid) {
  if (std::isnan(x))
    return x;
  float v = (x - grid.min) / grid.scale;
  return dequantize(clampAndRound(v, grid.levels), grid);
}

float qtrain::rt::fakeQuantStochastic(float x, const QuantGrid &grid,
                                      float noise) {
  if (std::isnan(x))
    return x;
  float v = (x - grid.min) / grid.scale;
  v = v + noise;
  return dequantize(clampAndRound(v, grid.levels), grid);
}

Status qtrain::rt::fakeQuantWithGrid(const float *x, float *y, size_t count,
                                     const QuantGrid &grid, Rounding rounding,
                                     const PhiloxStream *noise,
                                     uint64_t firstIndex) {
  Status status = verifyNoise(rounding, noise);
  if (status.failed())
    return status;
  if (!std::isfinite(grid.min) || !std::isfinite(grid.scale) ||
      !(grid.scale > 0.0f) || !(grid.levels >= 1.0f) ||
      !(grid.levels <= quantLevels(kMaxQuantBits)))
    return Status::error("invalid quantization grid");
  if (rounding == Rounding::Nearest) {
    for (size_t i = 0; i < count; ++i)
      y[i] = fakeQuantNearest(x[i], grid);
    return Status::success();
  }
  constexpr size_t kChunk = 256;
  float buffer[kChunk];
  for (size_t start = 0; start < count; start += kChunk) {
    size_t n = count - start < kChunk ? count - start : kChunk;
    noise->fillNoise(firstIndex + start, buffer, n);
    for (size_t i = 0; i < n; ++i)
      y[start + i] = fakeQuantStochastic(x[start + i], grid, buffer[i]);
  }
  return Status::success();
}

Status qtrain::rt::fakeQuantPerTensor(const float *x, float *y, size_t count,
                                      int bits, Rounding rounding,
                                      const PhiloxStream *noise) {
  Status status = verifyQuantBits(bits);
  if (status.failed())
    return status;
  if (bits == 0)
    return identity(x, y, count);
  status = verifyNoise(rounding, noise);
  if (status.failed())
    return status;
  FiniteRange range = finiteRange(x, count);
  QuantGrid grid = gridOf(range.min, range.max, bits);
  return fakeQuantWithGrid(x, y, count, grid, rounding, noise);
}

Status qtrain::rt::fakeQuantWithRange(const float *x, float *y, size_t count,
                                      int bits, float mn, float mx,
                                      Rounding rounding,
                                      const PhiloxStream *noise) {
  Status status = verifyQuantBits(bits);
  if (status.failed())
    return status;
  if (bits == 0)
    return identity(x, y, count);
  QuantGrid grid;
  status = makeQuantGrid(mn, mx, bits, grid);
  if (status.failed())
    return status;
  return fakeQuantWithGrid(x, y, count, grid, rounding, noise);
}

Status qtrain::rt::fakeQuantPerChannel(const float *x, float *y,
                                       const std::vector<int64_t> &shape,
                                       int axis, int bits, Rounding rounding,
                                       const PhiloxStream *noise) {
  Status status = verifyQuantBits(bits);
  if (status.failed())
    return status;
  int rank = int(shape.size());
  if (rank == 0)
    return Status::error("per-channel quantization needs a tensor of rank "
                         ">= 1");
  if (axis < -rank || axis >= rank)
    return Status::error("channel axis " + std::to_string(axis) +
                         " out of range for rank " + std::to_string(rank));
  if (axis < 0)
    axis += rank;
  uint64_t outer = 1, inner = 1, count = 1;
  for (int d = 0; d < rank; ++d) {
    if (shape[d] < 0)
      return Status::error("negative dimension " + std::to_string(shape[d]) +
                           " in shape");
    uint64_t dim = uint64_t(shape[d]);
    if (dim != 0 && count > (uint64_t(1) << 62) / dim)
      return Status::error("tensor too large");
    count *= dim;
    if (d < axis)
      outer *= dim;
    if (d > axis)
      inner *= dim;
  }
  if (bits == 0)
    return identity(x, y, size_t(count));
  status = verifyNoise(rounding, noise);
  if (status.failed())
    return status;
  if (count == 0)
    return Status::success();
  uint64_t channels = uint64_t(shape[axis]);

  // All ranges first, so that y may alias x.
  std::vector<FiniteRange> ranges(channels);
  for (uint64_t o = 0; o < outer; ++o) {
    for (uint64_t c = 0; c < channels; ++c) {
      const float *slice = x + (o * channels + c) * inner;
      FiniteRange part = finiteRange(slice, size_t(inner));
      FiniteRange &range = ranges[c];
      if (!part.hasFinite)
        continue;
      if (!range.hasFinite) {
        range = part;
        continue;
      }
      if (part.min < range.min)
        range.min = part.min;
      if (part.max > range.max)
        range.max = part.max;
    }
  }
  std::vector<QuantGrid> grids(channels);
  for (uint64_t c = 0; c < channels; ++c)
    grids[c] = gridOf(ranges[c].min, ranges[c].max, bits);
  for (uint64_t o = 0; o < outer; ++o) {
    for (uint64_t c = 0; c < channels; ++c) {
      uint64_t first = (o * channels + c) * inner;
      status = fakeQuantWithGrid(x + first, y + first, size_t(inner), grids[c],
                                 rounding, noise, first);
      if (status.failed())
        return status;
    }
  }
  return Status::success();
}

void RangeEma::update(float batchMin, float batchMax) {
  float batchRange = batchMax - batchMin;
  runningMin = runningMin * momentum;
  runningMin = runningMin + batchMin * weight;
  runningRange = runningRange * momentum;
  runningRange = runningRange + batchRange * weight;
}

void RangeEma::update(const float *x, size_t count) {
  FiniteRange range = finiteRange(x, count);
  update(range.min, range.max);
}

Status RangeEma::grid(int bits, QuantGrid &out) const {
  return makeQuantGridFromRange(runningMin, runningRange, bits, out);
}

Status RangeEma::fakeQuant(const float *x, float *y, size_t count, int bits,
                           Rounding rounding, const PhiloxStream *noise) const {
  Status status = verifyQuantBits(bits);
  if (status.failed())
    return status;
  if (bits == 0)
    return identity(x, y, count);
  QuantGrid runningGrid;
  status = grid(bits, runningGrid);
  if (status.failed())
    return status;
  return fakeQuantWithGrid(x, y, count, runningGrid, rounding, noise);
}
