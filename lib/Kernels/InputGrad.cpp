//===- InputGrad.cpp - Low-precision input gradients ------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "InputGrad.h"
#include "IntegerSums.h"

#include "qtrain/Analysis/Elementwise.h"
#include "qtrain/Analysis/QuantizedOperand.h"

#include "QTrain/QTrainDialect.h"
#include "QTrain/QTrainOps.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::qtrain;

/// x rounded to bf16 (nearest even; a NaN stays a quiet NaN), as f32: the
/// microkernels' toBF16 on the bits, which needs no bf16 conversion
/// instruction or library call on any target.
static Value roundToBF16(OpBuilder &b, Location loc, ValueRange a) {
  Type i32 = b.getI32Type();
  auto constant = [&](uint32_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(int32_t(v)));
  };
  Value bits = arith::BitcastOp::create(b, loc, i32, a[0]);
  Value lsb = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, constant(16)), constant(1));
  Value rounded = arith::AndIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc, bits, arith::AddIOp::create(b, loc, lsb, constant(0x7fff))),
      constant(0xffff0000u));
  Value quiet = arith::OrIOp::create(
      b, loc, arith::AndIOp::create(b, loc, bits, constant(0xffff0000u)),
      constant(0x400000));
  Value isNaN = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ugt,
      arith::AndIOp::create(b, loc, bits, constant(0x7fffffff)),
      constant(0x7f800000));
  Value result = arith::SelectOp::create(b, loc, isNaN, quiet, rounded);
  return arith::BitcastOp::create(b, loc, b.getF32Type(), result);
}

linalg::LinalgOp intkernels::roundOperandsToBF16(linalg::LinalgOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  IRMapping mapping;
  for (Value input : op.getDpsInputs()) {
    auto type = cast<RankedTensorType>(input.getType());
    unsigned rank = type.getRank();
    Value rounded = buildElementwise(
        b, loc, type.getShape(), type.getElementType(), input,
        AffineMap::getMultiDimIdentityMap(rank, ctx), roundToBF16);
    mapping.map(input, rounded);
  }
  auto rounded = cast<linalg::LinalgOp>(b.clone(*op, mapping));
  ctx->getLoadedDialect<QTrainDialect>()->getBf16OperandsAttrHelper().setAttr(
      rounded, UnitAttr::get(ctx));
  op->replaceAllUsesWith(rounded->getResults());
  op->erase();
  return rounded;
}

/// Where dimension `position` of a chain's source lands in its result,
/// through zero paddings, transposes and copies (a copy's input map must
/// read the dimension through one loop, which its output map writes
/// plainly; a flip reads kh as KH - 1 - kh).
static std::optional<int64_t> positionThrough(ArrayRef<Operation *> chain,
                                              int64_t position) {
  for (Operation *op : chain) {
    if (isa<tensor::PadOp>(op))
      continue;
    if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
      ArrayRef<int64_t> perm = transpose.getPermutation();
      position = llvm::find(perm, position) - perm.begin();
      continue;
    }
    auto copy = cast<linalg::GenericOp>(op);
    SmallVector<AffineMap> maps = copy.getIndexingMapsArray();
    AffineExpr read = maps[0].getResult(position);
    std::optional<unsigned> loop;
    for (unsigned d = 0; d < maps[0].getNumDims(); ++d) {
      if (!read.isFunctionOfDim(d))
        continue;
      if (loop)
        return std::nullopt;
      loop = d;
    }
    if (!loop)
      return std::nullopt;
    std::optional<unsigned> written =
        maps[1].getResultPosition(getAffineDimExpr(*loop, op->getContext()));
    if (!written)
      return std::nullopt;
    position = *written;
  }
  return position;
}

/// The constant bitwidth of `q` in [1, 16], if it has one.
static std::optional<int64_t> gridBits(FakeQuantOp q) {
  std::optional<int64_t> bits = q.getConstantBits();
  if (!bits || *bits < 1 || *bits > 16)
    return std::nullopt;
  return bits;
}

/// Rebuilds `chain` (ops reading `from` first) on `to`; returns the last
/// result.
static Value cloneChain(OpBuilder &b, ArrayRef<Operation *> chain, Value from,
                        Value to) {
  IRMapping mapping;
  mapping.map(from, to);
  Value v = to;
  for (Operation *op : chain)
    v = b.clone(*op, mapping)->getResult(0);
  return v;
}

/// The scaled float rounding of an error (--grad-format=e5m2) whose result
/// `traced` starts from, in `block`; null if there is none.
static RoundFloatOp errorRounding(const QuantizedOperand &traced,
                                  Block *block) {
  auto round = traced.source.getDefiningOp<RoundFloatOp>();
  if (!round || round->getBlock() != block || !round.getScaledMaxAttr() ||
      round.getPromoted() || round.getRole() != Role::Error)
    return {};
  return round;
}

linalg::LinalgOp intkernels::foldWeightScales(linalg::LinalgOp op,
                                              ErrorGrid grid) {
  bool floatError = grid == ErrorGrid::ScaledFloat;
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op->getNumResults() != 1)
    return nullptr;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  DataMovementOptions weightMoves, errorMoves;
  weightMoves.pads = DataMovementOptions::Pads::None;
  weightMoves.copies = true;
  weightMoves.block = op->getBlock();
  errorMoves.pads = DataMovementOptions::Pads::StaticZero;
  errorMoves.block = op->getBlock();

  // Which operand is the per-channel weight, the loop its channel is, and
  // the error's dimension along that loop.
  unsigned iw = 0;
  QuantizedOperand w, e;
  RoundFloatOp round;
  int64_t errorAxis = -1;
  unsigned channelLoop = 0;
  for (unsigned i = 0; i < 2 && errorAxis < 0; ++i) {
    w = traceQuantizedOperand(op.getDpsInputs()[i], weightMoves);
    e = traceQuantizedOperand(op.getDpsInputs()[1 - i], errorMoves);
    if (!w.quant || !gridBits(w.quant) || w.quant.getWidth())
      continue;
    if (floatError) {
      round = errorRounding(e, op->getBlock());
      if (!round)
        continue;
    } else if (!e.quant || !gridBits(e.quant) ||
               e.quant.getGranularity().getAxis() || e.quant.getMin()) {
      continue;
    }
    std::optional<int64_t> axis = w.quant.getGranularity().getAxis();
    if (!axis)
      continue;
    if (!cast<RankedTensorType>(w.source.getType()).hasStaticShape() ||
        !cast<RankedTensorType>(e.source.getType()).hasStaticShape())
      continue;
    std::optional<int64_t> position = positionThrough(w.chain, *axis);
    if (!position)
      continue;
    auto loop = dyn_cast<AffineDimExpr>(maps[i].getResult(*position));
    if (!loop ||
        iterators[loop.getPosition()] != utils::IteratorType::reduction)
      continue;
    std::optional<unsigned> errorPosition = maps[1 - i].getResultPosition(loop);
    if (!errorPosition)
      continue;
    // The error's channels are not padded (its zero-point term sums them
    // first).
    int64_t channel = e.sourcePosition(*errorPosition), moving = channel;
    bool paddedChannels = false;
    for (Operation *chained : e.chain) {
      if (auto pad = dyn_cast<tensor::PadOp>(chained)) {
        paddedChannels |=
            pad.getStaticLow()[moving] != 0 || pad.getStaticHigh()[moving] != 0;
        continue;
      }
      ArrayRef<int64_t> perm =
          cast<linalg::TransposeOp>(chained).getPermutation();
      moving = llvm::find(perm, moving) - perm.begin();
    }
    if (paddedChannels)
      continue;
    iw = i;
    channelLoop = loop.getPosition();
    errorAxis = channel;
  }
  if (errorAxis < 0)
    return nullptr;
  unsigned ie = 1 - iw;
  // The loops only the weight indexes (dX's channels), each as a plain
  // dimension: the zero-point term runs them once.
  llvm::SmallBitVector weightLoops(iterators.size());
  for (unsigned d = 0; d < iterators.size(); ++d) {
    if (iterators[d] != utils::IteratorType::parallel ||
        maps[ie].isFunctionOfDim(d) || !maps[2].isFunctionOfDim(d))
      continue;
    if (llvm::all_of(maps[iw].getResults(), [&](AffineExpr r) {
          return !r.isFunctionOfDim(d) || isa<AffineDimExpr>(r);
        }))
      weightLoops.set(d);
  }

  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  FakeQuantOp wq = w.quant;
  int64_t bits = *gridBits(wq);
  auto weightType = cast<RankedTensorType>(wq.getInput().getType());
  int64_t axis = *wq.getGranularity().getAxis();
  auto statType = RankedTensorType::get({weightType.getDimSize(axis)}, f32);
  auto codes = QuantizeOp::create(
      b, wq.getLoc(),
      RankedTensorType::get(weightType.getShape(),
                            QuantizeOp::getCodeType(ctx, bits)),
      statType, statType, wq.getInput(), b.getI32IntegerAttr(int32_t(bits)),
      wq.getMin(), wq.getMax(), wq.getSeed(), wq.getStep(), wq.getRoleAttr(),
      wq.getRoundingAttr(), wq.getGranularityAttr(), wq.getStreamAttr(),
      wq.getWidthAttr());
  auto dimMap = [&](unsigned rank, int64_t d) {
    return AffineMap::get(rank, 0, getAffineDimExpr(d, ctx), ctx);
  };
  auto mul = [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
    return arith::MulFOp::create(nb, nl, a[0], a[1]);
  };

  // The error scaled along its channels, E s_W.
  Value rawError = floatError ? round.getInput() : e.quant.getInput();
  auto errorType = cast<RankedTensorType>(rawError.getType());
  unsigned errorRank = errorType.getRank();
  Value scaled = buildElementwise(
      b, loc, errorType.getShape(), f32, {rawError, codes.getScale()},
      {AffineMap::getMultiDimIdentityMap(errorRank, ctx),
       dimMap(errorRank, errorAxis)},
      mul);
  unsigned weightRank = weightType.getRank();
  double half = double(int64_t(1) << (bits - 1));
  // The weight's codes plus `shift` as f32 (exact), moved like the weight
  // was, behind a per-tensor quantizer on exactly [lo, hi]: with hi - lo =
  // 2^b - 1 its scale is 1 and it returns its input.
  auto weightFactor = [&](double shift, double lo, double hi) -> Value {
    Value grid = buildElementwise(
        b, loc, weightType.getShape(), f32, codes.getCodes(),
        AffineMap::getMultiDimIdentityMap(weightRank, ctx),
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          Value c = arith::SIToFPOp::create(nb, nl, nb.getF32Type(), a[0]);
          if (shift == 0.0)
            return c;
          Value h =
              arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(shift));
          return arith::AddFOp::create(nb, nl, c, h);
        });
    Value moved = cloneChain(b, w.chain, wq.getResult(), grid);
    Value low = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(lo));
    Value high = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(hi));
    return FakeQuantOp::create(
        b, wq.getLoc(), moved.getType(), moved, wq.getBits(), low, high,
        Value(), Value(), wq.getRoleAttr(),
        RoundingAttr::get(ctx, Rounding::NearestEven),
        GranularityAttr::get(ctx, GranularityKind::PerTensor, std::nullopt),
        b.getI64IntegerAttr(0), UnitAttr());
  };
  // The error factor, the values its zero-point term sums and the factor
  // of the weight.
  Value error, dequantized, weight;
  if (floatError) {
    // R(E s_W): the error's rounding on the error scaled along its channels
    // (its own power of two). The weight factor is the centred codes c_W,
    // integers in [-2^(b-1), 2^(b-1) - 1], behind a per-tensor quantizer on
    // exactly that range (the identity: scale 1, so the fp8 products of
    // qtrain-fp8-error-products need no column sums for it).
    dequantized =
        RoundFloatOp::create(b, round.getLoc(), scaled, round.getFormatAttr(),
                             round.getScaledMaxAttr(), round.getRoleAttr());
    error = cloneChain(b, e.chain, round.getResult(), dequantized);
    weight = weightFactor(0.0, -half, half - 1.0);
  } else {
    FakeQuantOp eq = e.quant;
    Value scaledQ = FakeQuantOp::create(
        b, eq.getLoc(), scaled.getType(), scaled, eq.getBits(), Value(),
        Value(), eq.getSeed(), eq.getStep(), eq.getRoleAttr(),
        eq.getRoundingAttr(), eq.getGranularityAttr(), eq.getStreamAttr(),
        UnitAttr());
    error = cloneChain(b, e.chain, eq.getResult(), scaledQ);
    // The zero-point term reads Q(E s_W) as (codes + h) s + mn from the same
    // quantization the integer rewrite makes of it (the pass merges the two),
    // so E s_W is quantized once per step.
    int64_t errorBits = *gridBits(eq);
    auto errorStat = RankedTensorType::get({}, f32);
    auto errorCodes = QuantizeOp::create(
        b, eq.getLoc(),
        RankedTensorType::get(errorType.getShape(),
                              QuantizeOp::getCodeType(ctx, errorBits)),
        errorStat, errorStat, scaled, b.getI32IntegerAttr(int32_t(errorBits)),
        Value(), Value(), eq.getSeed(), eq.getStep(), eq.getRoleAttr(),
        eq.getRoundingAttr(), eq.getGranularityAttr(), eq.getStreamAttr(),
        UnitAttr());
    double errorHalf = double(int64_t(1) << (errorBits - 1));
    AffineMap errorId = AffineMap::getMultiDimIdentityMap(errorRank, ctx);
    AffineMap scalar = AffineMap::get(errorRank, 0, {}, ctx);
    dequantized = buildElementwise(
        b, loc, errorType.getShape(), f32,
        {errorCodes.getCodes(), errorCodes.getScale(), errorCodes.getLow()},
        {errorId, scalar, scalar},
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          Value c = arith::SIToFPOp::create(nb, nl, nb.getF32Type(), a[0]);
          Value h =
              arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(errorHalf));
          Value q = arith::AddFOp::create(nb, nl, c, h);
          return arith::AddFOp::create(
              nb, nl, arith::MulFOp::create(nb, nl, q, a[1]), a[2]);
        });

    // q_W = codes + 2^(b-1), quantized per tensor on [0, 2^b - 1] (the
    // identity, which makes it a factor the integer rewrite takes).
    weight = weightFactor(half, 0.0, double((int64_t(1) << bits) - 1));
  }

  IRMapping mapping;
  mapping.map(op.getDpsInputs()[iw], weight);
  mapping.map(op.getDpsInputs()[ie], error);
  auto product = cast<linalg::LinalgOp>(b.clone(*op, mapping));

  // The zero points z = mn_W / s_W (plus 2^(b-1) for the centred codes
  // of a float error). Their term sums Q(E s_W) * z over the reductions; z
  // depends on the channel only, so the error is first summed over its
  // channels (u = sum_f Q(E s_W)[.., f, ..] z[f], one channel), moved like
  // the error, then summed over the other reductions (a convolution's
  // window) with dX's channels run once.
  Value zeroPoints = buildElementwise(
      b, loc, statType.getShape(), f32, {codes.getLow(), codes.getScale()},
      {AffineMap::getMultiDimIdentityMap(1, ctx),
       AffineMap::getMultiDimIdentityMap(1, ctx)},
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value z = arith::DivFOp::create(nb, nl, a[0], a[1]);
        if (!floatError)
          return z;
        return arith::AddFOp::create(
            nb, nl, z,
            arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(half)));
      });
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  auto zeros = [&](ArrayRef<int64_t> shape) {
    Value empty = tensor::EmptyOp::create(b, loc, shape, f32);
    return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  };
  SmallVector<int64_t> kept;
  SmallVector<AffineExpr> keptExprs;
  SmallVector<utils::IteratorType> channelIterators;
  for (unsigned i = 0; i < errorRank; ++i) {
    bool channel = int64_t(i) == errorAxis;
    channelIterators.push_back(channel ? utils::IteratorType::reduction
                                       : utils::IteratorType::parallel);
    if (!channel) {
      kept.push_back(errorType.getDimSize(i));
      keptExprs.push_back(getAffineDimExpr(i, ctx));
    }
  }
  Value channelSums = zeros(kept);
  channelSums =
      linalg::GenericOp::create(
          b, loc, TypeRange{channelSums.getType()},
          ValueRange{dequantized, zeroPoints}, ValueRange{channelSums},
          {AffineMap::getMultiDimIdentityMap(errorRank, ctx),
           dimMap(errorRank, errorAxis),
           AffineMap::get(errorRank, 0, keptExprs, ctx)},
          channelIterators,
          [](OpBuilder &nb, Location nl, ValueRange a) {
            Value p = arith::MulFOp::create(nb, nl, a[0], a[1]);
            linalg::YieldOp::create(
                nb, nl, arith::AddFOp::create(nb, nl, a[2], p).getResult());
          })
          .getResult(0);
  // Back to the error's rank with a unit channel dimension, which joins the
  // next dimension (or the last one).
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (unsigned i = 0; i < errorRank; ++i) {
    pending.push_back(i);
    if (int64_t(i) != errorAxis) {
      groups.push_back(pending);
      pending.clear();
    }
  }
  if (!pending.empty())
    groups.back().append(pending.begin(), pending.end());
  SmallVector<int64_t> unitShape(errorType.getShape());
  unitShape[errorAxis] = 1;
  Value u = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(unitShape, f32), channelSums, groups);
  u = intkernels::replayChain(b, loc, e.chain, u);
  Value result = op->getResult(0);
  SmallVector<int64_t> outShape(
      cast<RankedTensorType>(result.getType()).getShape());
  for (auto [i, r] : llvm::enumerate(maps[2].getResults()))
    if (auto d = dyn_cast<AffineDimExpr>(r);
        d && weightLoops.test(d.getPosition()))
      outShape[i] = 1;
  // The weight's shape, its channel and private loops one wide, gives the
  // loops only the weight indexes plainly (a convolution's window) their
  // extent; its values are not read.
  SmallVector<int64_t> windowShape(
      cast<RankedTensorType>(op.getDpsInputs()[iw].getType()).getShape());
  for (auto [i, r] : llvm::enumerate(maps[iw].getResults()))
    if (auto d = dyn_cast<AffineDimExpr>(r);
        d &&
        (weightLoops.test(d.getPosition()) || d.getPosition() == channelLoop))
      windowShape[i] = 1;
  SmallVector<Value> sumInputs(2);
  sumInputs[ie] = u;
  sumInputs[iw] = tensor::EmptyOp::create(b, loc, windowShape, f32);
  Value zeroPointSum =
      linalg::GenericOp::create(
          b, loc, TypeRange{RankedTensorType::get(outShape, f32)}, sumInputs,
          ValueRange{zeros(outShape)}, maps, iterators,
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            linalg::YieldOp::create(
                nb, nl, arith::AddFOp::create(nb, nl, a[2], a[ie]).getResult());
          })
          .getResult(0);
  auto resultType = cast<RankedTensorType>(result.getType());
  unsigned rank = resultType.getRank();
  SmallVector<AffineExpr> broadcast;
  for (unsigned i = 0; i < rank; ++i)
    broadcast.push_back(outShape[i] == 1 && resultType.getDimSize(i) != 1
                            ? getAffineConstantExpr(0, ctx)
                            : getAffineDimExpr(i, ctx));
  Value sum = buildElementwise(
      b, loc, resultType.getShape(), f32, {product->getResult(0), zeroPointSum},
      {AffineMap::getMultiDimIdentityMap(rank, ctx),
       AffineMap::get(rank, 0, broadcast, ctx)},
      [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        return arith::AddFOp::create(nb, nl, a[0], a[1]);
      });
  op->replaceAllUsesWith(ValueRange{sum});
  op->erase();
  // The old quantizers and their chains, users first, where nothing else
  // reads them.
  SmallVector<Operation *> dead;
  for (QuantizedOperand *traced : {&w, &e}) {
    for (Operation *chained : llvm::reverse(traced->chain))
      dead.push_back(chained);
    dead.push_back(traced == &e && floatError ? round.getOperation()
                                              : traced->quant.getOperation());
  }
  for (Operation *o : dead)
    if (o->use_empty())
      o->erase();
  return product;
}
