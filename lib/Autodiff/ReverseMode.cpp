//===- ReverseMode.cpp - Reverse-mode differentiation driver ----*- C++ -*-===//
//
// Activity analysis, adjoint accumulation and dispatch to the rule families.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Autodiff/ReverseMode.h"

#include "QTrain/QTrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/RegionUtils.h"

#include <cmath>

using namespace mlir;
using namespace mlir::qtrain;

/// Whether `op` reads a value in `varied`: an operand, or a value its body
/// uses from above (a linalg.generic gathering rows of an embedding table
/// with tensor.extract reads the table that way).
static bool readsVaried(Operation *op, const llvm::DenseSet<Value> &varied) {
  if (llvm::any_of(op->getOperands(),
                   [&](Value v) { return varied.contains(v); }))
    return true;
  if (op->getNumRegions() == 0)
    return false;
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  return llvm::any_of(captured, [&](Value v) { return varied.contains(v); });
}

ReverseMode::ReverseMode(OpBuilder &builder, Block &body, ArrayRef<Value> wrt)
    : builder(builder) {
  varied.insert(wrt.begin(), wrt.end());
  // Forward propagation of "depends on a parameter" in program order.
  for (Operation &op : body)
    if (readsVaried(&op, varied))
      varied.insert(op.getResults().begin(), op.getResults().end());
}

Value ReverseMode::zeros(Location loc, RankedTensorType type) {
  Value empty = tensor::EmptyOp::create(builder, loc, type.getShape(),
                                        type.getElementType());
  Value zero = arith::ConstantOp::create(
      builder, loc, builder.getZeroAttr(type.getElementType()));
  return linalg::FillOp::create(builder, loc, zero, empty).getResult(0);
}

/// Whether `v` is (a transpose or padding of) a fake-quantized weight.
static bool isQuantizedWeight(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto quant = dyn_cast<FakeQuantOp>(def))
      return quant.getRole() == Role::Weight;
    if (!isa<linalg::TransposeOp, tensor::PadOp>(def))
      return false;
    v = def->getOperand(0);
  }
  return false;
}

void ReverseMode::tagProduct(Value primal, Value adjoint) {
  Operation *def = adjoint.getDefiningOp();
  if (!currentLayer || !def || !created.contains(def) ||
      !isa<linalg::LinalgOp>(def) ||
      cast<linalg::LinalgOp>(def).getNumReductionLoops() == 0)
    return;
  MLIRContext *ctx = def->getContext();
  def->setAttr(kLayerAttrName, currentLayer);
  def->setAttr(kProductAttrName,
               StringAttr::get(ctx, isQuantizedWeight(primal) ? "weight_grad"
                                                              : "input_grad"));
}

void ReverseMode::accumulate(Value primal, Value adjoint) {
  if (!adjoint)
    return;
  tagProduct(primal, adjoint);
  Value &slot = adjoints[primal];
  if (!slot) {
    slot = adjoint;
    return;
  }
  Location loc = adjoint.getLoc();
  auto type = cast<RankedTensorType>(adjoint.getType());
  Value init = tensor::EmptyOp::create(builder, loc, type.getShape(),
                                       type.getElementType());
  slot = linalg::AddOp::create(builder, loc, ValueRange{slot, adjoint},
                               ValueRange{init})
             .getResult(0);
}

LogicalResult ReverseMode::run(ArrayRef<Operation *> forwardOps) {
  for (Operation *op : llvm::reverse(forwardOps)) {
    bool hasAdjoint = llvm::any_of(
        op->getResults(), [&](Value r) { return adjoints.contains(r); });
    if (!hasAdjoint || !readsVaried(op, varied))
      continue;
    // Record what the rule of a quantized layer creates, to tag its products.
    struct Recorder : OpBuilder::Listener {
      llvm::DenseSet<Operation *> &ops;
      explicit Recorder(llvm::DenseSet<Operation *> &ops) : ops(ops) {}
      void notifyOperationInserted(Operation *op,
                                   OpBuilder::InsertPoint) override {
        ops.insert(op);
      }
    } recorder(created);
    currentLayer = op->getAttrOfType<IntegerAttr>(kLayerAttrName);
    OpBuilder::Listener *previous = builder.getListener();
    if (currentLayer)
      builder.setListener(&recorder);
    LogicalResult result = differentiate(op);
    builder.setListener(previous);
    currentLayer = {};
    created.clear();
    if (failed(result))
      return failure();
  }
  return success();
}

/// The learned bitwidth (LDP) a quantizer's `bits` operand was converted
/// from, or null: bits = fptosi(extract(qtrain.learned_bits p)).
static LearnedBitsOp learnedBitsOf(Value bits) {
  auto convert = bits.getDefiningOp<arith::FPToSIOp>();
  if (!convert)
    return {};
  auto extract = convert.getIn().getDefiningOp<tensor::ExtractOp>();
  if (!extract)
    return {};
  return extract.getTensor().getDefiningOp<LearnedBitsOp>();
}

/// The gradient of the loss with respect to the bitwidth b of a quantizer
/// x_hat = q(x; s(b)) = s * round((x - mn) / s) + mn, s = range / (2^b - 1),
/// with round straight-through (PAPERS.md section 3: the gradient reaches
/// b through the scale):
///   d x_hat / d s = round(u) - u = (x_hat - x) / s
///   d s / d b     = -s * 2^b ln 2 / (2^b - 1)
/// so dL/db = -(2^b ln 2 / (2^b - 1)) * sum(dL/dx_hat * (x_hat - x)), the
/// same for every channel of a per-channel quantizer. Returns a 0-d tensor.
static Value bitsGradient(ReverseMode &rm, OpBuilder &b, Location loc, Value x,
                          Value quantized, Value adjoint, Value bits) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(x.getType());
  Type f32 = type.getElementType();
  auto scalarType = RankedTensorType::get({}, f32);
  unsigned rank = type.getRank();
  auto id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  auto toScalar = AffineMap::get(rank, 0, ctx);
  Value zero = rm.zeros(loc, scalarType);
  SmallVector<utils::IteratorType> reduce(rank, utils::IteratorType::reduction);
  Value dot =
      linalg::GenericOp::create(
          b, loc, TypeRange{scalarType}, ValueRange{adjoint, quantized, x},
          ValueRange{zero}, ArrayRef<AffineMap>{id, id, id, toScalar}, reduce,
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value error = arith::SubFOp::create(nb, nl, a[1], a[2]);
            Value term = arith::MulFOp::create(nb, nl, a[0], error);
            linalg::YieldOp::create(
                nb, nl, arith::AddFOp::create(nb, nl, a[3], term).getResult());
          })
          .getResult(0);
  auto scalar = AffineMap::get(0, 0, ctx);
  Value init = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, f32);
  return linalg::GenericOp::create(
             b, loc, TypeRange{scalarType}, ValueRange{dot, bits},
             ValueRange{init}, ArrayRef<AffineMap>{scalar, scalar, scalar},
             ArrayRef<utils::IteratorType>{},
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               Value levels = math::Exp2Op::create(nb, nl, a[1]);
               Value one =
                   arith::ConstantOp::create(nb, nl, nb.getFloatAttr(f32, 1.0));
               Value ln2 = arith::ConstantOp::create(
                   nb, nl, nb.getFloatAttr(f32, M_LN2));
               Value steps = arith::SubFOp::create(nb, nl, levels, one);
               Value ratio = arith::DivFOp::create(
                   nb, nl, arith::MulFOp::create(nb, nl, levels, ln2), steps);
               Value grad = arith::MulFOp::create(nb, nl, ratio, a[0]);
               linalg::YieldOp::create(
                   nb, nl, arith::NegFOp::create(nb, nl, grad).getResult());
             })
      .getResult(0);
}

LogicalResult ReverseMode::differentiate(Operation *op) {
  // Quantizers are straight-through: the gradient passes unchanged. A
  // quantizer at a learned bitwidth also passes a gradient to it.
  if (isa<FakeQuantOp, RoundFloatOp>(op)) {
    Value adjoint = getAdjoint(op->getResult(0));
    accumulate(op->getOperand(0), adjoint);
    if (auto quant = dyn_cast<FakeQuantOp>(op))
      if (LearnedBitsOp learned = learnedBitsOf(quant.getBits()))
        accumulate(learned.getResult(),
                   bitsGradient(*this, builder, op->getLoc(), quant.getInput(),
                                quant.getResult(), adjoint,
                                learned.getResult()));
    return success();
  }
  // Dropout is linear in its input for a given mask: the gradient is the
  // same op (the same seed, step and stream: the same mask) on the adjoint.
  if (auto dropout = dyn_cast<DropoutOp>(op)) {
    if (Value adjoint = getAdjoint(dropout.getResult()))
      accumulate(dropout.getInput(),
                 DropoutOp::create(builder, op->getLoc(), adjoint.getType(),
                                   adjoint, dropout.getSeed(),
                                   dropout.getStep(), dropout.getPAttr(),
                                   dropout.getStreamAttr())
                     .getResult());
    return success();
  }
  // The training step normalizes with the batch's statistic; its running
  // average is state, not differentiated.
  if (auto stat = dyn_cast<RunningStatOp>(op)) {
    if (Value adjoint = getAdjoint(stat.getStat()))
      accumulate(stat.getBatch(), adjoint);
    return success();
  }
  // Round and clamp of a learned bitwidth are straight-through.
  if (auto learned = dyn_cast<LearnedBitsOp>(op)) {
    MLIRContext *ctx = op->getContext();
    Value dBits = getAdjoint(learned.getResult());
    auto type = cast<RankedTensorType>(dBits.getType());
    auto scalar = AffineMap::get(0, 0, ctx);
    Value init = tensor::EmptyOp::create(
        builder, op->getLoc(), ArrayRef<int64_t>{}, type.getElementType());
    float span = float(learned.getMaxBits() - learned.getMinBits());
    Value dP =
        linalg::GenericOp::create(
            builder, op->getLoc(), TypeRange{type}, ValueRange{dBits},
            ValueRange{init}, ArrayRef<AffineMap>{scalar, scalar},
            ArrayRef<utils::IteratorType>{},
            [&](OpBuilder &nb, Location nl, ValueRange a) {
              Value factor = arith::ConstantOp::create(
                  nb, nl, nb.getFloatAttr(type.getElementType(), span));
              linalg::YieldOp::create(
                  nb, nl,
                  arith::MulFOp::create(nb, nl, factor, a[0]).getResult());
            })
            .getResult(0);
    accumulate(learned.getPrecision(), dP);
    return success();
  }
  // The error entering a layer's backward pass is quantized here (CPT).
  if (auto gradQuant = dyn_cast<GradQuantOp>(op)) {
    MLIRContext *ctx = op->getContext();
    Value dY = getAdjoint(gradQuant.getResult());
    Value quantized = FakeQuantOp::create(
        builder, op->getLoc(), dY.getType(), dY, gradQuant.getBits(),
        /*min=*/Value(), /*max=*/Value(), gradQuant.getSeed(),
        gradQuant.getStep(), RoleAttr::get(ctx, Role::Error),
        gradQuant.getRoundingAttr(),
        GranularityAttr::get(ctx, GranularityKind::PerTensor, std::nullopt),
        gradQuant.getStreamAttr());
    accumulate(gradQuant.getInput(), quantized);
    return success();
  }
  // A gradient stored in a reduced float format (PAPERS.md section 4) is
  // rounded here: GY on a module's output, GP on a parameter.
  if (auto gradRound = dyn_cast<GradRoundFloatOp>(op)) {
    Value dY = getAdjoint(gradRound.getResult());
    Value rounded = RoundFloatOp::create(
        builder, op->getLoc(), dY, gradRound.getFormat(),
        gradRound.getScaledMaxAttr(), gradRound.getRoleAttr());
    accumulate(gradRound.getInput(), rounded);
    return success();
  }
  // Ops whose result does not depend on the values of their varied operands
  // (only on shapes) pass nothing back.
  if (isa<linalg::FillOp, tensor::EmptyOp, tensor::DimOp>(op))
    return success();
  if (isConvolution(op))
    return differentiateConvolution(*this, op);
  if (isPooling(op))
    return differentiatePooling(*this, op);
  if (isa<linalg::LinalgOp>(op))
    return differentiateLinalgOp(*this, op);
  if (isa<tensor::PadOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
          tensor::ExtractSliceOp, tensor::InsertSliceOp, tensor::ConcatOp>(op))
    return differentiateTensorOp(*this, op);

  auto func = op->getParentOfType<func::FuncOp>();
  return op->emitError() << "'" << op->getName()
                         << "' is not supported by qtrain-autodiff (in @"
                         << (func ? func.getSymName() : StringRef("?"))
                         << "): it has no reverse-mode rule";
}
