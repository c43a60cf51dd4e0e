//===- FoldTransposes.cpp - Read transposed tensors in place ----*- C++ -*-===//
//
// qtrain-fold-transposes: a linalg.generic that reads the result of a
// linalg.transpose reads the transpose's input instead, through the
// permuted indexing map; the copy goes away once nothing else reads it.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CPU/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_FOLDTRANSPOSESPASS
#include "qtrain/Codegen/CPU/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;

namespace {

/// A float sum of one input is left reading the transposed copy when
/// reading the original would stride its innermost loop: the copy is one
/// pass, a strided reduction one gather per element (130 ms instead of 5
/// for a 4096 x 4096 weight here). Integer sums fold (qtrain-loop-order
/// then puts their contiguous reduction innermost), and so do contractions
/// of two inputs (the GEMMs, which the microkernels read with any strides)
/// and elementwise ops.
bool keepsReductionContiguous(linalg::GenericOp op, AffineMap folded) {
  if (op.getNumDpsInputs() != 1 || op.getNumReductionLoops() == 0)
    return true;
  if (llvm::all_of(op->getOperandTypes(), [](Type t) {
        return isa<IntegerType>(getElementTypeOrSelf(t));
      }))
    return true;
  if (folded.getNumResults() == 0)
    return true;
  auto last = dyn_cast<AffineDimExpr>(folded.getResults().back());
  return last && last.getPosition() == op.getNumLoops() - 1;
}

struct ReadThroughTranspose : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(op, "not on tensors");
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<Value> inputs(op.getInputs());
    bool changed = false;
    for (auto [index, input] : llvm::enumerate(inputs)) {
      auto transpose = input.getDefiningOp<linalg::TransposeOp>();
      if (!transpose || !transpose.hasPureTensorSemantics())
        continue;
      // Result dim i is input dim perm[i]: read input dim perm[i] where the
      // generic read result dim i.
      ArrayRef<int64_t> perm = transpose.getPermutation();
      AffineMap map = maps[index];
      SmallVector<AffineExpr> results(map.getNumResults());
      for (auto [i, p] : llvm::enumerate(perm))
        results[p] = map.getResult(i);
      AffineMap folded = AffineMap::get(map.getNumDims(), map.getNumSymbols(),
                                        results, op.getContext());
      if (!keepsReductionContiguous(op, folded))
        continue;
      maps[index] = folded;
      inputs[index] = transpose.getInput();
      changed = true;
    }
    if (!changed)
      return rewriter.notifyMatchFailure(op, "no transposed input");
    rewriter.modifyOpInPlace(op, [&] {
      op.getInputsMutable().assign(inputs);
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    return success();
  }
};

struct FoldTransposesPass
    : mlir::qtrain::impl::FoldTransposesPassBase<FoldTransposesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ReadThroughTranspose>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
