//===- IntegerSums.h - Integer sums of a quantized product ------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What qtrain-integer-kernels builds a product of two quantized operands
/// from: the factors (each operand's quantizer and the data movement
/// between, replayed on its codes and masks) and the integer sums of codes
/// and masks (the four terms), as GEMMs where the layout allows. The pass
/// (IntegerKernels.cpp) decides which products qualify and writes the f64
/// epilogue.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_KERNELS_INTEGERSUMS_H
#define QTRAIN_KERNELS_INTEGERSUMS_H

#include "QTrain/QTrainOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir::qtrain::intkernels {

/// One factor of a product: a quantizer and the zero paddings and
/// transposes between it and the product, in program order.
struct Factor {
  FakeQuantOp quant;
  int64_t bits = 0;
  SmallVector<Operation *> chain;
  /// The position of the factor's channel axis in the product's operand.
  std::optional<int64_t> channelPosition;
  /// The product's loop that indexes the channel, and its output position.
  int64_t channelLoop = -1, channelOutput = -1;
};

/// Traces `v` back through zero paddings and transposes to a quantizer of
/// constant bitwidth.
FailureOr<Factor> traceFactor(Value v);

/// The positions of the product operand each chain op pads.
llvm::SmallBitVector paddedPositions(const Factor &f, unsigned rank);

/// Rebuilds a traced operand's chain of zero paddings and transposes on
/// `source` (codes, a mask, or a per-channel term of the same rank): pads
/// pad with zero of its element type.
Value replayChain(OpBuilder &b, Location loc, ArrayRef<Operation *> chain,
                  Value source);

/// An integer contraction term over the product's loops.
struct Term {
  Value value;
  /// Output positions collapsed to one iteration.
  llvm::SmallBitVector collapsed;
  /// The op that computes the sum (the value may be a reshape of it).
  Operation *sum = nullptr;
  /// Whether the sum's first operand is the second factor's codes.
  bool swapped = false;
};

/// Builds the sums of one product `op` (maps {x, y, out}) at `b`.
struct IntegerSums {
  OpBuilder &b;
  Location loc;
  linalg::LinalgOp op;
  SmallVector<AffineMap> maps;
  SmallVector<utils::IteratorType> iterators;
  SmallVector<int64_t> ranges;
  /// Accumulate every term in i64 (the plain reference form).
  bool wideSums = false;

  /// The loops only `mine` indexes, each only as a whole unpadded position.
  llvm::SmallBitVector privateLoops(unsigned mine, const Factor &f);

  /// The positions of `map`'s results that are loops in `loops`.
  static llvm::SmallBitVector positionsOf(AffineMap map,
                                          const llvm::SmallBitVector &loops);

  /// `shape` with the positions in `positions` set to 1.
  static SmallVector<int64_t> collapse(ArrayRef<int64_t> shape,
                                       const llvm::SmallBitVector &positions);

  /// The 0/1 mask of factor `f` (operand `index`) with the positions in
  /// `ones` collapsed, as i8.
  Value mask(unsigned index, const Factor &f,
             const llvm::SmallBitVector &positions);

  /// The reduction loops along which the mask of operand `mine` is
  /// constant (absent from it, or a whole unpadded position of it) and that
  /// the other operand indexes only as whole positions: the other operand
  /// can be summed over them before the term, which then runs them once.
  llvm::SmallBitVector foldableReductions(unsigned mine, const Factor &f);

  /// `y` (operand `index`) summed over `loops`, as `acc`, with those
  /// positions kept as unit dimensions.
  Value presum(Value y, unsigned index, const llvm::SmallBitVector &loops,
               Type acc);

  /// A zero-filled accumulator tensor.
  Value zeros(ArrayRef<int64_t> shape, Type acc);

  /// init + x * y over `loops` with integer operands widened to `acc`
  /// (operands already of type `acc` are used as they are).
  linalg::GenericOp
  multiplyAccumulate(Value x, Value y, Value init, ArrayRef<AffineMap> loopMaps,
                     ArrayRef<utils::IteratorType> loopIterators, Type acc);

  /// The maps of C[m, n] += A[m, k] * B[k, n] (or B[n, k]) over (m, n, k).
  SmallVector<AffineMap> gemmMaps(bool rhsTransposed);

  /// The iterators of gemmMaps.
  static SmallVector<utils::IteratorType> gemmIterators();

  /// The accumulator for sums of `length` terms each at most `bound`.
  FailureOr<Type> accumulator(int64_t bound);

  /// T1 of a 2-D NCHW/FCHW convolution as a GEMM: the input's codes laid
  /// out as (N*OH*OW) x (C*KH*KW) patches (im2col), times the filter's codes
  /// transposed to (C*KH*KW) x F, and the result put back to N x F x OH x OW.
  /// A GEMM's inner loop runs over F, where the short rows of the direct
  /// convolution (OW = 10) ran as scalar code.
  ///
  /// With `implicit` (8-bit codes the VNNI kernel serves) and 32-bit sums,
  /// T1 stays a convolution of the codes instead, which qtrain-microkernels
  /// runs as an implicit GEMM (no patch buffer).
  FailureOr<Term> convAsGemm(linalg::Conv2DNchwFchwOp conv, Value x, Value w,
                             int64_t bound, bool implicit);

  /// T1 of a generic contraction whose operand reads windows (a
  /// convolution's weight gradient: x[n, c, oh + kh, ow + kw] times
  /// e[n, f, oh, ow]) as a GEMM C[m, n] = sum_k A[m, k] B[n, k]: each operand
  /// gathered by one copy into (its output loops, the reduction loops)
  /// order (im2col for the windowed one), the reduction innermost and
  /// contiguous in both, then C put back in the output's order. Fails (the
  /// caller keeps the direct form) on batch loops or reductions over one
  /// operand only.
  FailureOr<Term> windowsAsGemm(Value x, Value y, int64_t bound);

  /// sum over the reduction loops of x * y, in an integer wide enough for
  /// `bound` (the largest |x * y|) times the reduction length. When
  /// `maskSide` names the operand that is a mask (of factor `f`), the other
  /// one is first summed over the reductions the mask is constant along.
  FailureOr<Term> contract(Value x, Value y, const llvm::SmallBitVector &loops,
                           int64_t bound, int maskSide = -1,
                           const Factor *f = nullptr);
};

} // namespace mlir::qtrain::intkernels

#endif // QTRAIN_KERNELS_INTEGERSUMS_H
