//===- FoldTransposes.cpp - Read transposed tensors in place ----*- C++ -*-===//
//
// qtrain-fold-transposes: a linalg.generic that reads the result of a
// linalg.transpose reads the transpose's input instead, through the
// permuted indexing map; the copy goes away once nothing else reads it.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_FOLDTRANSPOSESPASS
#include "qtrain/Transforms/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;

namespace {

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
      maps[index] = AffineMap::get(map.getNumDims(), map.getNumSymbols(),
                                   results, op.getContext());
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
