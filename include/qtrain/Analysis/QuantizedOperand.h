//===- QuantizedOperand.h - The quantizer behind an operand -----*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The quantizer (qtrain.fake_quant) an operand of a product reads, seen
/// through the data movement between them: transposes, paddings and copies
/// (the flipped kernel of a convolution's input gradient). Three passes ask
/// this question, each looking through a different set of ops:
/// qtrain-insert-quant (a weight behind transposes), qtrain-form-kernels
/// (what a kernel pulls in) and qtrain-integer-kernels (what integer codes
/// can replay).
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_ANALYSIS_QUANTIZEDOPERAND_H
#define QTRAIN_ANALYSIS_QUANTIZEDOPERAND_H

#include "QTrain/QTrainOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::qtrain {

/// Which data movement a trace looks through. linalg.transpose always.
struct DataMovementOptions {
  enum class Pads {
    /// No tensor.pad.
    None,
    /// Only a constant +0.0 padding with static shapes and static low and
    /// high sizes: the padding integer codes replay with code 0.
    StaticZero,
    /// Any tensor.pad.
    Any,
  };
  Pads pads = Pads::Any;
  /// Copies: a linalg.generic of one input and one init whose body yields
  /// the input. They may reorder or flip dimensions.
  bool copies = false;
  /// Stops at ops outside this block (the quantizer too); null: any block.
  Block *block = nullptr;
};

/// A value traced back through data movement.
struct QuantizedOperand {
  /// Where the data movement starts: the first value that is not the
  /// result of an op looked through.
  Value source;
  /// The quantizer whose result `source` is; null when there is none.
  FakeQuantOp quant;
  /// The data movement from `source` to the traced value, in program order:
  /// each op reads the previous one's result (the first one reads `source`)
  /// as its operand 0.
  SmallVector<Operation *> chain;

  /// Where dimension `sourceDim` of `source` is in the traced value
  /// (transposes move dimensions, pads keep them). Not for chains that
  /// hold copies.
  int64_t tracedPosition(int64_t sourceDim) const;
  /// Which dimension of `source` dimension `tracedDim` of the traced value
  /// is (the inverse of tracedPosition).
  int64_t sourcePosition(int64_t tracedDim) const;
};

/// Whether `pad` pads with a constant +0.0 and all its sizes are static.
bool isStaticZeroPadding(tensor::PadOp pad);

/// Traces `v` back through the data movement `options` allows to its
/// source, and to the quantizer there if there is one.
QuantizedOperand traceQuantizedOperand(Value v,
                                       const DataMovementOptions &options);

} // namespace mlir::qtrain

#endif // QTRAIN_ANALYSIS_QUANTIZEDOPERAND_H
