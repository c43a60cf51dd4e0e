//===- Quantize.h - Reference min/max fake quantization ---------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The quantizer of CPT (PAPERS.md §1), the single definition compiled
/// kernels are tested against bit for bit (nearest rounding) or by replaying
/// the same noise (stochastic rounding).
///
/// For b bits, with every operation in fp32, in exactly this order, each
/// rounded to nearest even, no FMA contraction:
///   L = 2^b - 1                                   (exact as a float)
///   s = max((mx - mn) / float(L), 1e-8f)
///   v = (x - mn) / s
///   v = v + noise_i                               (stochastic only)
///   v = clamp(v, 0, L)                            (v < 0 -> 0, v > L -> L)
///   q = rint(v)                                   (half to even)
///   y = q * s;  y = y + mn                        (two roundings)
/// This is also the arithmetic of CPT's code ((x + (0*s - mn)) / s, noise,
/// clamp, round, q * s + (mn - 0*s), which are the same fp32 operations).
///
/// noise_i is the Philox noise of element i (Philox.h): i is the element's
/// row-major flat index within the tensor for every variant here (per
/// tensor, per channel, explicit range), plus a caller-given offset for
/// the grid-level entry point, so chunked or parallel evaluations draw
/// the same noise.
///
/// Range: (mn, mx) = (min, max) over the finite elements of the tensor (or
/// of the channel's slice); with no finite element mn = mx = 0. Among equal
/// candidates (+0 and -0) the first in index order wins; which one is
/// chosen never changes y.
///
/// Policies (each follows from the formula unless marked "rule"):
///   * b = 0: identity, full precision (rule); NaN payloads preserved.
///   * b outside [0, 16]: an error (rule). 16 bits is the widest grid whose
///     levels are exact integers in every step above.
///   * NaN element: y = that NaN (rule; it takes no part in the range).
///   * +-inf element: clamped to the grid ends: -inf -> mn (q = 0),
///     +inf -> L * s + mn (q = L).
///   * no finite element: mn = mx = 0, s = 1e-8f; infinities go to the grid
///     ends 0 and L * 1e-8f.
///   * mn == mx: s = 1e-8f and every finite element maps to mn (v = 0; with
///     noise v + noise_i < 0.5 rounds to 0).
///   * mx - mn overflowing to inf (rule): s = max(mx / float(L) -
///     mn / float(L), 1e-8f), and if that is still inf (only possible for
///     b = 1) s = FLT_MAX. So finite inputs never become NaN; they can
///     become +inf where q * s exceeds FLT_MAX, because y = q * s + mn is
///     kept as is rather than rescued with a different formula.
///   * b = 1: two levels, mn and s + mn (= mx up to one rounding).
///   * In-range x (mn <= x <= mx) with nearest rounding: |y - x| <= s/2 up
///     to the fp32 rounding of v and y (a few ulps of max(|mn|, |mx|)).
///   * Stochastic: E[y] = x for in-range x, up to the noise's -2^-25 mean
///     and its 2^-24 granularity.
/// The output may alias the input.
///
/// EMA (PAPERS.md §1, CPT's QuantMeasure): the evaluation grid of an
/// activation uses running statistics of its training batches' min and
/// range = max - min (fp32), both starting at 0 and updated per batch as
///   running = running * float(m) + batch * float(1.0 - m)     (m = 0.9)
/// (float(1.0 - 0.9) == 0.1f, as in PyTorch). Evaluation then uses
/// mn = runningMin, s = max(runningRange / float(L), 1e-8f).
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_QUANTIZE_H
#define QTRAIN_RUNTIME_QUANTIZE_H

#include "qtrain/runtime/Philox.h"
#include "qtrain/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace qtrain::rt {

/// The widest quantization grid: b = 16.
constexpr int kMaxQuantBits = 16;
/// The smallest scale, 1e-8 as a float.
constexpr float kMinQuantScale = 1e-8f;

/// How v is rounded to an integer level.
enum class Rounding {
  /// rint(clamp(v, 0, L)).
  Nearest,
  /// rint(clamp(v + noise_i, 0, L)), noise_i uniform in [-0.5, 0.5).
  Stochastic,
};

/// Fails unless 0 <= bits <= 16.
Status verifyQuantBits(int bits);

/// L = 2^bits - 1 as a float; bits must be in [1, 16].
float quantLevels(int bits);

/// The (min, max) of the finite elements; hasFinite false (and both 0) when
/// there are none.
struct FiniteRange {
  float min = 0.0f;
  float max = 0.0f;
  bool hasFinite = false;
};
FiniteRange finiteRange(const float *x, size_t count);

/// An integer grid: y = q * scale + min for q = 0 .. levels.
struct QuantGrid {
  float min = 0.0f;
  float scale = 1.0f;
  float levels = 1.0f;
};

/// The grid of (mn, mx): s = max((mx - mn) / float(L), 1e-8f) with the
/// overflow rule. Fails for bits outside [1, 16], non-finite mn or mx, or
/// mn > mx.
Status makeQuantGrid(float mn, float mx, int bits, QuantGrid &out);

/// The grid of (mn, range) as CPT evaluates with running statistics:
/// s = max(range / float(L), 1e-8f). Fails for bits outside [1, 16],
/// non-finite values or a negative range.
Status makeQuantGridFromRange(float mn, float range, int bits, QuantGrid &out);

/// One element, nearest rounding (NaN passes through).
float fakeQuantNearest(float x, const QuantGrid &grid);
/// The grid index q in [0, L] that fakeQuantNearest dequantizes, as
/// integer kernels store it (0 for NaN, which has none).
int quantIndexNearest(float x, const QuantGrid &grid);
/// One element, stochastic rounding with the given noise (NaN passes
/// through).
float fakeQuantStochastic(float x, const QuantGrid &grid, float noise);

/// y[j] = fake-quantized x[j] on `grid`, j < count; element j draws the
/// noise of index firstIndex + j from `noise`, which stochastic rounding
/// requires (it is ignored for nearest).
Status fakeQuantWithGrid(const float *x, float *y, size_t count,
                         const QuantGrid &grid, Rounding rounding,
                         const PhiloxStream *noise, uint64_t firstIndex = 0);

/// Per-tensor quantization: the range is that of all `count` elements.
Status fakeQuantPerTensor(const float *x, float *y, size_t count, int bits,
                          Rounding rounding,
                          const PhiloxStream *noise = nullptr);

/// Quantization with a caller-given range (mn <= mx, both finite).
Status fakeQuantWithRange(const float *x, float *y, size_t count, int bits,
                          float mn, float mx, Rounding rounding,
                          const PhiloxStream *noise = nullptr);

/// Per-channel quantization of a row-major tensor of `shape`: one range per
/// index along `axis` (negative axes count from the back, as in numpy),
/// over the slice of elements with that index. Weights of shape
/// [out, in, kh, kw] or [out, in] use axis 0. Every dimension must be >= 0.
Status fakeQuantPerChannel(const float *x, float *y,
                           const std::vector<int64_t> &shape, int axis,
                           int bits, Rounding rounding,
                           const PhiloxStream *noise = nullptr);

/// Running min and range of an activation (CPT's EMA, momentum 0.9).
class RangeEma {
public:
  explicit RangeEma(double emaMomentum = 0.9)
      : momentum(float(emaMomentum)), weight(float(1.0 - emaMomentum)) {}

  /// Folds in one batch's range: range = batchMax - batchMin.
  void update(float batchMin, float batchMax);
  /// Folds in the finite range of a batch (0, 0 when it has none).
  void update(const float *x, size_t count);

  float getMin() const { return runningMin; }
  float getRange() const { return runningRange; }

  /// makeQuantGridFromRange(getMin(), getRange(), bits, out).
  Status grid(int bits, QuantGrid &out) const;
  /// Quantizes with the running grid; bits = 0 is the identity.
  Status fakeQuant(const float *x, float *y, size_t count, int bits,
                   Rounding rounding,
                   const PhiloxStream *noise = nullptr) const;

private:
  float momentum;
  float weight;
  float runningMin = 0.0f;
  float runningRange = 0.0f;
};

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_QUANTIZE_H
