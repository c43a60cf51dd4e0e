//===- Lowerings.h - The pieces of convert-qtrain-to-linalg -----*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What the lowerings of convert-qtrain-to-linalg share: scalar arithmetic
/// in linalg bodies, the vectorizable reductions (ranges, NaN flags,
/// counts), and one pattern family per file: the quantizers
/// (Quantizers.cpp), the float formats (FloatFormats.cpp) and the training
/// state (TrainingState.cpp).
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_CONVERSION_QTRAINTOLINALG_LOWERINGS_H
#define QTRAIN_CONVERSION_QTRAINTOLINALG_LOWERINGS_H

#include "QTrain/QTrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>
#include <utility>

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace mlir::qtrain::tolinalg {

/// Scalar arithmetic inside a linalg body.
struct Scalar {
  OpBuilder &b;
  Location loc;

  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(float(v)));
  }
  Value i32(uint32_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(int32_t(v)));
  }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value isFinite(Value x) {
    Value inf = f32(INFINITY);
    return cmp(arith::CmpFPredicate::ONE, math::AbsFOp::create(b, loc, x), inf);
  }
};

/// The min/max of a tensor's finite elements, and whether any is NaN.
struct FiniteRange {
  Value min, max;
  /// An i8 0-d tensor, non-zero when some element is NaN.
  Value anyNan;
};

/// The min/max of the finite elements of `input`, per tensor (0-d tensors)
/// or per slice along `axis` (1-D), with 0/0 where no element is finite.
FiniteRange buildRange(OpBuilder &b, Location loc, Value input,
                       std::optional<int64_t> axis);

/// 1 (i8) when x is NaN: flags are i8 because i1 memory does not vectorize.
Value nanFlag(OpBuilder &b, Location loc, Value x);

/// The or of two sets of one flag (the combine step of a NaN reduction).
SmallVector<Value> orFlags(OpBuilder &b, Location loc, ValueRange x,
                           ValueRange y);

/// Reduces `input` over all dimensions, or all but `axis`, into one
/// statistic per tensor (0-d results) or per slice (1-D) for each of
/// `inits` (the neutral values): `step` folds an element into the
/// accumulators, `combine` merges two sets of accumulators.
///
/// Written so that LLVM vectorizes it: the innermost loop of a reduction
/// into memory does not vectorize (its accumulator is a store to one
/// address), so when the reduced elements of a statistic are a multiple of
/// L = 256, 64 or 16 in row-major order (per tensor, or per slice along
/// axis 0) they are viewed as [rows, L] and reduced over the rows into L
/// partial accumulators (an elementwise innermost loop), which a second,
/// small reduction combines.
SmallVector<Value> reduceElements(
    OpBuilder &b, Location loc, Value input, std::optional<int64_t> axis,
    ArrayRef<TypedAttr> inits,
    function_ref<SmallVector<Value>(OpBuilder &, Location, Value, ValueRange)>
        step,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange,
                                    ValueRange)>
        combine);

/// Whether `format` can be lowered: its normal range is within fp32's, and
/// the constant 2^(Emin - m + 23) of the subnormal rounding is finite.
bool isLowerable(FloatFormatAttr format);

/// The Philox key of an i64 seed: its low and high 32 bits (i32 values).
std::pair<Value, Value> splitSeed(OpBuilder &b, Location loc, Value seed);

/// The Philox noise of the current element of a linalg body over `shape`
/// (docs/numerics.md section 2): u in [-0.5, 0.5) from the stream (key
/// seedLo/seedHi, counter (element index / 4, stream, step)), the element
/// index row-major over the body's loops; with `quads` the loops are a
/// [N / 4, 4] view (block, word).
Value philoxNoise(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  bool quads, Value seedLo, Value seedHi, Value stream,
                  Value step);

/// fake_quant and quantize (Quantizers.cpp).
void populateQuantizerPatterns(RewritePatternSet &patterns);
/// round_float, encode_float, decode_float and count_overflow
/// (FloatFormats.cpp).
void populateFloatFormatPatterns(RewritePatternSet &patterns);
/// range_ema and learned_bits (TrainingState.cpp).
void populateTrainingStatePatterns(RewritePatternSet &patterns);
/// dropout (Dropout.cpp).
void populateDropoutPatterns(RewritePatternSet &patterns);

} // namespace mlir::qtrain::tolinalg

#endif // QTRAIN_CONVERSION_QTRAINTOLINALG_LOWERINGS_H
