//===- FuseDecodes.cpp - Decode saved codes where they are read -*- C++ -*-===//
//
// qtrain-fuse-decodes: the lowered qtrain.decode_float is an elementwise
// loop that materializes a whole f32 tensor for its reader. Fused into an
// elementwise reader, each value is decoded as it is read, so the f32
// tensor never exists: with qtrain-store-saved, the backward pass of an
// activation reads its 1- or 2-byte codes directly.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CPU/Passes.h"

#include "QTrain/QTrainAttrs.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_FUSEDECODESPASS
#include "qtrain/Codegen/CPU/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

static bool isDecodeLoop(linalg::GenericOp op);

/// An elementwise linalg.generic reading a decode loop: the decode moves
/// into it.
struct FuseDecodeIntoReader : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp reader,
                                PatternRewriter &rewriter) const override {
    if (reader.getNumLoops() != reader.getNumParallelLoops())
      return rewriter.notifyMatchFailure(reader, "not elementwise");
    for (OpOperand *operand : reader.getDpsInputOperands()) {
      auto decode = operand->get().getDefiningOp<linalg::GenericOp>();
      if (!isDecodeLoop(decode) || !linalg::areElementwiseOpsFusable(operand))
        continue;
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, operand);
      if (failed(fused))
        continue;
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceUsesWithIf(original, replacement, [&](OpOperand &use) {
          return use.getOwner() != fused->fusedOp;
        });
      return success();
    }
    return rewriter.notifyMatchFailure(reader, "reads no decode");
  }
};

/// Whether `op` is a decode loop: marked, one input, one output, identity
/// maps, all parallel.
static bool isDecodeLoop(linalg::GenericOp op) {
  return op && op->hasAttr(kDecodeAttrName) && op.getNumDpsInputs() == 1 &&
         op.getNumDpsInits() == 1 &&
         op.getNumLoops() == op.getNumParallelLoops() &&
         llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); });
}

/// A slice of a decoded tensor (the windows of a pooling gradient) is the
/// decode of the slice of the codes: only the slice is decoded.
struct SliceCodesFirst : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractSliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto decode = slice.getSource().getDefiningOp<linalg::GenericOp>();
    if (!isDecodeLoop(decode))
      return rewriter.notifyMatchFailure(slice, "not a slice of a decode");
    RankedTensorType type = slice.getType();
    if (type.getRank() != slice.getSourceType().getRank() ||
        !type.hasStaticShape())
      return rewriter.notifyMatchFailure(slice, "rank-reducing or dynamic");
    Location loc = slice.getLoc();
    Value codes = tensor::ExtractSliceOp::create(
        rewriter, loc, decode.getDpsInputs()[0], slice.getMixedOffsets(),
        slice.getMixedSizes(), slice.getMixedStrides());
    Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                         type.getElementType());
    auto sliced = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{codes}, ValueRange{init},
        decode.getIndexingMapsArray(), decode.getIteratorTypesArray());
    rewriter.cloneRegionBefore(decode.getRegion(), sliced.getRegion(),
                               sliced.getRegion().end());
    sliced->setAttr(kDecodeAttrName, rewriter.getUnitAttr());
    rewriter.replaceOp(slice, sliced.getResult(0));
    return success();
  }
};

struct FuseDecodesPass
    : mlir::qtrain::impl::FuseDecodesPassBase<FuseDecodesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseDecodeIntoReader, SliceCodesFirst>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
