//===- FloatFormat.cpp - Narrow floating-point formats FP(e, m, b) -------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/FloatFormat.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

using namespace qtrain::rt;

Status FloatFormat::verify() const {
  if (exponentBits < 1 || exponentBits > 8)
    return Status::error("exponent bits " + std::to_string(exponentBits) +
                         " out of range [1, 8] in " + toString());
  if (mantissaBits < 0 || mantissaBits > 23)
    return Status::error("mantissa bits " + std::to_string(mantissaBits) +
                         " out of range [0, 23] in " + toString());
  // Bounds the arithmetic below; the real limits are the two that follow.
  if (extraBias < -1000 || extraBias > 1000)
    return Status::error("extra bias " + std::to_string(extraBias) +
                         " out of range in " + toString());
  if (maxExponent() > 127)
    return Status::error("largest values of " + toString() +
                         " exceed fp32's range (max exponent " +
                         std::to_string(maxExponent()) + " > 127)");
  if (minExponent() - mantissaBits < -149)
    return Status::error(
        "smallest subnormal of " + toString() + " is below fp32's (2^" +
        std::to_string(minExponent() - mantissaBits) + " < 2^-149)");
  return Status::success();
}

int FloatFormat::maxExponent() const {
  int e = exponentBits < 1 ? 1 : (exponentBits > 8 ? 8 : exponentBits);
  int maxField = (1 << e) - (hasInfNan() ? 2 : 1);
  return maxField - bias();
}

double FloatFormat::maxFinite() const {
  return std::ldexp(2.0 - std::ldexp(1.0, -mantissaBits), maxExponent());
}

double FloatFormat::overflowThreshold() const {
  return maxFinite() + std::ldexp(1.0, maxExponent() - mantissaBits - 1);
}

double FloatFormat::minNormal() const { return std::ldexp(1.0, minExponent()); }

double FloatFormat::minSubnormal() const {
  return std::ldexp(1.0, minExponent() - mantissaBits);
}

double FloatFormat::underflowThreshold() const {
  return std::ldexp(1.0, minExponent() - mantissaBits - 1);
}

std::string FloatFormat::toString() const {
  return "FP(" + std::to_string(exponentBits) + "," +
         std::to_string(mantissaBits) + "," + std::to_string(extraBias) + ")";
}

namespace {
/// Rounds a non-negative double holding at most 53 significant bits and
/// below 2^52 to an integer, half to even, independent of the rounding
/// mode. Every step is exact.
double roundHalfEven(double y) {
  double lower = std::floor(y);
  double frac = y - lower;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(lower, 2.0) != 0.0))
    return lower + 1.0;
  return lower;
}

/// roundToFormat for a verified format.
float roundVerified(float x, const FloatFormat &format, Overflow overflow) {
  if (std::isnan(x))
    return x;
  float maxFinite = float(format.maxFinite());
  if (std::isinf(x)) {
    if (overflow == Overflow::Infinity)
      return x;
    return std::copysign(maxFinite, x);
  }
  if (x == 0.0f)
    return x;
  double magnitude = std::fabs(double(x));
  int binade; // magnitude = f * 2^binade with f in [0.5, 1)
  std::frexp(magnitude, &binade);
  int exponent = binade - 1; // magnitude in [2^exponent, 2^(exponent+1))
  if (exponent < format.minExponent())
    exponent = format.minExponent(); // subnormal: fixed quantum
  int quantum = exponent - format.mantissaBits;
  // magnitude / 2^quantum < 2^(m+1) <= 2^24: exact, and the rounding
  // below is exact as well.
  double units = roundHalfEven(std::ldexp(magnitude, -quantum));
  double rounded = std::ldexp(units, quantum);
  if (rounded > format.maxFinite()) {
    if (overflow == Overflow::Saturate)
      return std::copysign(maxFinite, x);
    return std::copysign(std::numeric_limits<float>::infinity(), x);
  }
  // The rounded value is a value of the format, hence an exact fp32 value.
  return std::copysign(float(rounded), x);
}
} // namespace

float qtrain::rt::roundToFormat(float x, const FloatFormat &format,
                                Overflow overflow) {
  if (format.verify().failed())
    return std::numeric_limits<float>::quiet_NaN();
  return roundVerified(x, format, overflow);
}

Status qtrain::rt::roundToFormat(const float *in, float *out, size_t count,
                                 const FloatFormat &format, Overflow overflow) {
  Status status = format.verify();
  if (status.failed())
    return status;
  for (size_t i = 0; i < count; ++i)
    out[i] = roundVerified(in[i], format, overflow);
  return Status::success();
}

int qtrain::rt::scaledExponent(float amax, float scaledMax) {
  uint32_t a, m;
  std::memcpy(&a, &amax, 4);
  std::memcpy(&m, &scaledMax, 4);
  int k = int((a >> 23) & 0xFF) - int((m >> 23) & 0xFF) +
          ((a & 0x7FFFFF) > (m & 0x7FFFFF) ? 1 : 0);
  return k < -100 ? -100 : (k > 100 ? 100 : k);
}

Status qtrain::rt::roundScaled(const float *in, float *out, size_t count,
                               const FloatFormat &format, float scaledMax,
                               Overflow overflow) {
  Status status = format.verify();
  if (status.failed())
    return status;
  if (!(scaledMax > 0.0f) || !std::isfinite(scaledMax))
    return Status::error("the largest scaled value must be positive and "
                         "finite, got " +
                         std::to_string(scaledMax));
  float amax = 0.0f;
  for (size_t i = 0; i < count; ++i) {
    float a = std::fabs(in[i]);
    // A NaN element makes the maximum NaN (as arith.maximumf does).
    amax = std::isnan(a) || std::isnan(amax) ? NAN : std::fmax(amax, a);
  }
  int k = scaledExponent(amax, scaledMax);
  float down = std::ldexp(1.0f, -k), up = std::ldexp(1.0f, k);
  for (size_t i = 0; i < count; ++i)
    out[i] = roundVerified(in[i] * down, format, overflow) * up;
  return Status::success();
}
