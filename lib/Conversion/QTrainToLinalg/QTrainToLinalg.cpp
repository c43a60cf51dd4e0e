//===- QTrainToLinalg.cpp - The qtrain dialect to linalg --------*- C++ -*-===//
//
// convert-qtrain-to-linalg: every qtrain op of a training step as linalg,
// arith and math on tensors (the lowerings: Quantizers.cpp,
// FloatFormats.cpp, TrainingState.cpp), as a dialect conversion in which no
// qtrain op is legal.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Conversion/Passes.h"

#include "Lowerings.h"

#include "QTrain/QTrainDialect.h"
#include "QTrain/QTrainOps.h"

#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_CONVERTQTRAINTOLINALGPASS
#include "qtrain/Conversion/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;
using namespace mlir::qtrain::tolinalg;

namespace {

/// Emits the error of an op that the patterns cannot lower, with the
/// reason, and fails; succeeds on every other op. Checked before the
/// conversion, whose own error ("failed to legalize") does not say why.
static LogicalResult checkLowerable(Operation *op) {
  if (isa<GradQuantOp, GradRoundFloatOp>(op))
    return op->emitError()
           << op->getName()
           << " is not supported by convert-qtrain-to-linalg: run "
              "qtrain-autodiff first, which moves its effect into the "
              "backward pass";
  if (auto round = dyn_cast<RoundFloatOp>(op)) {
    if (!isLowerable(round.getPromotedFormatAttr()))
      return op->emitError()
             << "qtrain.round_float to " << round.getPromotedFormatAttr()
             << " could not be lowered: its range is beyond fp32's";
    if (!isLowerable(round.getFormat()))
      return op->emitError()
             << "qtrain.round_float to " << round.getFormat()
             << " could not be lowered: its range is beyond fp32's "
                "(smallest normal exponent "
             << round.getFormat().getMinNormalExponent()
             << ", at least -126 and at most "
             << 104 + int(round.getFormat().getMantissa())
             << " for its mantissa)";
  }
  if (isa<EncodeFloatOp, DecodeFloatOp>(op)) {
    auto format = op->getAttrOfType<FloatFormatAttr>("format");
    auto promoted = op->getAttrOfType<FloatFormatAttr>("promotedFormat");
    for (FloatFormatAttr f : {format, promoted})
      if (f && f.getMinNormalExponent() < -126)
        return op->emitError()
               << op->getName() << " of " << f
               << " could not be lowered: its normal range is below fp32's";
  }
  if (isa<FakeQuantOp, QuantizeOp, RangeEmaOp, RunningStatOp, RoundFloatOp,
          DropoutOp, CountOverflowOp, EncodeFloatOp, DecodeFloatOp>(op) &&
      !cast<RankedTensorType>(op->getOperand(0).getType()).hasStaticShape())
    return op->emitError() << op->getName()
                           << " could not be lowered (dynamic shapes are not "
                              "supported)";
  return success();
}

struct ConvertQTrainToLinalgPass
    : mlir::qtrain::impl::ConvertQTrainToLinalgPassBase<
          ConvertQTrainToLinalgPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool unlowerable = false;
    module.walk([&](Operation *op) {
      if (failed(checkLowerable(op)))
        unlowerable = true;
    });
    if (unlowerable)
      return signalPassFailure();
    // Every qtrain op is lowered: none may survive into the CPU lowering
    // (qtrain.kernel and qtrain.yield are gone after
    // qtrain-materialize-variants; an op without a pattern is an error).
    ConversionTarget target(getContext());
    target.addIllegalDialect<QTrainDialect>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, scf::SCFDialect,
                           tensor::TensorDialect>();
    RewritePatternSet patterns(&getContext());
    populateQTrainToLinalgConversionPatterns(patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    // Fold what the lowering built: its constants, uniqued at the top of
    // each function, and the arithmetic on them.
    if (failed(applyPatternsGreedily(module, FrozenRewritePatternSet())))
      return signalPassFailure();
  }
};

} // namespace

void mlir::qtrain::populateQTrainToLinalgConversionPatterns(
    RewritePatternSet &patterns) {
  populateQuantizerPatterns(patterns);
  populateTrainingStatePatterns(patterns);
  populateDropoutPatterns(patterns);
  populateFloatFormatPatterns(patterns);
}
