//===- FloatFormatArith.h - Reduced float formats in arith ops --*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The scalar arithmetic of the formats FP(e, m, bias) (#qtrain.float), bit
/// for bit as runtime/include/qtrain/runtime/FloatFormat.h, built as arith
/// ops on f32 and i32 values: what qtrain-convert-qtrain-to-linalg lowers
/// round_float, encode_float and decode_float to, and what the CUDA step's
/// fp8 gathers (qtrain-gpu-gemms) and their emulation reuse.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_CONVERSION_FLOATFORMATARITH_H
#define QTRAIN_CONVERSION_FLOATFORMATARITH_H

#include "QTrain/QTrainAttrs.h"

#include "mlir/IR/Builders.h"

namespace mlir::qtrain {

/// `x` (f32) rounded to `format`, half to even; beyond the largest finite
/// value, +-maxFinite (saturate) or +-inf; NaN stays NaN.
Value buildRoundToFormat(OpBuilder &b, Location loc, Value x,
                         FloatFormatAttr format);

/// The code (an i32: sign, exponent field, mantissa) of `x`, a value of
/// `format` (e < 8) or NaN (which takes the largest finite magnitude).
Value buildEncodeFloat(OpBuilder &b, Location loc, Value x,
                       FloatFormatAttr format);

/// The f32 value of `code`, an i32 holding a code of `format`.
Value buildDecodeFloat(OpBuilder &b, Location loc, Value code,
                       FloatFormatAttr format);

/// The exponent k (an i32) of a scaled rounding (`scaled(M)`) of a tensor
/// whose largest magnitude is `amax` (f32): clamp(E(amax) - E(M) +
/// (F(amax) > F(M)), -100, 100) on the f32 fields, as
/// rt::scaledExponent.
Value buildScaledExponent(OpBuilder &b, Location loc, Value amax,
                          float scaledMax);

/// 2^k as an f32, for an i32 `k` in [-126, 127] (the f32 whose exponent
/// field is 127 + k).
Value buildPowerOfTwo(OpBuilder &b, Location loc, Value k);

} // namespace mlir::qtrain

#endif // QTRAIN_CONVERSION_FLOATFORMATARITH_H
