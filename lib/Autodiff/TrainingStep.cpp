//===- TrainingStep.cpp - Loss and optimizer of the training step ---------===//
//
// Softmax cross-entropy (log-sum-exp with the row max subtracted), mean
// squared error and SGD, as linalg generics on tensors.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Autodiff/TrainingStep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::qtrain;

Type mlir::qtrain::getLabelType(LossKind kind, RankedTensorType logitsType) {
  if (kind == LossKind::MeanSquaredError)
    return logitsType;
  return RankedTensorType::get({logitsType.getDimSize(0)},
                               IntegerType::get(logitsType.getContext(), 64));
}

namespace {
/// Small helpers over one builder and location.
struct Emitter {
  OpBuilder &b;
  Location loc;
  Type f32;

  Value constant(double v) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(f32, v));
  }
  Value filled(ArrayRef<int64_t> shape, double v) {
    Value empty = tensor::EmptyOp::create(b, loc, shape, f32);
    return linalg::FillOp::create(b, loc, constant(v), empty).getResult(0);
  }
  Value empty(ArrayRef<int64_t> shape) {
    return tensor::EmptyOp::create(b, loc, shape, f32);
  }
  AffineMap map(unsigned dims, ArrayRef<unsigned> results) {
    SmallVector<AffineExpr> exprs;
    for (unsigned r : results)
      exprs.push_back(b.getAffineDimExpr(r));
    return AffineMap::get(dims, 0, exprs, b.getContext());
  }
  Value generic(ArrayRef<int64_t> outShape, ValueRange ins, Value init,
                ArrayRef<AffineMap> maps,
                ArrayRef<utils::IteratorType> iterators,
                function_ref<Value(OpBuilder &, ValueRange)> body) {
    auto type = RankedTensorType::get(outShape, f32);
    return linalg::GenericOp::create(
               b, loc, TypeRange{type}, ins, ValueRange{init}, maps, iterators,
               [&](OpBuilder &nb, Location nloc, ValueRange args) {
                 linalg::YieldOp::create(nb, nloc, body(nb, args));
               })
        .getResult(0);
  }
  Value scalar(Value tensor0d) {
    return tensor::ExtractOp::create(b, loc, tensor0d, ValueRange{});
  }
};
} // namespace

static constexpr auto kPar = utils::IteratorType::parallel;
static constexpr auto kRed = utils::IteratorType::reduction;

LossValues mlir::qtrain::buildLoss(OpBuilder &b, Location loc, LossKind kind,
                                   Value logits, Value labels) {
  auto type = cast<RankedTensorType>(logits.getType());
  Emitter e{b, loc, type.getElementType()};
  int64_t batch = type.getDimSize(0), classes = type.getDimSize(1);
  AffineMap bc = e.map(2, {0, 1}), bOnly = e.map(2, {0}), none = e.map(2, {});
  AffineMap b1 = e.map(1, {0}), none1 = e.map(1, {});

  if (kind == LossKind::MeanSquaredError) {
    double n = double(batch * classes);
    Value sum =
        e.generic({}, {logits, labels}, e.filled({}, 0.0), {bc, bc, none},
                  {kRed, kRed}, [&](OpBuilder &nb, ValueRange a) -> Value {
                    Value d = arith::SubFOp::create(nb, loc, a[0], a[1]);
                    Value sq = arith::MulFOp::create(nb, loc, d, d);
                    return arith::AddFOp::create(nb, loc, a[2], sq);
                  });
    Value loss = arith::DivFOp::create(b, loc, e.scalar(sum), e.constant(n));
    Value scale = e.constant(2.0 / n);
    Value grad = e.generic(
        {batch, classes}, {logits, labels}, e.empty({batch, classes}),
        {bc, bc, bc}, {kPar, kPar}, [&](OpBuilder &nb, ValueRange a) -> Value {
          Value d = arith::SubFOp::create(nb, loc, a[0], a[1]);
          return arith::MulFOp::create(nb, loc, d, scale);
        });
    return {loss, grad};
  }

  // Row max, for a stable log-sum-exp.
  Value rowMax =
      e.generic({batch}, {logits}, e.filled({batch}, -INFINITY), {bc, bOnly},
                {kPar, kRed}, [&](OpBuilder &nb, ValueRange a) -> Value {
                  return arith::MaximumFOp::create(nb, loc, a[0], a[1]);
                });
  // Sum of exp(z - max).
  Value sumExp = e.generic(
      {batch}, {logits, rowMax}, e.filled({batch}, 0.0), {bc, bOnly, bOnly},
      {kPar, kRed}, [&](OpBuilder &nb, ValueRange a) -> Value {
        Value shifted = arith::SubFOp::create(nb, loc, a[0], a[1]);
        Value ex = math::ExpOp::create(nb, loc, shifted);
        return arith::AddFOp::create(nb, loc, a[2], ex);
      });
  // The logit of the label: sum over classes of (j == label) ? z : 0.
  Value picked = e.generic(
      {batch}, {logits, labels}, e.filled({batch}, 0.0), {bc, bOnly, bOnly},
      {kPar, kRed}, [&](OpBuilder &nb, ValueRange a) -> Value {
        Value j = linalg::IndexOp::create(nb, loc, 1);
        Value label =
            arith::IndexCastOp::create(nb, loc, nb.getIndexType(), a[1]);
        Value hit =
            arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::eq, j, label);
        Value zero = arith::ConstantOp::create(
            nb, loc, nb.getFloatAttr(a[0].getType(), 0));
        Value v = arith::SelectOp::create(nb, loc, hit, a[0], zero);
        return arith::AddFOp::create(nb, loc, a[2], v);
      });
  // Mean over the batch of max + log(sumExp) - picked.
  Value total = e.generic(
      {}, {rowMax, sumExp, picked}, e.filled({}, 0.0), {b1, b1, b1, none1},
      {kRed}, [&](OpBuilder &nb, ValueRange a) -> Value {
        Value lse = arith::AddFOp::create(nb, loc, a[0],
                                          math::LogOp::create(nb, loc, a[1]));
        Value l = arith::SubFOp::create(nb, loc, lse, a[2]);
        return arith::AddFOp::create(nb, loc, a[3], l);
      });
  Value invBatch = e.constant(1.0 / double(batch));
  Value loss = arith::MulFOp::create(b, loc, e.scalar(total), invBatch);
  // d loss / d z = (softmax(z) - onehot(label)) / B.
  Value grad = e.generic(
      {batch, classes}, {logits, rowMax, sumExp, labels},
      e.empty({batch, classes}), {bc, bOnly, bOnly, bOnly, bc}, {kPar, kPar},
      [&](OpBuilder &nb, ValueRange a) -> Value {
        Value shifted = arith::SubFOp::create(nb, loc, a[0], a[1]);
        Value p = arith::DivFOp::create(
            nb, loc, math::ExpOp::create(nb, loc, shifted), a[2]);
        Value j = linalg::IndexOp::create(nb, loc, 1);
        Value label =
            arith::IndexCastOp::create(nb, loc, nb.getIndexType(), a[3]);
        Value hit =
            arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::eq, j, label);
        Value one = arith::ConstantOp::create(
            nb, loc, nb.getFloatAttr(a[0].getType(), 1));
        Value zero = arith::ConstantOp::create(
            nb, loc, nb.getFloatAttr(a[0].getType(), 0));
        Value target = arith::SelectOp::create(nb, loc, hit, one, zero);
        Value d = arith::SubFOp::create(nb, loc, p, target);
        return arith::MulFOp::create(nb, loc, d, invBatch);
      });
  return {loss, grad};
}

SgdValues mlir::qtrain::buildSgdUpdate(OpBuilder &b, Location loc, Value param,
                                       Value grad, Value buffer, Value lr,
                                       Value momentum, Value weightDecay) {
  auto type = cast<RankedTensorType>(param.getType());
  unsigned rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  auto id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<utils::IteratorType> par(rank, utils::IteratorType::parallel);
  Value paramInit =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  Value bufferInit =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  auto update = linalg::GenericOp::create(
      b, loc, TypeRange{type, type}, ValueRange{param, grad, buffer},
      ValueRange{paramInit, bufferInit}, SmallVector<AffineMap>(5, id), par,
      [&](OpBuilder &nb, Location nloc, ValueRange a) {
        Value decayed = arith::MulFOp::create(nb, nloc, weightDecay, a[0]);
        Value g = arith::AddFOp::create(nb, nloc, a[1], decayed);
        Value kept = arith::MulFOp::create(nb, nloc, momentum, a[2]);
        Value buf = arith::AddFOp::create(nb, nloc, kept, g);
        Value delta = arith::MulFOp::create(nb, nloc, lr, buf);
        Value p = arith::SubFOp::create(nb, nloc, a[0], delta);
        linalg::YieldOp::create(nb, nloc, ValueRange{p, buf});
      });
  return {update.getResult(0), update.getResult(1)};
}
