//===- ConvToGemm.cpp - Windowed f32 contractions as GEMMs ------*- C++ -*-===//
//
// qtrain-conv-to-gemm: an f32 contraction that reads windows of an operand
// (a convolution's weight gradient) becomes one GEMM on gathered operands
// that qtrain-microkernels serves, accumulating into the op's init laid out
// as GEMM rows. (f32 convolutions themselves stay named ops:
// qtrain-microkernels runs them as implicit GEMMs, with no patch buffer.)
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CPU/Passes.h"

#include "qtrain/Analysis/ConvAsGemm.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_CONVTOGEMMPASS
#include "qtrain/Codegen/CPU/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

/// `v`'s elements [iv, iv + chunk) along dimension 0.
static Value sliceBatch(OpBuilder &b, Location loc, Value v, Value iv,
                        int64_t chunk) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)), sizes,
      strides(type.getRank(), b.getIndexAttr(1));
  offsets[0] = iv;
  sizes.push_back(b.getIndexAttr(chunk));
  for (int64_t d = 1; d < type.getRank(); ++d)
    sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
  return tensor::ExtractSliceOp::create(b, loc, v, offsets, sizes, strides);
}

/// C[m, n] += A[m, k] * B[n, k] in f32, with the discardable attributes
/// (lowering hints) of the contraction it computes.
Value gemmTransposedB(OpBuilder &b, Location loc, Value a, Value bt, Value init,
                      DictionaryAttr hints) {
  MLIRContext *ctx = b.getContext();
  AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx),
             k = getAffineDimExpr(2, ctx);
  SmallVector<AffineMap> maps{AffineMap::get(3, 0, {m, k}, ctx),
                              AffineMap::get(3, 0, {n, k}, ctx),
                              AffineMap::get(3, 0, {m, n}, ctx)};
  SmallVector<utils::IteratorType> iterators{utils::IteratorType::parallel,
                                             utils::IteratorType::parallel,
                                             utils::IteratorType::reduction};
  auto gemm = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{a, bt}, ValueRange{init},
      maps, iterators, [](OpBuilder &nb, Location nl, ValueRange v) {
        Value p = arith::MulFOp::create(nb, nl, v[0], v[1]);
        linalg::YieldOp::create(
            nb, nl, arith::AddFOp::create(nb, nl, v[2], p).getResult());
      });
  gemm->setDiscardableAttrs(hints);
  return gemm.getResult(0);
}

/// An f32 contraction that reads windows of an operand (a convolution's
/// weight gradient: x[n, c, oh + kh, ow + kw] * e[n, f, oh, ow]) as one
/// GEMM on gathered operands, as qtrain-integer-kernels does for codes.
struct WindowedContractionAsGemm : OpRewritePattern<linalg::GenericOp> {
  WindowedContractionAsGemm(MLIRContext *ctx, int64_t maxGathered)
      : OpRewritePattern(ctx), maxGathered(maxGathered) {}
  int64_t maxGathered;

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
    DictionaryAttr hints = op->getDiscardableAttrDictionary();
    Value x = op.getDpsInputs()[0], y = op.getDpsInputs()[1];
    Value init = outputAsGemm(rewriter, loc, op.getDpsInits()[0], maps[2],
                              *loops, ranges);
    int64_t chunk = batchChunk(maps, *loops, ranges);
    std::optional<unsigned> batch = batchLoop(maps, *loops);
    // Chunks slice the operands: static shapes only.
    if (!cast<RankedTensorType>(x.getType()).hasStaticShape() ||
        !cast<RankedTensorType>(y.getType()).hasStaticShape())
      batch = std::nullopt;
    Value c;
    if (!batch || chunk == ranges[*batch]) {
      Value a =
          gatherRowsByK(rewriter, loc, x, maps[0], loops->m, loops->k, ranges);
      Value bt =
          gatherRowsByK(rewriter, loc, y, maps[1], loops->n, loops->k, ranges);
      c = gemmTransposedB(rewriter, loc, a, bt, init, hints);
    } else {
      // One chunk of the batch at a time, accumulating into C.
      SmallVector<int64_t> chunkRanges(ranges);
      chunkRanges[*batch] = chunk;
      Value lb = arith::ConstantIndexOp::create(rewriter, loc, 0);
      Value ub = arith::ConstantIndexOp::create(rewriter, loc, ranges[*batch]);
      Value step = arith::ConstantIndexOp::create(rewriter, loc, chunk);
      auto loop = scf::ForOp::create(
          rewriter, loc, lb, ub, step, ValueRange{init},
          [&](OpBuilder &b, Location l, Value iv, ValueRange acc) {
            Value xs = sliceBatch(b, l, x, iv, chunk);
            Value ys = sliceBatch(b, l, y, iv, chunk);
            Value a = gatherRowsByK(b, l, xs, maps[0], loops->m, loops->k,
                                    chunkRanges);
            Value bt = gatherRowsByK(b, l, ys, maps[1], loops->n, loops->k,
                                     chunkRanges);
            scf::YieldOp::create(b, l,
                                 gemmTransposedB(b, l, a, bt, acc[0], hints));
          });
      c = loop.getResult(0);
    }
    rewriter.replaceOp(op,
                       gemmAsOutput(rewriter, loc, c, maps[2], *loops, ranges));
    return success();
  }

private:
  /// A K loop that is the first dimension of both operands: the batch.
  static std::optional<unsigned> batchLoop(ArrayRef<AffineMap> maps,
                                           const GemmLoops &loops) {
    for (unsigned d : loops.k) {
      // d is result 0 of the map, as a plain dimension, and no other
      // result uses it: slicing dimension 0 slices exactly loop d.
      auto onlyFirst = [&](AffineMap map) {
        auto dim = dyn_cast<AffineDimExpr>(map.getResult(0));
        if (!dim || dim.getPosition() != d)
          return false;
        for (AffineExpr e : map.getResults().drop_front())
          if (e.isFunctionOfDim(d))
            return false;
        return true;
      };
      if (onlyFirst(maps[0]) && onlyFirst(maps[1]))
        return d;
    }
    return std::nullopt;
  }

  /// The batch chunk whose gathered operands fit maxGathered: the batch
  /// halved while it is even and they do not.
  int64_t batchChunk(ArrayRef<AffineMap> maps, const GemmLoops &loops,
                     ArrayRef<int64_t> ranges) const {
    std::optional<unsigned> batch = batchLoop(maps, loops);
    if (!batch || maxGathered <= 0 || ranges[*batch] <= 0)
      return batch ? ranges[*batch] : 1;
    auto product = [&](ArrayRef<unsigned> dims) {
      int64_t p = 1;
      for (unsigned d : dims)
        p *= ranges[d];
      return p;
    };
    int64_t perBatch = (product(loops.m) + product(loops.n)) *
                       product(loops.k) / ranges[*batch];
    int64_t chunk = ranges[*batch];
    while (chunk % 2 == 0 && chunk * perBatch > maxGathered)
      chunk /= 2;
    return chunk;
  }
};

/// An f32 convolution of a zero-padded input (a convolution's input
/// gradient: the output gradient padded by KH - 1, KW - 1, convolved with
/// the flipped filter) whose padded input exceeds maxGathered elements, in
/// batch chunks: each chunk pads its own slice, so the padded copy of the
/// whole batch (convnet's conv2: 25.7 MB) never exists. Images are
/// independent, so each output element is the same sum as before.
struct PaddedConvInBatchChunks : OpRewritePattern<linalg::Conv2DNchwFchwOp> {
  PaddedConvInBatchChunks(MLIRContext *ctx, int64_t maxGathered)
      : OpRewritePattern(ctx), maxGathered(maxGathered) {}
  int64_t maxGathered;

  LogicalResult matchAndRewrite(linalg::Conv2DNchwFchwOp conv,
                                PatternRewriter &rewriter) const override {
    if (maxGathered <= 0 || !conv.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(conv, "not on tensors");
    auto pad = conv.getInputs()[0].getDefiningOp<tensor::PadOp>();
    if (!pad || !pad->hasOneUse())
      return rewriter.notifyMatchFailure(conv, "input is not a padding");
    Value zero = pad.getConstantPaddingValue();
    if (!zero || !matchPattern(zero, m_AnyZeroFloat()))
      return rewriter.notifyMatchFailure(conv, "not a zero padding");
    auto padded = cast<RankedTensorType>(pad.getType());
    auto source = cast<RankedTensorType>(pad.getSourceType());
    auto output = cast<RankedTensorType>(conv.getOutputs()[0].getType());
    if (!padded.hasStaticShape() || !source.hasStaticShape() ||
        !output.hasStaticShape() || !padded.getElementType().isF32() ||
        !output.getElementType().isF32())
      return rewriter.notifyMatchFailure(conv, "not static f32");
    ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
    if (ShapedType::isDynamicShape(low) || ShapedType::isDynamicShape(high) ||
        low[0] != 0 || low[1] != 0 || high[0] != 0 || high[1] != 0)
      return rewriter.notifyMatchFailure(conv, "pads the batch or channels");
    int64_t batch = padded.getDimSize(0);
    if (batch <= 0 || padded.getNumElements() <= 0)
      return rewriter.notifyMatchFailure(conv, "empty");
    int64_t perImage = padded.getNumElements() / batch;
    int64_t chunk = batch;
    while (chunk % 2 == 0 && chunk * perImage > maxGathered)
      chunk /= 2;
    if (chunk == batch)
      return rewriter.notifyMatchFailure(conv, "fits as it is");

    Location loc = conv.getLoc();
    Value lb = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value ub = arith::ConstantIndexOp::create(rewriter, loc, batch);
    Value step = arith::ConstantIndexOp::create(rewriter, loc, chunk);
    auto loop = scf::ForOp::create(
        rewriter, loc, lb, ub, step, ValueRange{conv.getOutputs()[0]},
        [&](OpBuilder &b, Location l, Value iv, ValueRange acc) {
          Value part = sliceBatch(b, l, pad.getSource(), iv, chunk);
          auto partPad = cast<tensor::PadOp>(b.clone(*pad));
          partPad.getSourceMutable().assign(part);
          SmallVector<int64_t> shape(padded.getShape());
          shape[0] = chunk;
          partPad.getResult().setType(padded.clone(shape));
          Value out = sliceBatch(b, l, acc[0], iv, chunk);
          auto partConv = cast<linalg::Conv2DNchwFchwOp>(b.clone(*conv));
          partConv.getInputsMutable()[0].assign(partPad.getResult());
          partConv.getOutputsMutable()[0].assign(out);
          partConv->getResult(0).setType(out.getType());
          SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0)), sizes,
              strides(4, b.getIndexAttr(1));
          offsets[0] = iv;
          sizes.push_back(b.getIndexAttr(chunk));
          for (int64_t d = 1; d < 4; ++d)
            sizes.push_back(b.getIndexAttr(output.getDimSize(d)));
          Value whole = tensor::InsertSliceOp::create(
              b, l, partConv->getResult(0), acc[0], offsets, sizes, strides);
          scf::YieldOp::create(b, l, whole);
        });
    rewriter.replaceOp(conv, loop.getResult(0));
    rewriter.eraseOp(pad);
    return success();
  }
};

struct ConvToGemmPass : mlir::qtrain::impl::ConvToGemmPassBase<ConvToGemmPass> {
  using ConvToGemmPassBase::ConvToGemmPassBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<WindowedContractionAsGemm, PaddedConvInBatchChunks>(
        &getContext(), maxGathered);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
