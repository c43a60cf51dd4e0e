//===- TrainingState.cpp - range_ema and learned_bits as linalg -*- C++ -*-===//
//
// The training state the step updates or reads: an activation's running
// range (qtrain.range_ema), a batch norm's running statistic
// (qtrain.running_stat) and a layer's learned bitwidth (qtrain.learned_bits),
// as the runtime's references compute them.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::qtrain;
using namespace mlir::qtrain::tolinalg;

namespace {

struct RangeEmaLowering : OpConversionPattern<RangeEmaOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(RangeEmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!cast<RankedTensorType>(adaptor.getInput().getType()).hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shapes");
    Location loc = op.getLoc();
    FiniteRange range =
        buildRange(rewriter, loc, adaptor.getInput(), std::nullopt);
    Value mnTensor = range.min, mxTensor = range.max;
    Scalar s{rewriter, loc};
    double m = op.getMomentum().convertToDouble();
    Value momentum = s.f32(m), weight = s.f32(1.0 - m);
    auto fold = [&](Value running, Value batch) {
      Value kept = arith::MulFOp::create(rewriter, loc, running, momentum);
      Value added = arith::MulFOp::create(rewriter, loc, batch, weight);
      return arith::AddFOp::create(rewriter, loc, kept, added).getResult();
    };
    auto at = [&](int64_t i) {
      Value index = arith::ConstantIndexOp::create(rewriter, loc, i);
      return tensor::ExtractOp::create(rewriter, loc, adaptor.getState(),
                                       index);
    };
    Value mn = tensor::ExtractOp::create(rewriter, loc, mnTensor, ValueRange{});
    Value mx = tensor::ExtractOp::create(rewriter, loc, mxTensor, ValueRange{});
    // The state is [min, range], as the reference (RangeEma::update) keeps
    // it: the batch's width first, then each entry folded on its own.
    Value width = arith::SubFOp::create(rewriter, loc, mx, mn);
    Value updated = tensor::FromElementsOp::create(
        rewriter, loc, op.getType(),
        ValueRange{fold(at(0), mn), fold(at(1), width)});
    rewriter.replaceOp(op, updated);
    return success();
  }
};

/// The training step's form: the statistic is the batch's, and the running
/// average folds it in elementwise, in the order the op documents.
struct RunningStatLowering : OpConversionPattern<RunningStatOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(RunningStatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType(0));
    double m = op.getMomentum().convertToDouble();
    double correction = op.getCorrection().convertToDouble();
    Type elementType = type.getElementType();
    AffineMap id = rewriter.getMultiDimIdentityMap(1);
    Value init =
        tensor::EmptyOp::create(rewriter, loc, type.getShape(), elementType);
    auto updated = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type},
        ValueRange{adaptor.getBatch(), adaptor.getRunning()}, ValueRange{init},
        ArrayRef<AffineMap>{id, id, id},
        ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          auto constant = [&](double v) {
            return arith::ConstantOp::create(nb, nl,
                                             nb.getFloatAttr(elementType, v));
          };
          Value batch = args[0];
          if (correction != 1.0)
            batch = arith::MulFOp::create(nb, nl, batch, constant(correction));
          Value kept =
              arith::MulFOp::create(nb, nl, args[1], constant(1.0 - m));
          Value added = arith::MulFOp::create(nb, nl, batch, constant(m));
          linalg::YieldOp::create(
              nb, nl, arith::AddFOp::create(nb, nl, kept, added).getResult());
        });
    rewriter.replaceOp(op, {adaptor.getBatch(), updated.getResult(0)});
    return success();
  }
};

/// b = clamp(rint(p * (max - min) + min), min, max) in f32, NaN -> min:
/// the runtime's ldpBits, operation for operation.
struct LearnedBitsLowering : OpConversionPattern<LearnedBitsOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(LearnedBitsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Scalar s{rewriter, loc};
    Value p = tensor::ExtractOp::create(rewriter, loc, adaptor.getPrecision(),
                                        ValueRange{});
    float lo = float(op.getMinBits()), hi = float(op.getMaxBits());
    Value scaled = arith::MulFOp::create(rewriter, loc, p, s.f32(hi - lo));
    Value value = arith::AddFOp::create(rewriter, loc, scaled, s.f32(lo));
    Value rounded = math::RoundEvenOp::create(rewriter, loc, value);
    // Ordered comparisons: NaN is neither above min nor below max.
    Value aboveMin = s.cmp(arith::CmpFPredicate::OGT, value, s.f32(lo));
    Value belowMax = s.cmp(arith::CmpFPredicate::OLT, value, s.f32(hi));
    Value clamped = s.select(belowMax, rounded, s.f32(hi));
    Value bits = s.select(aboveMin, clamped, s.f32(lo));
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(op, op.getType(),
                                                        ValueRange{bits});
    return success();
  }
};

} // namespace

void tolinalg::populateTrainingStatePatterns(RewritePatternSet &patterns) {
  patterns.add<RangeEmaLowering, RunningStatLowering, LearnedBitsLowering>(
      patterns.getContext());
}
