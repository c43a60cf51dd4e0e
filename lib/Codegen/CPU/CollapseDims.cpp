//===- CollapseDims.cpp - Merge contiguous loops of linalg.generic --------===//
//
// qtrain-collapse-dims: merges runs of adjacent loops of a linalg.generic
// that every operand walks contiguously (the same iterator type, and each
// indexing map keeps the run in order and adjacent) into one loop, through
// tensor.collapse_shape of the operands and tensor.expand_shape of the
// results. A ReLU over [128, 32, 26, 26] becomes one loop of 2768896
// elements; a bias gradient summing [128, 64, 24, 24] over (n, h, w) reads
// rows of 576. Lowered loops then have long innermost trip counts, which
// LLVM vectorizes with full-width vectors and no short remainders.
//
// The merged loops run in the same row-major order as before, so every
// reduction keeps its order and results are the same bit for bit.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_COLLAPSEDIMSPASS
#include "qtrain/Codegen/CPU/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {
struct CollapseDimsPass
    : mlir::qtrain::impl::CollapseDimsPassBase<CollapseDimsPass> {
  void runOnOperation() override;
};
} // namespace

/// The runs of adjacent loops of `op` to merge (each of two or more loops),
/// or none. Only generics on statically shaped tensors without
/// linalg.index (merging would make the body recompute the indices).
static SmallVector<ReassociationIndices> mergeableRuns(linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || !generic.hasPureTensorSemantics() ||
      generic.hasIndexSemantics() || op.hasDynamicShape())
    return {};
  // A strided or partial slice (the windows of a pooling gradient) is not
  // one run of memory: collapsing it would make bufferization copy it out
  // and, for an init, back in (two copies of the slice per op). Only
  // slices that take whole rows of every inner dimension merge.
  for (Value operand : op->getOperands()) {
    auto slice = operand.getDefiningOp<tensor::ExtractSliceOp>();
    if (!slice)
      continue;
    if (!slice.hasUnitStride() ||
        slice.getSourceType().getRank() != slice.getResultType().getRank())
      return {};
    for (int64_t d = 1, e = slice.getResultType().getRank(); d < e; ++d)
      if (slice.getResultType().getDimSize(d) !=
          slice.getSourceType().getDimSize(d))
        return {};
  }
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // Plain dimension maps only (no constant or compound results).
  if (!llvm::all_of(maps, [](AffineMap m) {
        return m.isProjectedPermutation(/*allowZeroInResults=*/false);
      }))
    return {};
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<ReassociationIndices> runs;
  ReassociationIndices run{0};
  auto close = [&]() {
    if (run.size() > 1)
      runs.push_back(run);
  };
  for (int64_t d = 1, e = op.getNumLoops(); d < e; ++d) {
    ReassociationIndices longer(run);
    longer.push_back(d);
    if (iterators[d] == iterators[run.back()] &&
        linalg::areDimSequencesPreserved(maps, {longer})) {
      run = longer;
      continue;
    }
    close();
    run = {d};
  }
  close();
  return runs;
}

namespace {
/// upstream's collapse, keeping the op's discardable attributes (the
/// `qtrain.code_bits` hint of an integer product).
struct CollapseGeneric : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<ReassociationIndices> runs = mergeableRuns(op);
    if (runs.empty())
      return rewriter.notifyMatchFailure(op, "no contiguous loops to merge");
    FailureOr<linalg::CollapseResult> collapsed =
        linalg::collapseOpIterationDims(op, runs, rewriter);
    if (failed(collapsed))
      return rewriter.notifyMatchFailure(op, "could not collapse");
    for (NamedAttribute attr : op->getDiscardableAttrs())
      collapsed->collapsedOp->setAttr(attr.getName(), attr.getValue());
    rewriter.replaceOp(op, collapsed->results);
    return success();
  }
};
} // namespace

void CollapseDimsPass::runOnOperation() {
  RewritePatternSet patterns(&getContext());
  patterns.add<CollapseGeneric>(&getContext());
  if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
    return signalPassFailure();
}
