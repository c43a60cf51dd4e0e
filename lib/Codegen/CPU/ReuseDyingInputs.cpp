//===- ReuseDyingInputs.cpp - Elementwise results in their input's buffer -===//
//
// qtrain-reuse-dying-inputs: an elementwise linalg.generic writes a fresh
// tensor (its init is tensor.empty), so after bufferization its result and
// its input are both alive while it runs, although the input dies there.
// The rounding of convnet's conv2 output held two 18 MiB buffers at once.
// When an input has the result's type, is read through the identity map,
// and is an op's result that only this generic reads (through reshapes),
// it becomes the init as well: bufferization then writes the result into
// the input's buffer, each element after reading it.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_REUSEDYINGINPUTSPASS
#include "qtrain/Codegen/CPU/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

/// Whether `v` is a tensor.empty, possibly reshaped.
bool isEmpty(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (isa<tensor::EmptyOp>(def))
      return true;
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def))
      return false;
    v = def->getOperand(0);
  }
  return false;
}

/// Whether `v` is an op's result that only its one user reads, looking
/// through reshapes (views of the same buffer after bufferization).
bool dies(Value v) {
  while (true) {
    Operation *def = v.getDefiningOp();
    if (!def || !v.hasOneUse())
      return false;
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def))
      return true;
    v = def->getOperand(0);
  }
}

struct ReuseDyingInput : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() ||
        op.getNumLoops() != op.getNumParallelLoops() || op.hasIndexSemantics())
      return rewriter.notifyMatchFailure(op, "not elementwise on tensors");
    for (OpOperand &init : op.getDpsInitsMutable()) {
      if (!isEmpty(init.get()) || op.payloadUsesValueFromOperand(&init) ||
          !op.getMatchingIndexingMap(&init).isIdentity())
        continue;
      for (OpOperand *input : op.getDpsInputOperands()) {
        Value v = input->get();
        if (v.getType() != init.get().getType() || !dies(v) ||
            !op.getMatchingIndexingMap(input).isIdentity())
          continue;
        rewriter.modifyOpInPlace(op, [&] { init.set(v); });
        return success();
      }
    }
    return rewriter.notifyMatchFailure(op, "no dying input to write into");
  }
};

struct ReuseDyingInputsPass
    : mlir::qtrain::impl::ReuseDyingInputsPassBase<ReuseDyingInputsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ReuseDyingInput>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
