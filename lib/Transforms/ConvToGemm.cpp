//===- ConvToGemm.cpp - Windowed f32 contractions as GEMMs ------*- C++ -*-===//
//
// qtrain-conv-to-gemm: an f32 contraction that reads windows of an operand
// (a convolution's weight gradient) becomes one GEMM on gathered operands
// that qtrain-microkernels serves, accumulating into the op's init laid out
// as GEMM rows. (f32 convolutions themselves stay named ops:
// qtrain-microkernels runs them as implicit GEMMs, with no patch buffer.)
//
//===----------------------------------------------------------------------===//

#include "qtrain/Transforms/Passes.h"

#include "ConvAsGemm.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_CONVTOGEMMPASS
#include "qtrain/Transforms/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

/// C[m, n] += A[m, k] * B[n, k] in f32.
Value gemmTransposedB(OpBuilder &b, Location loc, Value a, Value bt,
                      Value init) {
  MLIRContext *ctx = b.getContext();
  AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx),
             k = getAffineDimExpr(2, ctx);
  SmallVector<AffineMap> maps{AffineMap::get(3, 0, {m, k}, ctx),
                              AffineMap::get(3, 0, {n, k}, ctx),
                              AffineMap::get(3, 0, {m, n}, ctx)};
  SmallVector<utils::IteratorType> iterators{utils::IteratorType::parallel,
                                             utils::IteratorType::parallel,
                                             utils::IteratorType::reduction};
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{a, bt},
             ValueRange{init}, maps, iterators,
             [](OpBuilder &nb, Location nl, ValueRange v) {
               Value p = arith::MulFOp::create(nb, nl, v[0], v[1]);
               linalg::YieldOp::create(
                   nb, nl, arith::AddFOp::create(nb, nl, v[2], p).getResult());
             })
      .getResult(0);
}

/// An f32 contraction that reads windows of an operand (a convolution's
/// weight gradient: x[n, c, oh + kh, ow + kw] * e[n, f, oh, ow]) as one
/// GEMM on gathered operands, as qtrain-integer-kernels does for codes.
struct WindowedContractionAsGemm : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
        op.getNumDpsInits() != 1)
      return rewriter.notifyMatchFailure(op, "not a binary contraction");
    if (!llvm::all_of(op->getOperandTypes(),
                      [](Type t) { return getElementTypeOrSelf(t).isF32(); }))
      return rewriter.notifyMatchFailure(op, "not f32");
    Block &body = op.getRegion().front();
    bool mulAdd =
        linalg::detail::isContractionBody(body,
                                          [](Operation *mul, Operation *add) {
                                            return isa<arith::MulFOp>(mul) &&
                                                   isa<arith::AddFOp>(add);
                                          }) &&
        llvm::all_of(body, [](Operation &inner) {
          return isa<arith::MulFOp, arith::AddFOp, linalg::YieldOp>(inner);
        });
    if (!mulAdd)
      return rewriter.notifyMatchFailure(op, "not a multiply-accumulate");
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    if (maps[0].isProjectedPermutation() && maps[1].isProjectedPermutation())
      return rewriter.notifyMatchFailure(op, "no windowed operand");
    if (!maps[2].isPermutation() && !maps[2].isProjectedPermutation())
      return rewriter.notifyMatchFailure(op, "output map");
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    FailureOr<GemmLoops> loops = GemmLoops::of(maps, ranges);
    if (failed(loops))
      return rewriter.notifyMatchFailure(op, "not one GEMM");
    Location loc = op.getLoc();
    Value a = gatherRowsByK(rewriter, loc, op.getDpsInputs()[0], maps[0],
                            loops->m, loops->k, ranges);
    Value bt = gatherRowsByK(rewriter, loc, op.getDpsInputs()[1], maps[1],
                             loops->n, loops->k, ranges);
    Value init = outputAsGemm(rewriter, loc, op.getDpsInits()[0], maps[2],
                              *loops, ranges);
    Value c = gemmTransposedB(rewriter, loc, a, bt, init);
    rewriter.replaceOp(op,
                       gemmAsOutput(rewriter, loc, c, maps[2], *loops, ranges));
    return success();
  }
};

struct ConvToGemmPass : mlir::qtrain::impl::ConvToGemmPassBase<ConvToGemmPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<WindowedContractionAsGemm>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
