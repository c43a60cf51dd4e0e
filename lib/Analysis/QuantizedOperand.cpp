//===- QuantizedOperand.cpp - The quantizer behind an operand ---*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Analysis/QuantizedOperand.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::qtrain;

bool mlir::qtrain::isStaticZeroPadding(tensor::PadOp pad) {
  Value padding = pad.getConstantPaddingValue();
  FloatAttr zero;
  return padding && matchPattern(padding, m_Constant(&zero)) &&
         zero.getValue().isPosZero() && pad.getResultType().hasStaticShape() &&
         pad.getSourceType().hasStaticShape() &&
         llvm::none_of(pad.getStaticLow(), ShapedType::isDynamic) &&
         llvm::none_of(pad.getStaticHigh(), ShapedType::isDynamic);
}

/// Whether `op` is a copy: a linalg.generic of one input and one init whose
/// body yields the input.
static bool isCopy(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1)
    return false;
  Block *body = generic.getBody();
  return body->getOperations().size() == 1 &&
         body->getTerminator()->getOperand(0) == body->getArgument(0);
}

/// Whether a trace with `options` looks through `op`.
static bool looksThrough(Operation *op, const DataMovementOptions &options) {
  using Pads = DataMovementOptions::Pads;
  if (isa<linalg::TransposeOp>(op))
    return true;
  if (auto pad = dyn_cast<tensor::PadOp>(op))
    return options.pads == Pads::Any ||
           (options.pads == Pads::StaticZero && isStaticZeroPadding(pad));
  return options.copies && isCopy(op);
}

QuantizedOperand
mlir::qtrain::traceQuantizedOperand(Value v,
                                    const DataMovementOptions &options) {
  QuantizedOperand traced;
  while (true) {
    Operation *def = v.getDefiningOp();
    if (!def || (options.block && def->getBlock() != options.block) ||
        !looksThrough(def, options))
      break;
    traced.chain.push_back(def);
    v = def->getOperand(0);
  }
  std::reverse(traced.chain.begin(), traced.chain.end());
  traced.source = v;
  if (Operation *def = v.getDefiningOp();
      def && (!options.block || def->getBlock() == options.block))
    traced.quant = dyn_cast<FakeQuantOp>(def);
  return traced;
}

int64_t QuantizedOperand::tracedPosition(int64_t sourceDim) const {
  int64_t position = sourceDim;
  for (Operation *op : chain) {
    if (isa<tensor::PadOp>(op))
      continue;
    ArrayRef<int64_t> perm = cast<linalg::TransposeOp>(op).getPermutation();
    position = llvm::find(perm, position) - perm.begin();
  }
  return position;
}

int64_t QuantizedOperand::sourcePosition(int64_t tracedDim) const {
  int64_t position = tracedDim;
  for (Operation *op : llvm::reverse(chain)) {
    if (isa<tensor::PadOp>(op))
      continue;
    position = cast<linalg::TransposeOp>(op).getPermutation()[position];
  }
  return position;
}
