//===- InsertRounding.cpp - Materialize assigned float formats --*- C++ -*-===//
//
// qtrain-insert-rounding: turns the qtrain.formats that
// qtrain-assign-precision wrote into qtrain.round_float (forward tensors P
// and Y) and qtrain.grad_round_float (their gradients GP and GY) on the
// forward graph, for qtrain-autodiff to differentiate.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Quant/Passes.h"

#include "QTrain/QTrainAttrs.h"
#include "QTrain/QTrainOps.h"
#include "qtrain/Search/Assignment.h"

#include "FloatFormatNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_INSERTROUNDINGPASS
#include "qtrain/Quant/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {
struct InsertRoundingPass
    : mlir::qtrain::impl::InsertRoundingPassBase<InsertRoundingPass> {
  using InsertRoundingPassBase::InsertRoundingPassBase;
  void runOnOperation() override;

private:
  LogicalResult addLossScale(func::FuncOp fn);
};
} // namespace

/// The formats under `forwardKey` and `gradKey` of a qtrain.formats
/// dictionary, or an error at `loc`.
static FailureOr<std::pair<FloatFormatAttr, FloatFormatAttr>>
getFormats(Location loc, Attribute attr, StringRef forwardKey,
           StringRef gradKey) {
  auto dict = dyn_cast<DictionaryAttr>(attr);
  auto forward = dict ? dict.getAs<FloatFormatAttr>(forwardKey) : nullptr;
  auto grad = dict ? dict.getAs<FloatFormatAttr>(gradKey) : nullptr;
  if (!forward || !grad)
    return emitError(loc, "qtrain-insert-rounding: '")
           << kFormatsAttrName << "' needs #qtrain.float entries '"
           << forwardKey << "' and '" << gradKey << "' here, got " << attr;
  return std::make_pair(forward, grad);
}

/// Whether qtrain.round_float can round a value of `type`.
static bool isF32Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

/// Makes every use of `value` except in `keep` read
/// grad_round_float(round_float(value)) (Y and GY) or
/// round_float(grad_round_float(value)) (P and GP), built at `b`.
/// Returns the forward rounding.
static RoundFloatOp roundUses(OpBuilder &b, Location loc, Value value,
                              FloatFormatAttr forward, FloatFormatAttr grad,
                              bool parameter) {
  MLIRContext *ctx = b.getContext();
  Role role = parameter ? Role::Weight : Role::Activation;
  Role gradRole = parameter ? Role::WeightGrad : Role::Error;
  Value rounded;
  Operation *first;
  RoundFloatOp forwardRound;
  if (parameter) {
    auto g = GradRoundFloatOp::create(b, loc, value, grad,
                                      RoleAttr::get(ctx, gradRole));
    first = g;
    forwardRound =
        RoundFloatOp::create(b, loc, g, forward, RoleAttr::get(ctx, role));
    rounded = forwardRound;
  } else {
    forwardRound =
        RoundFloatOp::create(b, loc, value, forward, RoleAttr::get(ctx, role));
    first = forwardRound;
    rounded = GradRoundFloatOp::create(b, loc, forwardRound, grad,
                                       RoleAttr::get(ctx, gradRole));
  }
  value.replaceAllUsesExcept(rounded, first);
  return forwardRound;
}

/// Appends a state argument of `kind` for `labels` to `fn` and a result
/// `value` (or the argument itself when null); returns the argument.
static Value addState(func::FuncOp fn, StringRef kind, ArrayAttr labels,
                      RankedTensorType type,
                      function_ref<Value(Value)> result) {
  MLIRContext *ctx = fn.getContext();
  SmallVector<NamedAttribute> attrs = {NamedAttribute(
      StringAttr::get(ctx, kStateAttrName), StringAttr::get(ctx, kind))};
  if (labels)
    attrs.push_back(
        NamedAttribute(StringAttr::get(ctx, kTensorsAttrName), labels));
  auto dict = DictionaryAttr::get(ctx, attrs);
  unsigned index = fn.getNumArguments();
  (void)fn.insertArgument(index, type, dict, fn.getLoc());
  Value arg = fn.getArgument(index);
  auto returnOp = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  OpBuilder b(returnOp);
  Value out = result(arg);
  (void)fn.insertResult(fn.getNumResults(), type, dict);
  returnOp.getOperandsMutable().append(out);
  return arg;
}

void InsertRoundingPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto fn = module.lookupSymbol<func::FuncOp>(forward);
  if (!fn || fn.isExternal()) {
    module.emitError("qtrain-insert-rounding: no function @") << forward;
    return signalPassFailure();
  }
  MLIRContext *ctx = &getContext();
  OpBuilder b(ctx);
  Block &body = fn.getBody().front();
  // Forward roundings to a format other than the high one, and their names.
  FloatFormatAttr high =
      toFormatAttr(ctx, ::qtrain::search::Formats().high, /*saturate=*/true);
  SmallVector<std::pair<RoundFloatOp, std::string>> promotable;
  for (BlockArgument arg : fn.getArguments()) {
    Attribute attr = fn.getArgAttr(arg.getArgNumber(), kFormatsAttrName);
    if (!attr)
      continue;
    if (!isF32Tensor(arg.getType())) {
      emitError(arg.getLoc(), "qtrain-insert-rounding: '")
          << kFormatsAttrName << "' on argument #" << arg.getArgNumber()
          << " of type " << arg.getType() << "; only f32 tensors are rounded";
      return signalPassFailure();
    }
    bool parameter = bool(fn.getArgAttr(arg.getArgNumber(), kParamAttrName));
    auto formats = getFormats(arg.getLoc(), attr, parameter ? "p" : "y",
                              parameter ? "gp" : "gy");
    if (failed(formats))
      return signalPassFailure();
    // A parameter is rounded right before its first reader, not at the
    // start: its rounded copy is a tensor of its own, which the step holds
    // from here until its last reader (convnet's fc1 weight: 4.5 MiB
    // through both convolutions). Other arguments (the data, state that
    // later passes read from anywhere) stay rounded at the start.
    b.setInsertionPointToStart(&body);
    if (parameter)
      for (Operation &op : body)
        if (llvm::any_of(arg.getUsers(), [&](Operation *user) {
              return body.findAncestorOpInBlock(*user) == &op;
            })) {
          b.setInsertionPoint(&op);
          break;
        }
    RoundFloatOp round = roundUses(b, arg.getLoc(), arg, formats->first,
                                   formats->second, parameter);
    if (formats->first != high)
      promotable.push_back(
          {round, argumentTensorName(parameter, arg.getArgNumber())});
    fn.removeArgAttr(arg.getArgNumber(), kFormatsAttrName);
    fn.removeArgAttr(arg.getArgNumber(), kGroupAttrName);
  }
  for (Operation &op : llvm::make_early_inc_range(body)) {
    Attribute attr = op.getAttr(kFormatsAttrName);
    if (!attr)
      continue;
    if (op.getNumResults() != 1 || !isF32Tensor(op.getResult(0).getType())) {
      op.emitError("qtrain-insert-rounding: '")
          << kFormatsAttrName << "' on an op without one f32 tensor result";
      return signalPassFailure();
    }
    auto formats = getFormats(op.getLoc(), attr, "y", "gy");
    if (failed(formats))
      return signalPassFailure();
    b.setInsertionPointAfter(&op);
    RoundFloatOp round = roundUses(b, op.getLoc(), op.getResult(0),
                                   formats->first, formats->second,
                                   /*parameter=*/false);
    if (formats->first != high)
      promotable.push_back({round, outputTensorName(&op)});
    op.removeAttr(kFormatsAttrName);
    op.removeAttr(kGroupAttrName);
  }
  if (lossScale && failed(addLossScale(fn)))
    return signalPassFailure();
  if (!promotion || promotable.empty())
    return;

  // Run-time promotion: a flag per low P or Y tensor (state "promotion",
  // passed through; the runtime sets it) picks the high rounding, and the
  // ratio of elements that overflow the low format leaves the step (state
  // "overflow").
  SmallVector<Attribute> names;
  for (auto &entry : promotable)
    names.push_back(StringAttr::get(ctx, entry.second));
  auto labels = ArrayAttr::get(ctx, names);
  auto type = RankedTensorType::get({int64_t(promotable.size())},
                                    Float32Type::get(ctx));
  Value flags =
      addState(fn, "promotion", labels, type, [](Value arg) { return arg; });
  SmallVector<Value> ratios;
  for (auto [i, entry] : llvm::enumerate(promotable)) {
    RoundFloatOp round = entry.first;
    Location loc = round.getLoc();
    b.setInsertionPoint(round);
    Value index = arith::ConstantIndexOp::create(b, loc, int64_t(i));
    Value flag = tensor::ExtractOp::create(b, loc, flags, index);
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
    Value promoted =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, flag, zero);
    round.getPromotedMutable().assign(promoted);
    round.setPromotedFormatAttr(high);
    b.setInsertionPointAfter(round);
    Value count =
        CountOverflowOp::create(b, loc, round.getInput(), round.getFormat());
    auto inputType = cast<RankedTensorType>(round.getInput().getType());
    Value ratio = arith::DivFOp::create(
        b, loc, arith::SIToFPOp::create(b, loc, b.getF32Type(), count),
        arith::ConstantOp::create(
            b, loc, b.getF32FloatAttr(float(inputType.getNumElements()))));
    ratios.push_back(ratio);
  }
  addState(fn, "overflow", labels, type, [&](Value) {
    auto returnOp = cast<func::ReturnOp>(body.getTerminator());
    OpBuilder rb(returnOp);
    return tensor::FromElementsOp::create(rb, fn.getLoc(), type, ratios)
        .getResult();
  });
}

/// Adds the loss scale: a state tensor the step returns unchanged.
LogicalResult InsertRoundingPass::addLossScale(func::FuncOp fn) {
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
    if (auto kind = fn.getArgAttrOfType<StringAttr>(i, kStateAttrName);
        kind && kind.getValue() == "loss_scale")
      return fn.emitError("qtrain-insert-rounding: @")
             << forward << " has a loss scale already";
  auto type = RankedTensorType::get({1}, Float32Type::get(&getContext()));
  addState(fn, "loss_scale", /*labels=*/nullptr, type,
           [](Value arg) { return arg; });
  return success();
}
