//===- FloatFormat.h - Narrow floating-point formats FP(e, m, b) ----------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The floating-point formats of PAPERS.md §4 and rounding fp32 values to
/// them (the result stays an fp32 value: "fake" rounding).
///
/// FP(e, m, x): 1 sign bit, e exponent bits, m mantissa bits, and an extra
/// exponent bias x (may be negative). With E the exponent field:
///   bias          = 2^(e-1) - 1 + x
///   E = 0         zero and subnormals: (-1)^s * 0.M * 2^(1 - bias)
///   E = 1 .. Emax normals: (-1)^s * 1.M * 2^(E - bias)
///   Emax          = 2^e - 1 for e < 8 (the top field is finite: no inf or
///                   NaN codes), 2^e - 2 for e = 8 (top field reserved for
///                   inf/NaN, IEEE-like: FP(8,23,0) is fp32, FP(8,7,0) bf16).
/// Derived values (exact in double):
///   maxFinite           (2 - 2^-m) * 2^(Emax - bias)
///   overflowThreshold   maxFinite + 2^(Emax - bias - m - 1): the smallest
///                       magnitude that rounds past maxFinite
///                       (FP(4,3,4): 31; FP(5,2,0): 122880)
///   minNormal           2^(1 - bias)
///   minSubnormal        2^(1 - bias - m)
///   underflowThreshold  minSubnormal / 2: magnitudes <= it round to zero
///                       (FP(4,3,4): 2^-14; FP(5,2,0): 2^-17)
/// A format is valid when 1 <= e <= 8, 0 <= m <= 23 and its values fit in
/// fp32: Emax - bias <= 127 and 1 - bias - m >= -149 (so every value of
/// the format is an fp32 value and the result of rounding is exact).
///
/// Rounding (roundToFormat) of an fp32 value x:
///   * NaN -> the same NaN.
///   * +-inf -> +-maxFinite if saturating, else +-inf.
///   * +-0 -> +-0.
///   * finite: round to nearest, ties to even, with subnormals (gradual
///     underflow). "Even" is the even integer multiple of the quantum of
///     the lower candidate's binade, which for m >= 1 is the even last
///     mantissa bit (the even code). For m = 0 every normal significand is
///     1, so a tie between two normals goes to the larger magnitude. Results
///     that round to zero keep x's sign. If the rounded magnitude exceeds
///     maxFinite (exactly when |x| >= overflowThreshold) the result is
///     +-maxFinite when saturating, else +-inf, also for e < 8 formats, which
///     have no inf code: inf stands for "overflowed" (PAPERS.md §4: forward
///     roundings saturate, backward ones may produce inf, which dynamic loss
///     scaling detects).
/// Computed exactly in double (frexp/ldexp scaling and an explicit
/// half-to-even step), independent of the floating-point environment.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_FLOATFORMAT_H
#define QTRAIN_RUNTIME_FLOATFORMAT_H

#include "qtrain/runtime/Status.h"

#include <cstddef>
#include <string>

namespace qtrain::rt {

/// What rounding does with magnitudes beyond the largest finite value.
enum class Overflow {
  /// Clamp to +-maxFinite (PAPERS.md §4's forward roundings).
  Saturate,
  /// Produce +-inf (backward roundings).
  Infinity,
};

/// A format FP(e, m, extraBias). Plain data; the derived values are only
/// meaningful for formats that verify().
struct FloatFormat {
  int exponentBits = 8;
  int mantissaBits = 23;
  int extraBias = 0;

  static constexpr FloatFormat fp32() { return {8, 23, 0}; }
  static constexpr FloatFormat bf16() { return {8, 7, 0}; }

  /// Checks the validity rules of the file comment.
  Status verify() const;

  /// 1 + e + m.
  int totalBits() const { return 1 + exponentBits + mantissaBits; }
  /// 2^(e-1) - 1 + extraBias.
  int bias() const {
    // The guard keeps the shift defined for formats that do not verify.
    int e = exponentBits < 1 ? 1 : (exponentBits > 8 ? 8 : exponentBits);
    return (1 << (e - 1)) - 1 + extraBias;
  }
  /// Whether the top exponent field is reserved for inf/NaN (e == 8).
  bool hasInfNan() const { return exponentBits == 8; }
  /// Unbiased exponent of the largest binade, Emax - bias.
  int maxExponent() const;
  /// Unbiased exponent of the smallest normal binade, 1 - bias.
  int minExponent() const { return 1 - bias(); }

  double maxFinite() const;
  double overflowThreshold() const;
  double minNormal() const;
  double minSubnormal() const;
  double underflowThreshold() const;

  /// "FP(e,m,x)".
  std::string toString() const;

  bool operator==(const FloatFormat &other) const {
    return exponentBits == other.exponentBits &&
           mantissaBits == other.mantissaBits && extraBias == other.extraBias;
  }
  bool operator!=(const FloatFormat &other) const { return !(*this == other); }
};

/// Rounds `x` to `format` (see the file comment). `format` must verify;
/// an invalid format yields NaN.
float roundToFormat(float x, const FloatFormat &format, Overflow overflow);

/// out[i] = roundToFormat(in[i], ...) for i < count (out may equal in).
/// Fails, writing nothing, when the format does not verify.
Status roundToFormat(const float *in, float *out, size_t count,
                     const FloatFormat &format, Overflow overflow);

/// Scaled rounding (qtrain.round_float with `scaled(M)`): a tensor whose
/// largest magnitude is `amax` is divided by 2^k before rounding and
/// multiplied by it after, both exact, so that its values fit the format up
/// to M. k comes from the f32 fields of amax and M (exponent field E,
/// mantissa field F):
///   k = clamp(E(amax) - E(M) + (F(amax) > F(M) ? 1 : 0), -100, 100),
/// for a normal amax the smallest integer with amax <= M * 2^k. Zero and
/// subnormal maxima have E = 0, so k = -100 for any M >= 2^-26; inf and
/// NaN have E = 255 (k = 100 for any M < 2^27). The clamp keeps 2^k and
/// 2^-k normal f32 values.
int scaledExponent(float amax, float scaledMax);

/// out[i] = 2^k * roundToFormat(in[i] * 2^-k, format, overflow) for
/// i < count with k = scaledExponent(max_i |in[i]|, scaledMax) (a NaN
/// element makes the maximum NaN). Fails, writing nothing, when the format
/// does not verify or scaledMax is not a positive finite f32.
Status roundScaled(const float *in, float *out, size_t count,
                   const FloatFormat &format, float scaledMax,
                   Overflow overflow);

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_FLOATFORMAT_H
