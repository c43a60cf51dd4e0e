//===- Fp8ErrorProducts.cpp - Products of fp8 errors on tensor cores ------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
//
// In the CUDA step of a bundle with fp8 errors (--grad-format=e5m2), a
// product of a scaled e5m2 error and a fixed-point factor (a weight
// gradient dW = sum E * A) becomes an fp8 (or bf16) GEMM on exact operands
// plus a correction:
//
//   sum E * (s c + l') = 2^k (s sum v * c + l' sum v)
//
// with v = E 2^-k the error's e5m2 values and c the factor's centred codes.
// docs/passes/fp8-error-products.md.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Analysis/Elementwise.h"
#include "qtrain/Analysis/MulAddBody.h"
#include "qtrain/Analysis/QuantizedOperand.h"
#include "qtrain/Codegen/CUDA/Passes.h"
#include "qtrain/Conversion/FloatFormatArith.h"

#include "QTrain/QTrainDialect.h"
#include "QTrain/QTrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Remarks.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_FP8ERRORPRODUCTSPASS
#include "qtrain/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

struct Fp8ErrorProductsPass
    : mlir::qtrain::impl::Fp8ErrorProductsPassBase<Fp8ErrorProductsPass> {
  using Fp8ErrorProductsPassBase::Fp8ErrorProductsPassBase;
  void runOnOperation() override;
};

/// A product this pass rewrites: which input is the error, the error's
/// rounding, and the fixed-point factor on the other input.
struct ErrorProduct {
  linalg::LinalgOp op;
  unsigned errorInput;
  RoundFloatOp rounding;
  QuantizedOperand factor;
  int64_t bits;
  /// Whether l' = 0: the factor is its own centred codes (a quantizer on
  /// exactly [-2^(b-1), 2^(b-1) - 1], input-grad=fp8's weight), so the
  /// product needs no column sums of the error.
  bool centred = false;
};

} // namespace

/// Whether `round` is an e5m2 error of grad-format=e5m2: FP(5, 2, 0) scaled
/// to at most e5m2's largest value, so that x * 2^-k are e5m2 values.
static bool isE5m2Error(RoundFloatOp round) {
  FloatFormatAttr format = round.getFormat();
  FloatAttr scaledMax = round.getScaledMaxAttr();
  return scaledMax && format.getExponent() == 5 && format.getMantissa() == 2 &&
         format.getBias() == 0 &&
         scaledMax.getValueAsDouble() <= double(kE5m2Max);
}

/// The e5m2 error rounding whose values `v` holds: its result (through zero
/// padding and transposes in `v`'s block: an input gradient's rounding,
/// input-grad=fp8), or an argument of a function every use of which is a
/// call passing the results of such roundings with one format and scale
/// (the step's variant functions, which the step calls from its precision
/// switch).
static RoundFloatOp errorRoundingOf(Value v, ModuleOp module) {
  DataMovementOptions moves;
  moves.pads = DataMovementOptions::Pads::StaticZero;
  moves.block = v.getParentBlock();
  v = traceQuantizedOperand(v, moves).source;
  if (auto round = v.getDefiningOp<RoundFloatOp>())
    return isE5m2Error(round) ? round : RoundFloatOp();
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg)
    return {};
  auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (!fn || arg.getOwner() != &fn.getBody().front())
    return {};
  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(fn, module);
  if (!uses || uses->empty())
    return {};
  RoundFloatOp first;
  for (const SymbolTable::SymbolUse &use : *uses) {
    auto call = dyn_cast<func::CallOp>(use.getUser());
    if (!call || call.getNumOperands() != fn.getNumArguments())
      return {};
    auto round =
        call.getOperand(arg.getArgNumber()).getDefiningOp<RoundFloatOp>();
    if (!round || !isE5m2Error(round) ||
        (first && round.getScaledMaxAttr() != first.getScaledMaxAttr()))
      return {};
    first = first ? first : round;
  }
  return first;
}

/// The product `op` as an ErrorProduct, or why not.
static FailureOr<ErrorProduct> match(linalg::LinalgOp op, ModuleOp module,
                                     std::string &why) {
  ErrorProduct p;
  p.op = op;
  int errors = 0;
  for (unsigned i = 0; i < 2; ++i)
    if (RoundFloatOp round = errorRoundingOf(op.getDpsInputs()[i], module)) {
      p.errorInput = i;
      p.rounding = round;
      ++errors;
    }
  if (errors != 1)
    return failure(); // Not a product of fp8 errors: nothing to say.
  DataMovementOptions options;
  options.pads = DataMovementOptions::Pads::StaticZero;
  options.block = op->getBlock();
  p.factor =
      traceQuantizedOperand(op.getDpsInputs()[1 - p.errorInput], options);
  FakeQuantOp quant = p.factor.quant;
  std::optional<int64_t> bits = quant ? quant.getConstantBits() : std::nullopt;
  if (bits == 0)
    return failure(); // The full-precision variant: f32 by design.
  if (!bits || *bits < 1 || *bits > 8) {
    why = "its other factor is not a fixed-point quantizer of 1 to 8 bits "
          "seen through transposes";
    return failure();
  }
  p.bits = *bits;
  if (quant.getGranularity().getAxis()) {
    why = "its other factor is quantized per channel";
    return failure();
  }
  double half = double(int64_t(1) << (p.bits - 1));
  FloatAttr low, high;
  // (A `width` quantizer's second operand is its range's width: not this.)
  p.centred = quant.getMin() && quant.getMax() && !quant.getWidth() &&
              matchPattern(quant.getMin(), m_Constant(&low)) &&
              matchPattern(quant.getMax(), m_Constant(&high)) &&
              low.getValueAsDouble() == -half &&
              high.getValueAsDouble() == half - 1.0;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!maps[2].isProjectedPermutation()) {
    why = "its output is not a projection of its loops";
    return failure();
  }
  if (p.centred)
    return p; // No column sums of the error: any contraction.
  // The correction sums the error over the reductions, which must be its
  // own loops; the parallel loops are the output's.
  AffineMap errorMap = maps[p.errorInput];
  for (auto [loop, iterator] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (iterator == utils::IteratorType::reduction &&
        !errorMap.isFunctionOfDim(loop)) {
      why = "a reduction loop does not index the error";
      return failure();
    }
    if (iterator == utils::IteratorType::parallel &&
        !maps[2].isFunctionOfDim(loop)) {
      why = "a parallel loop is not an output dimension";
      return failure();
    }
  }
  if (!errorMap.isProjectedPermutation(/*allowZeroInResults=*/false)) {
    why = "the error is not read through a projection of the loops";
    return failure();
  }
  return p;
}

/// The zero padding of `factor`'s chain at each position of the product's
/// operand: (low, high), summed over its pads, moved by its transposes.
static SmallVector<std::pair<int64_t, int64_t>>
paddingOf(const QuantizedOperand &factor) {
  int64_t rank = cast<RankedTensorType>(factor.source.getType()).getRank();
  SmallVector<std::pair<int64_t, int64_t>> padding(rank, {0, 0});
  for (Operation *moved : factor.chain) {
    if (auto pad = dyn_cast<tensor::PadOp>(moved)) {
      for (int64_t d = 0; d < rank; ++d) {
        padding[d].first += pad.getStaticLow()[d];
        padding[d].second += pad.getStaticHigh()[d];
      }
      continue;
    }
    ArrayRef<int64_t> perm = cast<linalg::TransposeOp>(moved).getPermutation();
    SmallVector<std::pair<int64_t, int64_t>> next(rank);
    for (int64_t d = 0; d < rank; ++d)
      next[d] = padding[perm[d]];
    padding = next;
  }
  return padding;
}

/// A zero-filled f32 tensor of `shape`.
static Value zeros(OpBuilder &b, Location loc, ArrayRef<int64_t> shape) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

/// Replaces `op` by `y` and erases the fake-quantized factor of `p` when
/// nothing else reads it.
static void finish(linalg::LinalgOp op, Value y, const ErrorProduct &p) {
  op->replaceAllUsesWith(ValueRange{y});
  op->erase();
  for (Operation *moved : llvm::reverse(p.factor.chain))
    if (moved->use_empty())
      moved->erase();
  if (p.factor.quant->use_empty())
    p.factor.quant->erase();
}

/// Rewrites `p` (docs/passes/fp8-error-products.md).
static void rewrite(ErrorProduct p, bool exactScale) {
  linalg::LinalgOp op = p.op;
  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  Value error = op.getDpsInputs()[p.errorInput];
  auto errorType = cast<RankedTensorType>(error.getType());
  unsigned errorRank = errorType.getRank();
  float scaledMax = float(p.rounding.getScaledMaxAttr().getValueAsDouble());

  // The error's largest magnitude, and v = E * 2^-k: e5m2 values (k from
  // the rounded error is the rounding's own k, or one less where its
  // largest element rounded down to M / 2; either way v is on e5m2's grid).
  Value amax = zeros(b, loc, {});
  amax =
      linalg::GenericOp::create(
          b, loc, TypeRange{amax.getType()}, ValueRange{error},
          ValueRange{amax},
          ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(errorRank, ctx),
                              AffineMap::get(errorRank, 0, {}, ctx)},
          SmallVector<utils::IteratorType>(errorRank,
                                           utils::IteratorType::reduction),
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value abs = math::AbsFOp::create(nb, nl, a[0]);
            linalg::YieldOp::create(
                nb, nl,
                arith::MaximumFOp::create(nb, nl, a[1], abs).getResult());
          })
          .getResult(0);
  AffineMap errorId = AffineMap::getMultiDimIdentityMap(errorRank, ctx);
  AffineMap errorScalar = AffineMap::get(errorRank, 0, {}, ctx);
  auto powerOfTwo = [&](OpBuilder &nb, Location nl, Value amaxValue,
                        bool inverse) {
    Value k = buildScaledExponent(nb, nl, amaxValue, scaledMax);
    if (inverse)
      k = arith::SubIOp::create(
          nb, nl, arith::ConstantOp::create(nb, nl, nb.getI32IntegerAttr(0)),
          k);
    return buildPowerOfTwo(nb, nl, k);
  };
  Value v = buildElementwise(
      b, loc, errorType.getShape(), f32, ValueRange{error, amax},
      ArrayRef<AffineMap>{errorId, errorScalar},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::MulFOp::create(nb, nl, a[0],
                                     powerOfTwo(nb, nl, a[1], true))
            .getResult();
      });

  // The factor's centred codes as f32 (small integers, exact), through the
  // factor's transposes.
  FakeQuantOp q = p.factor.quant;
  auto inputType = cast<RankedTensorType>(q.getInput().getType());
  auto statType = RankedTensorType::get({}, f32);
  auto quantize = QuantizeOp::create(
      b, q.getLoc(),
      RankedTensorType::get(inputType.getShape(),
                            QuantizeOp::getCodeType(ctx, p.bits)),
      statType, statType, q.getInput(),
      b.getI32IntegerAttr(static_cast<int32_t>(p.bits)), q.getMin(), q.getMax(),
      q.getSeed(), q.getStep(), q.getRoleAttr(), q.getRoundingAttr(),
      q.getGranularityAttr(), q.getStreamAttr(), q.getWidthAttr());
  AffineMap inputId =
      AffineMap::getMultiDimIdentityMap(inputType.getRank(), ctx);
  Value codes = buildElementwise(
      b, loc, inputType.getShape(), f32, ValueRange{quantize.getCodes()},
      ArrayRef<AffineMap>{inputId},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::SIToFPOp::create(nb, nl, nb.getF32Type(), a[0])
            .getResult();
      });
  IRMapping chain;
  chain.map(p.factor.source, codes);
  for (Operation *moved : p.factor.chain)
    codes = b.clone(*moved, chain)->getResult(0);

  // T1 = sum v * c on the tensor cores: the codes are e4m3 values up to 5
  // bits (|c| <= 16), bf16 values up to 8; v is e5m2, declared as the
  // format whose fp8 form under the step's fp8 scale is e5m2 itself.
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  IRMapping mapping;
  mapping.map(error, v);
  mapping.map(op.getDpsInputs()[1 - p.errorInput], codes);
  mapping.map(op.getDpsInits()[0], zeros(b, loc, resultType.getShape()));
  Operation *t1 = b.clone(*op, mapping);
  FloatFormatAttr codeFormat =
      p.bits <= 5 ? FloatFormatAttr::get(ctx, 4, 3, 1, /*saturate=*/false)
                  : FloatFormatAttr::get(ctx, 4, 7, 0, /*saturate=*/false);
  FloatFormatAttr errorFormat =
      FloatFormatAttr::get(ctx, 5, 2, exactScale ? 0 : 1, /*saturate=*/false);
  SmallVector<Attribute> formats(2);
  formats[p.errorInput] = errorFormat;
  formats[1 - p.errorInput] = codeFormat;
  ctx->getLoadedDialect<QTrainDialect>()->getFloatOperandsAttrHelper().setAttr(
      t1, ArrayAttr::get(ctx, formats));

  // T3 = sum v over the reductions, over the output loops the error reads
  // (none for a centred factor: l' = 0).
  unsigned rank = resultType.getRank();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap scalar = AffineMap::get(rank, 0, {}, ctx);
  Value init = op.getDpsInits()[0];
  if (p.centred) {
    // y = init + 2^k s T1, in f64.
    Value y = buildElementwise(
        b, loc, resultType.getShape(), f32,
        ValueRange{init, t1->getResult(0), quantize.getScale(), amax},
        ArrayRef<AffineMap>{id, id, scalar, scalar},
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          Type f64 = nb.getF64Type();
          auto ext = [&](Value x) {
            return arith::ExtFOp::create(nb, nl, f64, x).getResult();
          };
          Value scale = ext(powerOfTwo(nb, nl, a[3], false));
          Value sum = arith::MulFOp::create(
              nb, nl, scale,
              arith::MulFOp::create(nb, nl, ext(a[2]), ext(a[1])));
          return arith::TruncFOp::create(
                     nb, nl, nb.getF32Type(),
                     arith::AddFOp::create(nb, nl, ext(a[0]), sum))
              .getResult();
        });
    finish(op, y, p);
    return;
  }
  // A padded factor (a padded convolution's activation) is
  // s c + l' m with m its 0/1 mask: T3 = sum v * m. The mask varies only
  // along the padded positions; the reductions it does not read sum v
  // first (a convolution's batch), so T3 costs a window over one image.
  AffineMap errorMap = maps[p.errorInput], outMap = maps[2];
  unsigned factorInput = 1 - p.errorInput;
  int64_t numLoops = ranges.size();
  Value sums = v;
  AffineMap sumsMap = errorMap;
  Value mask;
  AffineMap maskMap;
  SmallVector<std::pair<int64_t, int64_t>> padding = paddingOf(p.factor);
  if (llvm::any_of(padding, [](auto lh) { return lh.first || lh.second; })) {
    auto operandType =
        cast<RankedTensorType>(op.getDpsInputs()[factorInput].getType());
    SmallVector<int64_t> maskShape;
    SmallVector<AffineExpr> maskReads;
    for (auto [position, lh] : llvm::enumerate(padding)) {
      bool padded = lh.first || lh.second;
      maskShape.push_back(padded ? operandType.getDimSize(position) : 1);
      maskReads.push_back(padded ? maps[factorInput].getResult(position)
                                 : getAffineConstantExpr(0, ctx));
    }
    maskMap = AffineMap::get(numLoops, 0, maskReads, ctx);
    unsigned maskRank = maskShape.size();
    Value empty = tensor::EmptyOp::create(b, loc, maskShape, f32);
    mask =
        linalg::GenericOp::create(
            b, loc, TypeRange{empty.getType()}, ValueRange{}, ValueRange{empty},
            ArrayRef<AffineMap>{
                AffineMap::getMultiDimIdentityMap(maskRank, ctx)},
            SmallVector<utils::IteratorType>(maskRank,
                                             utils::IteratorType::parallel),
            [&](OpBuilder &nb, Location nl, ValueRange) {
              Value inside;
              for (auto [d, lh] : llvm::enumerate(padding)) {
                if (!lh.first && !lh.second)
                  continue;
                Value i = linalg::IndexOp::create(nb, nl, d);
                auto cmp = [&](arith::CmpIPredicate pred, int64_t bound) {
                  return arith::CmpIOp::create(
                      nb, nl, pred, i,
                      arith::ConstantIndexOp::create(nb, nl, bound));
                };
                Value in = arith::AndIOp::create(
                    nb, nl, cmp(arith::CmpIPredicate::sge, lh.first),
                    cmp(arith::CmpIPredicate::slt,
                        maskShape[d] - int64_t(lh.second)));
                inside =
                    inside
                        ? arith::AndIOp::create(nb, nl, inside, in).getResult()
                        : in;
              }
              Value one =
                  arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(1.0f));
              Value zero =
                  arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(0.0f));
              linalg::YieldOp::create(
                  nb, nl,
                  arith::SelectOp::create(nb, nl, inside, one, zero)
                      .getResult());
            })
            .getResult(0);
    // u = v summed over the reductions the mask does not read.
    SmallVector<AffineExpr> kept;
    SmallVector<int64_t> keptShape;
    SmallVector<utils::IteratorType> errorIterators;
    for (AffineExpr e : errorMap.getResults()) {
      unsigned loop = cast<AffineDimExpr>(e).getPosition();
      bool summed =
          op.getIteratorTypesArray()[loop] == utils::IteratorType::reduction &&
          !maskMap.isFunctionOfDim(loop);
      errorIterators.push_back(summed ? utils::IteratorType::reduction
                                      : utils::IteratorType::parallel);
      if (!summed) {
        kept.push_back(e);
        keptShape.push_back(ranges[loop]);
      }
    }
    if (kept.size() != errorMap.getNumResults()) {
      unsigned errorRank = errorMap.getNumResults();
      SmallVector<AffineExpr> keptDims;
      for (unsigned d = 0; d < errorRank; ++d)
        if (errorIterators[d] == utils::IteratorType::parallel)
          keptDims.push_back(getAffineDimExpr(d, ctx));
      sums = linalg::GenericOp::create(
                 b, loc, TypeRange{RankedTensorType::get(keptShape, f32)},
                 ValueRange{v}, ValueRange{zeros(b, loc, keptShape)},
                 ArrayRef<AffineMap>{
                     AffineMap::getMultiDimIdentityMap(errorRank, ctx),
                     AffineMap::get(errorRank, 0, keptDims, ctx)},
                 errorIterators,
                 [&](OpBuilder &nb, Location nl, ValueRange a) {
                   linalg::YieldOp::create(
                       nb, nl,
                       arith::AddFOp::create(nb, nl, a[1], a[0]).getResult());
                 })
                 .getResult(0);
      sumsMap = AffineMap::get(numLoops, 0, kept, ctx);
    }
  }

  // T3 over the loops its inputs read, numbered anew.
  SmallVector<unsigned> loops;
  for (unsigned loop = 0; loop < numLoops; ++loop)
    if (sumsMap.isFunctionOfDim(loop) ||
        (maskMap && maskMap.isFunctionOfDim(loop)))
      loops.push_back(loop);
  SmallVector<AffineExpr> renumbered(numLoops, getAffineConstantExpr(0, ctx));
  for (auto [i, loop] : llvm::enumerate(loops))
    renumbered[loop] = getAffineDimExpr(i, ctx);
  auto renumber = [&](AffineMap map) {
    return map.replaceDimsAndSymbols(renumbered, {}, loops.size(), 0);
  };
  SmallVector<AffineExpr> t3Out, t3InEpilogue;
  SmallVector<int64_t> t3Shape;
  for (auto [position, e] : llvm::enumerate(outMap.getResults())) {
    unsigned loop = cast<AffineDimExpr>(e).getPosition();
    if (!llvm::is_contained(loops, loop))
      continue;
    t3Out.push_back(renumbered[loop]);
    t3Shape.push_back(ranges[loop]);
    t3InEpilogue.push_back(getAffineDimExpr(position, ctx));
  }
  SmallVector<utils::IteratorType> t3Iterators;
  for (unsigned loop : loops)
    t3Iterators.push_back(op.getIteratorTypesArray()[loop]);
  SmallVector<Value> t3Inputs = {sums};
  SmallVector<AffineMap> t3Maps = {renumber(sumsMap)};
  if (mask) {
    t3Inputs.push_back(mask);
    t3Maps.push_back(renumber(maskMap));
  }
  t3Maps.push_back(AffineMap::get(loops.size(), 0, t3Out, ctx));
  Value t3 =
      linalg::GenericOp::create(
          b, loc, TypeRange{RankedTensorType::get(t3Shape, f32)}, t3Inputs,
          ValueRange{zeros(b, loc, t3Shape)}, t3Maps, t3Iterators,
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value term = a[0];
            if (a.size() == 3)
              term = arith::MulFOp::create(nb, nl, a[0], a[1]);
            linalg::YieldOp::create(
                nb, nl,
                arith::AddFOp::create(nb, nl, a.back(), term).getResult());
          })
          .getResult(0);

  // y = init + 2^k (s T1 + l' T3), l' = low + 2^(b-1) s, in f64.
  double half = double(int64_t(1) << (p.bits - 1));
  Value y = buildElementwise(
      b, loc, resultType.getShape(), f32,
      ValueRange{init, t1->getResult(0), t3, quantize.getScale(),
                 quantize.getLow(), amax},
      ArrayRef<AffineMap>{id, id, AffineMap::get(rank, 0, t3InEpilogue, ctx),
                          scalar, scalar, scalar},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Type f64 = nb.getF64Type();
        auto ext = [&](Value x) {
          return arith::ExtFOp::create(nb, nl, f64, x).getResult();
        };
        auto mul = [&](Value x, Value y) {
          return arith::MulFOp::create(nb, nl, x, y).getResult();
        };
        auto add = [&](Value x, Value y) {
          return arith::AddFOp::create(nb, nl, x, y).getResult();
        };
        Value s = ext(a[3]);
        Value low =
            add(ext(a[4]),
                mul(arith::ConstantOp::create(nb, nl, nb.getF64FloatAttr(half)),
                    s));
        Value scale = ext(powerOfTwo(nb, nl, a[5], false));
        Value sum = mul(scale, add(mul(s, ext(a[1])), mul(low, ext(a[2]))));
        return arith::TruncFOp::create(nb, nl, nb.getF32Type(),
                                       add(ext(a[0]), sum))
            .getResult();
      });
  finish(op, y, p);
}

void Fp8ErrorProductsPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (fp8Scale != "fit" && fp8Scale != "exact") {
    module.emitError("qtrain-fp8-error-products: fp8-scale must be fit or "
                     "exact, got '")
        << fp8Scale << "'";
    return signalPassFailure();
  }
  SmallVector<linalg::LinalgOp> candidates;
  module.walk([&](linalg::LinalgOp op) {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
        op.getNumDpsInits() != 1 || op->getNumResults() != 1 ||
        op.getNumReductionLoops() == 0 || op.hasDynamicShape())
      return;
    std::optional<MulAddBody> body = getMulAddBody(op);
    if (body && body->isFloat)
      candidates.push_back(op);
  });
  for (linalg::LinalgOp op : candidates) {
    std::string why;
    FailureOr<ErrorProduct> product = match(op, module, why);
    if (failed(product)) {
      // Only a site's product is worth a remark: the others (a folded
      // input gradient's zero-point sums) are f32 by design.
      if (!why.empty() && op->hasAttr(kProductAttrName))
        remark::missed(
            op.getLoc(),
            remark::RemarkOpts::name("stays-f32").category(getArgument()))
            << "a product of fp8 errors stays f32: " + why;
      continue;
    }
    rewrite(*product, fp8Scale == "exact");
    ++numRewritten;
  }
}
