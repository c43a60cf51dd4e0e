//===- LinalgRules.cpp - Reverse mode of linalg structured ops --*- C++ -*-===//
//
// One rule for every linalg structured op whose differentiated operand is
// read through a projected permutation: the gradient of that operand is a new
// linalg.generic over the same loops that recomputes the scalar body, takes
// its derivative by forward-mode propagation through the body's arith/math
// ops, multiplies by the result's adjoint and sums over the loops the operand
// does not index. Elementwise ops, broadcasts, transposes, reductions, matmul
// in every transposed or batched form, and the weight gradient of a
// convolution are all instances. A table the body gathers from with
// tensor.extract (an embedding) gets a scatter-add built the same way.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Autodiff/ReverseMode.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"

#include <cmath>

using namespace mlir;
using namespace mlir::qtrain;

namespace {

/// How a reduction combines the body's value with the accumulator.
enum class Combiner { None, Add, Max, Min };

/// The scalar structure of a linalg op's body.
struct BodyInfo {
  Combiner combiner = Combiner::None;
  /// The value whose derivative is taken: the whole yielded value for
  /// parallel ops, the term combined into the accumulator for reductions.
  Value term;
};

/// Forward-mode derivative of the scalar ops of a linalg body with respect
/// to one block argument, emitted next to a clone of the body.
class TangentBuilder {
public:
  TangentBuilder(OpBuilder &b, Location loc, IRMapping &primal)
      : b(b), loc(loc), primal(primal) {}

  /// The operand's tangent is 1. Tangents are sparse: an absent one is
  /// exactly zero and a product by the seed is the other factor, so the
  /// gradient body reads only what the derivative needs (the weight
  /// gradient of a matmul reads the activation and the adjoint, not the
  /// weight).
  void seed(Value arg) {
    one = arith::ConstantOp::create(b, loc, b.getFloatAttr(arg.getType(), 1.0));
    tangents[arg] = one;
  }
  Value get(Value v) const { return tangents.lookup(v); }

  /// Propagates through `op` (already cloned into `primal`). Fails on an op
  /// with a varying operand and no rule.
  LogicalResult visit(Operation *op);

private:
  Value p(Value v) { return primal.lookupOrDefault(v); }
  Value zero(Type t) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(t, 0.0));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  /// t * y for a tangent t that may be absent (zero) or the seed (one).
  Value scale(Value t, Value y) {
    if (!t)
      return {};
    return t == one ? y : mul(t, y);
  }
  /// x + y for tangents that may be absent.
  Value sum(Value x, Value y) {
    if (!x || !y)
      return x ? x : y;
    return add(x, y);
  }
  Value orZero(Value t, Type type) { return t ? t : zero(type); }
  /// Derivative of max/min: the tangent of the operand that wins; at a tie
  /// with a constant the constant wins (ReLU's gradient at 0 is 0, as in
  /// PyTorch), otherwise the two tangents are averaged.
  Value select(Operation *op, bool isMax);

  OpBuilder &b;
  Location loc;
  IRMapping &primal;
  llvm::DenseMap<Value, Value> tangents;
  Value one;
};

} // namespace

Value TangentBuilder::select(Operation *op, bool isMax) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  Value tl = get(lhs), tr = get(rhs);
  Type type = op->getResult(0).getType();
  auto pred = isMax ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT;
  Value lhsWins = arith::CmpFOp::create(b, loc, pred, p(lhs), p(rhs));
  Value rhsWins = arith::CmpFOp::create(b, loc, pred, p(rhs), p(lhs));
  Value tie;
  if (tl && tr) {
    Value half = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 0.5));
    tie = mul(add(tl, tr), half);
  } else {
    tie = zero(type);
  }
  Value rhsOrTie =
      arith::SelectOp::create(b, loc, rhsWins, orZero(tr, type), tie);
  return arith::SelectOp::create(b, loc, lhsWins, orZero(tl, type), rhsOrTie);
}

LogicalResult TangentBuilder::visit(Operation *op) {
  if (llvm::none_of(op->getOperands(),
                    [&](Value v) { return tangents.contains(v); }))
    return success();
  if (op->getNumResults() != 1)
    return op->emitError("'") << op->getName()
                              << "' in a linalg body is not supported by "
                                 "qtrain: no derivative rule";
  Value result = op->getResult(0);
  Type type = result.getType();
  auto t = [&](unsigned i) { return orZero(get(op->getOperand(i)), type); };
  Value r = p(result);
  Value d;
  Value t0 = get(op->getOperand(0));
  Value t1 = op->getNumOperands() > 1 ? get(op->getOperand(1)) : Value();
  if (isa<arith::AddFOp>(op)) {
    d = sum(t0, t1);
  } else if (isa<arith::SubFOp>(op)) {
    d = !t1   ? t0
        : !t0 ? Value(arith::NegFOp::create(b, loc, t1))
              : Value(arith::SubFOp::create(b, loc, t0, t1));
  } else if (isa<arith::MulFOp>(op)) {
    d = sum(scale(t0, p(op->getOperand(1))), scale(t1, p(op->getOperand(0))));
  } else if (isa<arith::DivFOp>(op)) {
    // (t0 - r * t1) / y with r = x / y.
    Value num = arith::SubFOp::create(b, loc, t(0), mul(r, t(1)));
    d = arith::DivFOp::create(b, loc, num, p(op->getOperand(1)));
  } else if (isa<arith::NegFOp>(op)) {
    d = arith::NegFOp::create(b, loc, t(0));
  } else if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op)) {
    d = select(op, /*isMax=*/true);
  } else if (isa<arith::MinimumFOp, arith::MinNumFOp>(op)) {
    d = select(op, /*isMax=*/false);
  } else if (auto sel = dyn_cast<arith::SelectOp>(op)) {
    if (tangents.contains(sel.getCondition()))
      return success();
    d = arith::SelectOp::create(b, loc, p(sel.getCondition()), t(1), t(2));
  } else if (isa<arith::CmpFOp, arith::CmpIOp, arith::FPToSIOp,
                 arith::FPToUIOp>(op)) {
    // Piecewise-constant: no tangent.
    return success();
  } else if (isa<arith::ExtFOp, arith::TruncFOp>(op)) {
    d = isa<arith::ExtFOp>(op)
            ? Value(arith::ExtFOp::create(b, loc, type, t0))
            : Value(arith::TruncFOp::create(b, loc, type, t0));
  } else if (isa<math::ExpOp>(op)) {
    d = mul(r, t(0));
  } else if (isa<math::LogOp>(op)) {
    d = arith::DivFOp::create(b, loc, t(0), p(op->getOperand(0)));
  } else if (isa<math::TanhOp>(op)) {
    Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 1.0));
    d = mul(arith::SubFOp::create(b, loc, one, mul(r, r)), t(0));
  } else if (isa<math::SqrtOp>(op)) {
    Value two = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 2.0));
    d = arith::DivFOp::create(b, loc, t(0), mul(two, r));
  } else if (isa<math::RsqrtOp>(op)) {
    Value mhalf = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, -0.5));
    d = mul(mul(mhalf, mul(r, mul(r, r))), t(0));
  } else if (isa<math::ErfOp>(op)) {
    // erf'(x) = 2 / sqrt(pi) * exp(-x^2).
    Value x = p(op->getOperand(0));
    Value c = arith::ConstantOp::create(
        b, loc, b.getFloatAttr(type, 1.1283791670955126));
    Value e =
        math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, mul(x, x)));
    d = mul(mul(c, e), t(0));
  } else if (auto pow = dyn_cast<math::PowFOp>(op)) {
    // d(x^y) = y x^(y-1) dx + x^y ln(x) dy.
    Value x = p(pow.getLhs()), y = p(pow.getRhs());
    Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 1.0));
    Value lower =
        math::PowFOp::create(b, loc, x, arith::SubFOp::create(b, loc, y, one));
    d = sum(scale(t0, mul(y, lower)),
            scale(t1, mul(r, math::LogOp::create(b, loc, x))));
  } else if (auto powi = dyn_cast<math::FPowIOp>(op)) {
    // d(x^n) = n x^(n-1) dx.
    Value n = p(powi.getRhs());
    Value one =
        arith::ConstantOp::create(b, loc, b.getIntegerAttr(n.getType(), 1));
    Value lower = math::FPowIOp::create(b, loc, p(powi.getLhs()),
                                        arith::SubIOp::create(b, loc, n, one));
    d = mul(mul(arith::SIToFPOp::create(b, loc, type, n), lower), t(0));
  } else if (isa<math::Log1pOp>(op)) {
    Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 1.0));
    d = arith::DivFOp::create(b, loc, t(0), add(one, p(op->getOperand(0))));
  } else if (isa<math::Log2Op>(op)) {
    Value ln2 = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, M_LN2));
    d = arith::DivFOp::create(b, loc, t(0), mul(ln2, p(op->getOperand(0))));
  } else if (isa<math::Exp2Op>(op)) {
    Value ln2 = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, M_LN2));
    d = mul(mul(r, ln2), t(0));
  } else if (isa<math::ExpM1Op>(op)) {
    Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 1.0));
    d = mul(add(r, one), t(0));
  } else if (isa<math::AbsFOp>(op)) {
    Value x = p(op->getOperand(0));
    Value neg =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero(type));
    d = arith::SelectOp::create(b, loc, neg,
                                arith::NegFOp::create(b, loc, t(0)), t(0));
  } else {
    return op->emitError("'") << op->getName()
                              << "' in a linalg body is not supported by "
                                 "qtrain: no derivative rule";
  }
  tangents[result] = d;
  return success();
}

/// Marks in `covered` the loops `map` indexes directly.
static void markLoops(AffineMap map, llvm::BitVector &covered) {
  for (AffineExpr e : map.getResults())
    if (auto d = dyn_cast<AffineDimExpr>(e))
      covered.set(d.getPosition());
}

/// Erases the dead scalar ops of `op`'s body and the inputs it no longer
/// reads: the primal clone leaves operands the derivative does not need, and
/// a contraction's gradient should take just the two factors it multiplies.
/// An unread input stays when it is the only one that sizes a loop (a sum
/// over a dimension only it has): linalg derives the loop ranges from the
/// operands' shapes, so every loop must keep an operand that indexes it.
static linalg::GenericOp dropUnusedInputs(OpBuilder &b, linalg::GenericOp op) {
  Block *body = op.getBody();
  SmallVector<Operation *> bodyOps;
  for (Operation &bodyOp : body->without_terminator())
    bodyOps.push_back(&bodyOp);
  for (Operation *bodyOp : llvm::reverse(bodyOps))
    if (isOpTriviallyDead(bodyOp))
      bodyOp->erase();
  // Loops sized by what stays anyway: the read inputs and the inits.
  llvm::BitVector covered(op.getNumLoops());
  for (OpOperand *in : op.getDpsInputOperands())
    if (!op.getMatchingBlockArgument(in).use_empty())
      markLoops(op.getMatchingIndexingMap(in), covered);
  for (OpOperand &init : op.getDpsInitsMutable())
    markLoops(op.getMatchingIndexingMap(&init), covered);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  llvm::BitVector unused(body->getNumArguments());
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(in);
    if (op.getMatchingBlockArgument(in).use_empty()) {
      llvm::BitVector sized(op.getNumLoops());
      markLoops(map, sized);
      if (sized.test(covered)) {
        // It sizes a loop nothing else does: keep it.
        covered |= sized;
      } else {
        unused.set(op.getMatchingBlockArgument(in).getArgNumber());
        continue;
      }
    }
    inputs.push_back(in->get());
    maps.push_back(map);
  }
  if (unused.none())
    return op;
  for (OpOperand &init : op.getDpsInitsMutable())
    maps.push_back(op.getMatchingIndexingMap(&init));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op);
  auto slim = linalg::GenericOp::create(b, op.getLoc(), op.getResultTypes(),
                                        inputs, op.getDpsInits(), maps,
                                        op.getIteratorTypesArray());
  slim.getRegion().takeBody(op.getRegion());
  slim.getBody()->eraseArguments(unused);
  op->replaceAllUsesWith(slim->getResults());
  op->erase();
  return slim;
}

/// Finds the reduction combiner of `op`'s body, or fails with an error.
static FailureOr<BodyInfo> analyzeBody(linalg::LinalgOp op) {
  BodyInfo info;
  Block *body = op.getBlock();
  Value yielded = body->getTerminator()->getOperand(0);
  info.term = yielded;
  if (op.getNumReductionLoops() == 0)
    return info;
  BlockArgument acc = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  Operation *combine = yielded.getDefiningOp();
  if (combine && combine->getNumOperands() == 2 && acc.hasOneUse()) {
    Value other = combine->getOperand(0) == acc   ? combine->getOperand(1)
                  : combine->getOperand(1) == acc ? combine->getOperand(0)
                                                  : Value();
    if (other) {
      info.term = other;
      if (isa<arith::AddFOp>(combine))
        info.combiner = Combiner::Add;
      else if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combine))
        info.combiner = Combiner::Max;
      else if (isa<arith::MinimumFOp, arith::MinNumFOp>(combine))
        info.combiner = Combiner::Min;
    }
  }
  if (info.combiner == Combiner::None)
    return op->emitError("'")
           << op->getName()
           << "' is not supported by qtrain: reverse mode handles reductions "
              "that combine with addf, maximumf or minimumf only";
  return info;
}

/// Whether `target` depends on `arg` inside the body.
static bool dependsOn(Block *body, Value arg, Value target) {
  llvm::DenseSet<Value> reach{arg};
  for (Operation &op : body->without_terminator())
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return reach.contains(v); }))
      reach.insert(op.getResults().begin(), op.getResults().end());
  return reach.contains(target);
}

namespace mlir::qtrain {
LogicalResult differentiateLinalgOperand(ReverseMode &rm, linalg::LinalgOp op,
                                         OpOperand &operand);
} // namespace mlir::qtrain

LogicalResult mlir::qtrain::differentiateLinalgOperand(ReverseMode &rm,
                                                       linalg::LinalgOp op,
                                                       OpOperand &operand) {
  Value dY = rm.getAdjoint(op->getResult(0));
  OpOperand *init = op.getDpsInitOperand(0);
  FailureOr<BodyInfo> info = analyzeBody(op);
  if (failed(info))
    return failure();

  // The accumulator of a reduction: d(init) = dY for a sum. A max/min over a
  // varied init is not needed by any model qtrain takes.
  if (&operand == init && info->combiner != Combiner::None) {
    if (info->combiner != Combiner::Add)
      return op->emitError("'")
             << op->getName()
             << "' is not supported by qtrain: the gradient of a max/min "
                "reduction's initial value";
    rm.accumulate(operand.get(), dY);
    return success();
  }

  Block *body = op.getBlock();
  BlockArgument arg = op.getMatchingBlockArgument(&operand);
  if (!dependsOn(body, arg, info->term))
    return success();
  auto gradType = dyn_cast<RankedTensorType>(operand.get().getType());
  if (!gradType)
    return op->emitError("'") << op->getName()
                              << "' is not supported by qtrain: the gradient "
                                 "of a scalar operand";
  OpBuilder &b = rm.getBuilder();
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();

  // A unit dimension may be broadcast by a constant-0 index (torch-mlir
  // writes `(d0, d1) -> (0, d1)`). The gradient is computed without those
  // dimensions and expanded back at the end.
  AffineMap fullMap = op.getMatchingIndexingMap(&operand);
  SmallVector<AffineExpr> keptExprs;
  SmallVector<int64_t> keptShape;
  SmallVector<bool> kept;
  for (auto [i, e] : llvm::enumerate(fullMap.getResults())) {
    auto c = dyn_cast<AffineConstantExpr>(e);
    bool unitBroadcast = c && c.getValue() == 0 && gradType.getDimSize(i) == 1;
    kept.push_back(!unitBroadcast);
    if (unitBroadcast)
      continue;
    keptExprs.push_back(e);
    keptShape.push_back(gradType.getDimSize(i));
  }
  AffineMap gradMap = AffineMap::get(fullMap.getNumDims(), 0, keptExprs, ctx);
  if (!gradMap.isProjectedPermutation())
    return op->emitError("'")
           << op->getName() << "' is not supported by qtrain: operand #"
           << operand.getOperandNumber()
           << " is read through a map that is not a projected permutation ("
           << AffineMapAttr::get(fullMap) << ")";
  auto fullGradType = gradType;
  gradType = RankedTensorType::get(keptShape, gradType.getElementType());

  AffineMap outMap = op.getMatchingIndexingMap(init);

  // Inputs of the gradient op: every input of the forward op, the forward
  // accumulator if the body reads it, the forward result for max/min masks,
  // and the adjoint.
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *in : op.getDpsInputOperands()) {
    inputs.push_back(in->get());
    maps.push_back(op.getMatchingIndexingMap(in));
  }
  BlockArgument acc = op.getMatchingBlockArgument(init);
  bool readsAcc = info->combiner == Combiner::None && !acc.use_empty();
  if (readsAcc) {
    inputs.push_back(init->get());
    maps.push_back(outMap);
  }
  bool masked =
      info->combiner == Combiner::Max || info->combiner == Combiner::Min;
  if (masked) {
    inputs.push_back(op->getResult(0));
    maps.push_back(outMap);
  }
  inputs.push_back(dY);
  maps.push_back(outMap);

  // Loops the operand does not index are summed over.
  unsigned numLoops = op.getNumLoops();
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::reduction);
  for (AffineExpr e : gradMap.getResults())
    iterators[cast<AffineDimExpr>(e).getPosition()] =
        utils::IteratorType::parallel;
  bool sums = gradMap.getNumResults() != numLoops;
  Value gradInit =
      sums ? rm.zeros(loc, gradType)
           : Value(tensor::EmptyOp::create(b, loc, gradType.getShape(),
                                           gradType.getElementType()));
  maps.push_back(gradMap);

  LogicalResult status = success();
  // Set when the term depends on the operand only through comparisons or
  // selects of constants (piecewise constant): the derivative is exactly
  // zero and the operand gets no gradient from this op.
  bool zeroDerivative = false;
  auto grad = linalg::GenericOp::create(
      b, loc, TypeRange{gradType}, inputs, ValueRange{gradInit}, maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        IRMapping primal;
        unsigned next = 0;
        for (BlockArgument a : op.getRegionInputArgs())
          primal.map(a, args[next++]);
        if (readsAcc)
          primal.map(acc, args[next++]);
        Value fwdResult = masked ? args[next++] : Value();
        Value dy = args[next++];
        Value gradAcc = args[next];
        // A reduction's combiner reads the forward accumulator, which the
        // gradient op does not have; only the combined term is rebuilt.
        Operation *combiner =
            info->combiner == Combiner::None
                ? nullptr
                : body->getTerminator()->getOperand(0).getDefiningOp();
        for (Operation &bodyOp : body->without_terminator())
          if (&bodyOp != combiner)
            nb.clone(bodyOp, primal);
        TangentBuilder tangents(nb, nloc, primal);
        tangents.seed(arg);
        for (Operation &bodyOp : body->without_terminator())
          if (&bodyOp != combiner && failed(tangents.visit(&bodyOp))) {
            status = failure();
            break;
          }
        Value contribution;
        if (succeeded(status)) {
          // The term may depend on the operand only through comparisons
          // (piecewise constant): the derivative is zero.
          Value t = tangents.get(info->term);
          if (!t) {
            zeroDerivative = true;
            t = arith::ConstantOp::create(nb, nloc,
                                          nb.getFloatAttr(dy.getType(), 0.0));
          }
          contribution = arith::MulFOp::create(nb, nloc, t, dy);
          if (masked) {
            Value isWinner = arith::CmpFOp::create(
                nb, nloc, arith::CmpFPredicate::OEQ,
                primal.lookupOrDefault(info->term), fwdResult);
            Value zero = arith::ConstantOp::create(
                nb, nloc, nb.getFloatAttr(dy.getType(), 0.0));
            contribution =
                arith::SelectOp::create(nb, nloc, isWinner, contribution, zero);
          }
          if (sums)
            contribution =
                arith::AddFOp::create(nb, nloc, gradAcc, contribution);
        } else {
          contribution = gradAcc;
        }
        linalg::YieldOp::create(nb, nloc, contribution);
      });
  if (failed(status) || zeroDerivative) {
    grad->erase();
    return status;
  }
  grad = dropUnusedInputs(b, grad);
  Value result = grad.getResult(0);
  if (gradType != fullGradType) {
    // Put the unit dimensions back: each joins the group of the next kept
    // dimension, or of the last one when none follows.
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices pending;
    for (auto [i, isKept] : llvm::enumerate(kept)) {
      pending.push_back(i);
      if (isKept) {
        groups.push_back(pending);
        pending.clear();
      }
    }
    if (!pending.empty() && !groups.empty())
      groups.back().append(pending.begin(), pending.end());
    result =
        tensor::ExpandShapeOp::create(b, loc, fullGradType, result, groups);
  }
  rm.accumulate(operand.get(), result);
  return success();
}

/// The gradient of a table that `op`'s body reads with `extract` (an
/// embedding lookup: `tensor.extract %table[%row, %j]` with %row cast from an
/// integer input): a scatter-add of the term's derivative times the adjoint
/// into a zero table. A table index that is a loop's `linalg.index` (the
/// embedding column) becomes that loop of the gradient op; every other index
/// gets a new loop over the table dimension, and a position of the forward
/// iteration space contributes where the computed index equals it. The
/// forward loops the table does not follow are reductions, so the sum over
/// the tokens is one ordered loop in every thread split (the parallelize
/// pass only splits parallel loops): the result does not depend on the
/// thread count.
static LogicalResult differentiateGather(ReverseMode &rm, linalg::LinalgOp op,
                                         tensor::ExtractOp extract) {
  auto tableType = dyn_cast<RankedTensorType>(extract.getTensor().getType());
  if (!tableType || !tableType.hasStaticShape())
    return op->emitError("'") << op->getName()
                              << "' is not supported by qtrain: a gather "
                                 "from a dynamically shaped table";
  FailureOr<BodyInfo> info = analyzeBody(op);
  if (failed(info))
    return failure();
  if (info->combiner == Combiner::Max || info->combiner == Combiner::Min)
    return op->emitError("'")
           << op->getName()
           << "' is not supported by qtrain: a max/min reduction of gathered "
              "values";
  Block *body = op.getBlock();
  if (!dependsOn(body, extract.getResult(), info->term))
    return success();
  OpBuilder &b = rm.getBuilder();
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  unsigned numLoops = op.getNumLoops();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();

  // Each table dimension: a forward loop, or a new loop compared with the
  // computed index.
  SmallVector<AffineExpr> tableExprs;
  SmallVector<Value> computed;
  llvm::BitVector used(numLoops);
  for (auto [dim, index] : llvm::enumerate(extract.getIndices())) {
    auto loopIndex = index.getDefiningOp<linalg::IndexOp>();
    if (loopIndex && loopIndex->getBlock() == body &&
        !used.test(loopIndex.getDim()) &&
        ranges[loopIndex.getDim()] == tableType.getDimSize(dim)) {
      used.set(loopIndex.getDim());
      tableExprs.push_back(getAffineDimExpr(loopIndex.getDim(), ctx));
      continue;
    }
    tableExprs.push_back(getAffineDimExpr(numLoops + computed.size(), ctx));
    computed.push_back(index);
  }
  unsigned totalLoops = numLoops + computed.size();
  auto widen = [&](AffineMap map) {
    return AffineMap::get(totalLoops, 0, map.getResults(), ctx);
  };
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *in : op.getDpsInputOperands()) {
    inputs.push_back(in->get());
    maps.push_back(widen(op.getMatchingIndexingMap(in)));
  }
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  BlockArgument acc = op.getMatchingBlockArgument(init);
  bool readsAcc = info->combiner == Combiner::None && !acc.use_empty();
  if (readsAcc) {
    inputs.push_back(init->get());
    maps.push_back(widen(outMap));
  }
  inputs.push_back(rm.getAdjoint(op->getResult(0)));
  maps.push_back(widen(outMap));
  maps.push_back(AffineMap::get(totalLoops, 0, tableExprs, ctx));
  SmallVector<utils::IteratorType> iterators(totalLoops,
                                             utils::IteratorType::reduction);
  for (AffineExpr e : tableExprs)
    iterators[cast<AffineDimExpr>(e).getPosition()] =
        utils::IteratorType::parallel;

  LogicalResult status = success();
  bool zeroDerivative = false;
  Operation *combiner =
      info->combiner == Combiner::None
          ? nullptr
          : body->getTerminator()->getOperand(0).getDefiningOp();
  auto grad = linalg::GenericOp::create(
      b, loc, TypeRange{tableType}, inputs,
      ValueRange{rm.zeros(loc, tableType)}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        IRMapping primal;
        unsigned next = 0;
        for (BlockArgument a : op.getRegionInputArgs())
          primal.map(a, args[next++]);
        if (readsAcc)
          primal.map(acc, args[next++]);
        Value dy = args[next++];
        Value gradAcc = args[next];
        for (Operation &bodyOp : body->without_terminator())
          if (&bodyOp != combiner)
            nb.clone(bodyOp, primal);
        TangentBuilder tangents(nb, nloc, primal);
        tangents.seed(extract.getResult());
        for (Operation &bodyOp : body->without_terminator())
          if (&bodyOp != combiner && failed(tangents.visit(&bodyOp))) {
            status = failure();
            linalg::YieldOp::create(nb, nloc, gradAcc);
            return;
          }
        Value t = tangents.get(info->term);
        Type f = dy.getType();
        Value zero =
            arith::ConstantOp::create(nb, nloc, nb.getFloatAttr(f, 0.0));
        if (!t) {
          zeroDerivative = true;
          t = zero;
        }
        Value contribution = arith::MulFOp::create(nb, nloc, t, dy);
        for (auto [k, index] : llvm::enumerate(computed)) {
          Value here = linalg::IndexOp::create(nb, nloc, numLoops + k);
          Value hit =
              arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq,
                                    primal.lookupOrDefault(index), here);
          contribution =
              arith::SelectOp::create(nb, nloc, hit, contribution, zero);
        }
        linalg::YieldOp::create(
            nb, nloc,
            arith::AddFOp::create(nb, nloc, gradAcc, contribution).getResult());
      });
  if (failed(status) || zeroDerivative) {
    grad->erase();
    return status;
  }
  grad = dropUnusedInputs(b, grad);
  rm.accumulate(extract.getTensor(), grad.getResult(0));
  return success();
}

LogicalResult mlir::qtrain::differentiateLinalgOp(ReverseMode &rm,
                                                  Operation *op) {
  auto linalgOp = cast<linalg::LinalgOp>(op);
  if (!linalgOp.hasPureTensorSemantics() || op->getNumResults() != 1)
    return op->emitError("'") << op->getName()
                              << "' is not supported by qtrain: reverse mode "
                                 "needs one tensor result";
  for (OpOperand &operand : op->getOpOperands()) {
    if (!rm.isVaried(operand.get()))
      continue;
    if (failed(differentiateLinalgOperand(rm, linalgOp, operand)))
      return failure();
  }
  // Values the body reads from above: a varied table read by tensor.extract
  // is a gather; any other use has no rule.
  Block *body = linalgOp.getBlock();
  WalkResult walk =
      op->walk([&](Operation *inner) {
        if (inner == op)
          return WalkResult::advance();
        for (Value v : inner->getOperands()) {
          if (!rm.isVaried(v) || v.getParentBlock() == body ||
              op->isProperAncestor(v.getParentBlock()->getParentOp()))
            continue;
          auto extract = dyn_cast<tensor::ExtractOp>(inner);
          if (!extract || v != extract.getTensor() ||
              inner->getBlock() != body) {
            op->emitError("'")
                << op->getName()
                << "' is not supported by qtrain: its body reads a value that "
                   "depends on a parameter from above other than a table read "
                   "by tensor.extract ('"
                << inner->getName() << "')";
            return WalkResult::interrupt();
          }
          if (failed(differentiateGather(rm, linalgOp, extract)))
            return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
  return failure(walk.wasInterrupted());
}
