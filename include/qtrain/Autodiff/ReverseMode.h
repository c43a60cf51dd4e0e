//===- ReverseMode.h - Reverse-mode differentiation on tensors --*- C++ -*-===//
//
// Reverse-mode automatic differentiation of a straight-line function body in
// upstream dialects (linalg, tensor, arith) plus qtrain quantizers. The
// algorithm is a library; qtrain-autodiff is a thin pass around it.
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_AUTODIFF_REVERSEMODE_H
#define QTRAIN_AUTODIFF_REVERSEMODE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::qtrain {

/// Builds the adjoint (gradient) program of a block of ops on tensors.
///
/// Usage: construct over the block, seed the adjoint of the output with
/// `accumulate`, call `run`, then read `getAdjoint` of the values wanted.
/// Only ops whose operands depend on a value in `wrt` ("varied") and whose
/// results have an adjoint are differentiated, and only varied operands
/// receive gradients, so no gradient is computed for the data input.
///
/// The backward products of a quantized layer (an op that
/// qtrain-insert-quant tagged with `qtrain.layer = k`) get the same
/// `qtrain.layer` and `qtrain.product = "input_grad"` or `"weight_grad"`, so
/// later passes can find the three products of each layer.
class ReverseMode {
public:
  ReverseMode(OpBuilder &builder, Block &body, ArrayRef<Value> wrt);

  /// Adds `adjoint` to the adjoint of `primal` (summing with linalg.add).
  void accumulate(Value primal, Value adjoint);
  /// The adjoint of `primal`, or null if nothing flowed to it.
  Value getAdjoint(Value primal) const { return adjoints.lookup(primal); }
  /// Whether `value` depends on a value of `wrt`.
  bool isVaried(Value value) const { return varied.contains(value); }

  /// Differentiates every op of the body before the current insertion point's
  /// ops, in reverse. Emits an error at the first op without a rule.
  LogicalResult run(ArrayRef<Operation *> forwardOps);

  OpBuilder &getBuilder() { return builder; }

  /// A tensor of `type` filled with zeros.
  Value zeros(Location loc, RankedTensorType type);

private:
  LogicalResult differentiate(Operation *op);
  /// Tags the product `adjoint` computes (the gradient of `primal` through a
  /// quantized layer) with the layer's `qtrain.layer` and a `qtrain.product`.
  void tagProduct(Value primal, Value adjoint);

  OpBuilder &builder;
  llvm::DenseMap<Value, Value> adjoints;
  llvm::DenseSet<Value> varied;
  /// While a layer (an op with `qtrain.layer`) is differentiated: its index
  /// and the ops its rule creates.
  IntegerAttr currentLayer;
  llvm::DenseSet<Operation *> created;
};

//===----------------------------------------------------------------------===//
// Rules, one family per file (lib/Autodiff/*Rules.cpp). Each reads the
// adjoints of `op`'s results from `rm` and accumulates into its operands.
// They return failure() after emitting an error on `op`.
//===----------------------------------------------------------------------===//

/// Any linalg structured op whose differentiated operands are accessed
/// through projected permutations (elementwise, broadcasts, transposes,
/// reductions, matmul and its transposed and batched forms): the derivative
/// is derived from the scalar body.
LogicalResult differentiateLinalgOp(ReverseMode &rm, Operation *op);
/// Convolutions (conv_2d_nchw_fchw, conv_2d_nhwc_hwcf, conv_2d_nhwc_fhwc,
/// grouped, depthwise).
LogicalResult differentiateConvolution(ReverseMode &rm, Operation *op);
/// Max and sum pooling (nchw, nhwc).
LogicalResult differentiatePooling(ReverseMode &rm, Operation *op);
/// tensor.pad, expand_shape, collapse_shape, extract_slice, insert_slice,
/// concat.
LogicalResult differentiateTensorOp(ReverseMode &rm, Operation *op);

/// Whether a rule family handles `op`.
bool isConvolution(Operation *op);
bool isPooling(Operation *op);

} // namespace mlir::qtrain

#endif // QTRAIN_AUTODIFF_REVERSEMODE_H
