//===- FreshInit.cpp - PyTorch's default init of a parameter ----*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Analysis/FreshInit.h"

#include "QTrain/QTrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::qtrain;

/// How deep the traces below follow layout-only ops; exports put one or
/// two between a weight and its layer.
static constexpr unsigned kMaxDepth = 16;

StringRef mlir::qtrain::stringifyFreshInitKind(FreshInitKind kind) {
  switch (kind) {
  case FreshInitKind::KaimingUniform:
    return "kaiming_uniform";
  case FreshInitKind::BiasUniform:
    return "bias_uniform";
  case FreshInitKind::Ones:
    return "ones";
  case FreshInitKind::Zeros:
    return "zeros";
  case FreshInitKind::Normal:
    return "normal";
  }
  llvm_unreachable("unknown FreshInitKind");
}

std::optional<FreshInitKind>
mlir::qtrain::symbolizeFreshInitKind(StringRef name) {
  for (FreshInitKind kind :
       {FreshInitKind::KaimingUniform, FreshInitKind::BiasUniform,
        FreshInitKind::Ones, FreshInitKind::Zeros, FreshInitKind::Normal})
    if (stringifyFreshInitKind(kind) == name)
      return kind;
  return std::nullopt;
}

/// A layer: a structured op with reduction loops whose body multiplies
/// (convolutions of every layout, matmul, batch_matmul, contractions written
/// as linalg.generic); poolings and plain reductions do not multiply.
static bool isLayer(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() < 2 || op.getNumReductionLoops() == 0)
    return false;
  Block *body = op.getBlock();
  return body &&
         llvm::any_of(*body, llvm::IsaPred<arith::MulFOp, arith::MulIOp>);
}

/// The fan-in of a layer: the product of its reduction loops, with the
/// loops spelled out for remarks; nullopt when one is dynamic.
static std::optional<int64_t> getFanIn(linalg::LinalgOp layer,
                                       std::string &loops) {
  int64_t fanIn = 1;
  loops.clear();
  llvm::raw_string_ostream os(loops);
  for (auto [range, type] : llvm::zip_equal(layer.getStaticLoopRanges(),
                                            layer.getIteratorTypesArray())) {
    if (type != utils::IteratorType::reduction)
      continue;
    if (ShapedType::isDynamic(range))
      return std::nullopt;
    os << (loops.empty() ? "" : "x") << range;
    fanIn *= range;
  }
  return fanIn;
}

/// An all-parallel linalg.generic of one input and one init whose body
/// yields the input: a copy (transpose) or a broadcast of the input.
static bool isCopyOrBroadcast(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return false;
  auto yield = cast<linalg::YieldOp>(generic.getBlock()->getTerminator());
  return yield.getNumOperands() == 1 &&
         yield.getOperand(0) == generic.getBlock()->getArgument(0);
}

/// The function `call` calls, when it has a body.
static func::FuncOp getCallee(func::CallOp call) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  return callee && !callee.isExternal() ? callee : func::FuncOp();
}

/// Ops that hand a value on with its elements unchanged but for layout
/// and rounding, and calls (the kernel variants of a materialized step take
/// the weights as arguments): `use` is the operand that carries it.
static Value getLayoutResult(OpOperand &use) {
  Operation *user = use.getOwner();
  if (auto call = dyn_cast<func::CallOp>(user)) {
    func::FuncOp callee = getCallee(call);
    return callee ? callee.getArgument(use.getOperandNumber()) : Value();
  }
  if (auto transpose = dyn_cast<linalg::TransposeOp>(user))
    return use.get() == transpose.getInput() ? transpose->getResult(0)
                                             : Value();
  if (isa<tensor::CastOp, tensor::CollapseShapeOp, tensor::ExpandShapeOp>(user))
    return user->getResult(0);
  if (isa<FakeQuantOp, QuantizeOp, RoundFloatOp>(user) &&
      use.getOperandNumber() == 0)
    return user->getResult(0);
  if (isCopyOrBroadcast(user) && use.getOperandNumber() == 0)
    return user->getResult(0);
  return {};
}

/// The layer that produced `value`, seen through layout-only ops.
static linalg::LinalgOp getProducingLayer(Value value, unsigned depth = 0) {
  Operation *def = value.getDefiningOp();
  if (!def || depth > kMaxDepth)
    return {};
  if (auto layer = dyn_cast<linalg::LinalgOp>(def); layer && isLayer(layer))
    return layer;
  unsigned index = cast<OpResult>(value).getResultNumber();
  if (auto call = dyn_cast<func::CallOp>(def)) {
    func::FuncOp callee = getCallee(call);
    if (!callee)
      return {};
    Operation *ret = callee.getBody().back().getTerminator();
    return getProducingLayer(ret->getOperand(index), depth + 1);
  }
  // The kernel dispatch of a materialized step: every case computes the
  // same layer.
  if (auto dispatch = dyn_cast<scf::IndexSwitchOp>(def))
    return getProducingLayer(
        dispatch.getDefaultBlock().getTerminator()->getOperand(index),
        depth + 1);
  for (OpOperand &operand : def->getOpOperands())
    if (getLayoutResult(operand) == value)
      return getProducingLayer(operand.get(), depth + 1);
  return {};
}

namespace {
/// The best use found so far: an embedding table beats a weight (a tied
/// table keeps nn.Embedding's init), which beats a bias, which beats a
/// scale or shift, which beats a value combined with others into a layer's
/// bias (a weight position, but not the parameter's alone).
struct Finding {
  enum Rank {
    None,
    PartOfBias,
    ScaleOrShift,
    Bias,
    Weight,
    Embedding
  } rank = None;
  FreshInit init;

  void offer(Rank r, FreshInit candidate) {
    if (r <= rank)
      return;
    rank = r;
    init = std::move(candidate);
    init.fromUse = r != PartOfBias;
  }
};
} // namespace

/// Records in `found` what `value` (the parameter, or a copy of it) is to
/// the ops it flows into.
static void classifyUses(Value value, Finding &found, unsigned depth = 0) {
  if (depth > kMaxDepth)
    return;
  for (OpOperand &use : value.getUses()) {
    if (Value next = getLayoutResult(use)) {
      classifyUses(next, found, depth + 1);
      continue;
    }
    // An embedding lookup: an element of the table read at indices the
    // body of a linalg.generic computes (from token ids).
    if (auto extract = dyn_cast<tensor::ExtractOp>(use.getOwner());
        extract && use.get() == extract.getTensor() &&
        extract->getParentOfType<linalg::GenericOp>() &&
        llvm::any_of(extract.getIndices(), [](Value index) {
          return !index.getDefiningOp<arith::ConstantOp>();
        })) {
      found.offer(Finding::Embedding,
                  {FreshInitKind::Normal, 0, true,
                   "an embedding table (read by tensor.extract in "
                   "linalg.generic), N(0, 1) as nn.Embedding"});
      continue;
    }
    auto op = dyn_cast<linalg::LinalgOp>(use.getOwner());
    if (!op)
      continue;
    std::string opName = op->getName().getStringRef().str();
    std::string loops;
    if (isLayer(op)) {
      std::optional<int64_t> fanIn = getFanIn(op, loops);
      if (!fanIn)
        continue;
      bool isInit = op.isDpsInit(&use);
      FreshInit init;
      init.kind =
          isInit ? FreshInitKind::BiasUniform : FreshInitKind::KaimingUniform;
      init.fanIn = *fanIn;
      init.reason = (isInit ? "the bias (the init) of " : "the weight of ") +
                    opName + ", fan_in " + std::to_string(*fanIn) +
                    " (reduction loops " + loops + ")";
      found.offer(isInit ? Finding::Bias : Finding::Weight, std::move(init));
      continue;
    }
    // An elementwise op that broadcasts the parameter over some loops:
    // what it does to the parameter's element decides.
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic || !generic.isDpsInput(&use) ||
        generic.getNumParallelLoops() != generic.getNumLoops() ||
        generic.getMatchingIndexingMap(&use).getNumResults() >=
            generic.getNumLoops())
      continue;
    BlockArgument element = generic.getMatchingBlockArgument(&use);
    Block *body = generic.getBlock();
    for (Operation *user : element.getUsers()) {
      bool scales = isa<arith::MulFOp, arith::DivFOp>(user);
      if (!scales && !isa<arith::AddFOp, arith::SubFOp>(user))
        continue;
      // The other operand is the activation: an input read with every
      // loop, or a value the body computed from the inputs.
      Value other = user->getOperand(user->getOperand(0) == element ? 1 : 0);
      auto arg = dyn_cast<BlockArgument>(other);
      if (arg &&
          (arg.getOwner() != body ||
           arg.getArgNumber() >= generic.getNumDpsInputs() ||
           generic.getIndexingMapsArray()[arg.getArgNumber()].getNumResults() !=
               generic.getNumLoops()))
        continue;
      std::string what = user->getName().getStringRef().str() + " in " + opName;
      if (scales) {
        found.offer(Finding::ScaleOrShift,
                    {FreshInitKind::Ones, 0, true,
                     "a per-channel scale (" + what + ")"});
        continue;
      }
      // Added to a layer's output: that layer's bias.
      linalg::LinalgOp layer =
          arg ? getProducingLayer(generic.getDpsInputs()[arg.getArgNumber()])
              : linalg::LinalgOp();
      if (std::optional<int64_t> fanIn =
              layer ? getFanIn(layer, loops) : std::nullopt)
        found.offer(Finding::Bias, {FreshInitKind::BiasUniform, *fanIn, true,
                                    "the bias added to the output of " +
                                        layer->getName().getStringRef().str() +
                                        ", fan_in " + std::to_string(*fanIn) +
                                        " (reduction loops " + loops + ")"});
      found.offer(Finding::ScaleOrShift,
                  {FreshInitKind::Zeros, 0, true,
                   "a per-channel shift (" + what + ")"});
    }
    // Combined with other per-channel values into a layer's init (a bias
    // plus a constant): initialized as that layer's bias.
    Finding result;
    classifyUses(generic->getResult(0), result, depth + 1);
    if (result.rank == Finding::Bias &&
        result.init.kind == FreshInitKind::BiasUniform)
      found.offer(Finding::PartOfBias, result.init);
  }
}

FreshInit mlir::qtrain::inferFreshInit(Value param) {
  Finding found;
  classifyUses(param, found);
  if (found.rank != Finding::None)
    return found.init;
  FreshInit init;
  auto type = dyn_cast<RankedTensorType>(param.getType());
  if (type && type.getRank() >= 2 && type.hasStaticShape()) {
    init.kind = FreshInitKind::KaimingUniform;
    init.fanIn = type.getNumElements() / type.getDimSize(0);
    init.reason = "no layer uses it as a weight; fan_in " +
                  std::to_string(init.fanIn) + " from its shape";
    return init;
  }
  init.kind = FreshInitKind::Zeros;
  init.reason = "no layer uses it as a weight, bias, scale or shift";
  return init;
}

DictionaryAttr mlir::qtrain::getFreshInitAttr(MLIRContext *ctx,
                                              const FreshInit &init) {
  Builder b(ctx);
  return b.getDictionaryAttr(
      {b.getNamedAttr("kind",
                      b.getStringAttr(stringifyFreshInitKind(init.kind))),
       b.getNamedAttr("fan_in", b.getI64IntegerAttr(init.fanIn))});
}

std::optional<FreshInit> mlir::qtrain::readFreshInitAttr(Attribute attr) {
  auto dict = dyn_cast_or_null<DictionaryAttr>(attr);
  if (!dict || dict.size() != 2)
    return std::nullopt;
  auto kind = dict.getAs<StringAttr>("kind");
  auto fanIn = dict.getAs<IntegerAttr>("fan_in");
  std::optional<FreshInitKind> parsed =
      kind ? symbolizeFreshInitKind(kind.getValue()) : std::nullopt;
  if (!parsed || !fanIn || !fanIn.getType().isInteger(64))
    return std::nullopt;
  bool bounded = *parsed == FreshInitKind::KaimingUniform ||
                 *parsed == FreshInitKind::BiasUniform;
  if (fanIn.getInt() < 0 || (bounded && fanIn.getInt() == 0))
    return std::nullopt;
  FreshInit init;
  init.kind = *parsed;
  init.fanIn = fanIn.getInt();
  init.fromUse = true;
  return init;
}
