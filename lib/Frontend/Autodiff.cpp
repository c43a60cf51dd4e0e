//===- Autodiff.cpp - Build the training step from a forward graph --------===//
//
// qtrain-autodiff: clones @forward into @train_step, appends the loss, the
// reverse-mode backward pass and the SGD update, and renames @forward to
// @eval_step.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Frontend/Passes.h"

#include "QTrain/QTrainAttrs.h"
#include "QTrain/QTrainOps.h"
#include "qtrain/Autodiff/ReverseMode.h"
#include "qtrain/Autodiff/TrainingStep.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Remarks.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_AUTODIFFPASS
#include "qtrain/Frontend/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

struct AutodiffPass : qtrain::impl::AutodiffPassBase<AutodiffPass> {
  using AutodiffPassBase::AutodiffPassBase;
  void runOnOperation() override;

private:
  LogicalResult buildTrainStep(func::FuncOp forwardFn, LossKind lossKind);
};

} // namespace

/// Tags `op` with the role of its results, when it computes tensor data:
/// scalars and shape-only ops (tensor.empty) have no role, and quantizers
/// carry theirs already.
static void setRole(Operation *op, Role role) {
  if (isa<tensor::EmptyOp, FakeQuantOp, GradQuantOp, GradRoundFloatOp,
          RangeEmaOp, RunningStatOp, RoundFloatOp>(op) ||
      llvm::none_of(op->getResultTypes(), llvm::IsaPred<RankedTensorType>))
    return;
  op->setAttr(kRoleAttrName, RoleAttr::get(op->getContext(), role));
}

/// `t` times or divided by the scalar `s`, elementwise.
static Value scaleTensor(OpBuilder &b, Location loc, Value t, Value s,
                         bool divide) {
  auto type = cast<RankedTensorType>(t.getType());
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{t}, ValueRange{init},
      ArrayRef<AffineMap>{id, id},
      SmallVector<utils::IteratorType>(type.getRank(),
                                       utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value v = divide
                      ? arith::DivFOp::create(nb, nl, args[0], s).getResult()
                      : arith::MulFOp::create(nb, nl, args[0], s).getResult();
        linalg::YieldOp::create(nb, nl, v);
      });
  return generic.getResult(0);
}

LogicalResult AutodiffPass::buildTrainStep(func::FuncOp forwardFn,
                                           LossKind lossKind) {
  MLIRContext *ctx = &getContext();
  Location loc = forwardFn.getLoc();
  Block &body = forwardFn.getBody().front();
  auto returnOp = cast<func::ReturnOp>(body.getTerminator());
  Value logits = returnOp.getOperand(0);
  auto logitsType = cast<RankedTensorType>(logits.getType());

  // Parameters first, then the other inputs, in their forward order.
  SmallVector<unsigned> paramIdx, inputIdx;
  for (unsigned i = 0, e = forwardFn.getNumArguments(); i < e; ++i)
    (forwardFn.getArgAttr(i, kParamAttrName) ? paramIdx : inputIdx)
        .push_back(i);

  SmallVector<Type> argTypes, resultTypes;
  for (unsigned i : paramIdx)
    argTypes.push_back(forwardFn.getArgumentTypes()[i]);
  for (unsigned i : paramIdx)
    argTypes.push_back(forwardFn.getArgumentTypes()[i]);
  for (unsigned i : inputIdx)
    argTypes.push_back(forwardFn.getArgumentTypes()[i]);
  // Hyperparameters and the loss have the model's float type.
  Type scalar = logitsType.getElementType();
  argTypes.push_back(getLabelType(lossKind, logitsType));
  argTypes.append({scalar, scalar, scalar});
  resultTypes.append(argTypes.begin(), argTypes.begin() + 2 * paramIdx.size());
  // Results after the logits: state, and terms added to the loss.
  SmallVector<unsigned> stateIdx, lossTermIdx;
  for (unsigned i = 1, e = forwardFn.getNumResults(); i < e; ++i)
    (forwardFn.getResultAttr(i, kLossTermAttrName) ? lossTermIdx : stateIdx)
        .push_back(i);
  for (unsigned i : stateIdx)
    resultTypes.push_back(forwardFn.getResultTypes()[i]);
  resultTypes.push_back(scalar);

  OpBuilder moduleBuilder(forwardFn);
  moduleBuilder.setInsertionPointAfter(forwardFn);
  auto step =
      func::FuncOp::create(moduleBuilder, loc, trainEntry,
                           FunctionType::get(ctx, argTypes, resultTypes));
  Block *entry = step.addEntryBlock();
  unsigned numParams = paramIdx.size();
  // Parameters keep their attributes (qtrain.param, and qtrain.init where
  // they were lifted from exported constants).
  for (unsigned k = 0; k < numParams; ++k)
    step.setArgAttrs(k, forwardFn.getArgAttrDict(paramIdx[k]));
  // Inputs keep their attributes (qtrain.control marks the precisions, seed
  // and step the runtime passes).
  for (auto [k, i] : llvm::enumerate(inputIdx))
    if (DictionaryAttr attrs = forwardFn.getArgAttrDict(i))
      step.setArgAttrs(2 * numParams + k, attrs);

  // Forward ops.
  IRMapping mapping;
  for (unsigned k = 0; k < numParams; ++k)
    mapping.map(forwardFn.getArgument(paramIdx[k]), entry->getArgument(k));
  for (unsigned k = 0; k < inputIdx.size(); ++k)
    mapping.map(forwardFn.getArgument(inputIdx[k]),
                entry->getArgument(2 * numParams + k));
  OpBuilder b = OpBuilder::atBlockEnd(entry);
  SmallVector<Operation *> forwardOps;
  for (Operation &op : body.without_terminator()) {
    Operation *clone = b.clone(op, mapping);
    setRole(clone, Role::Activation);
    forwardOps.push_back(clone);
  }
  Value stepLogits = mapping.lookup(logits);

  unsigned labelsArg = 2 * numParams + inputIdx.size();
  Value labels = entry->getArgument(labelsArg);
  Value lr = entry->getArgument(labelsArg + 1);
  Value momentum = entry->getArgument(labelsArg + 2);
  Value weightDecay = entry->getArgument(labelsArg + 3);

  // Loss and backward pass.
  Operation *beforeBackward = entry->empty() ? nullptr : &entry->back();
  LossValues lossValues = buildLoss(b, loc, lossKind, stepLogits, labels);
  SmallVector<Value> params(entry->getArguments().take_front(numParams));
  ReverseMode rm(b, *entry, params);
  // Dynamic loss scaling (a {qtrain.state = "loss_scale"} input): the
  // backward pass runs on S * dL, and the parameter gradients are divided
  // by S before the update. S is a power of two, so both are exact unless
  // they overflow, which the runtime detects.
  Value lossScale;
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i)
    if (auto kind = step.getArgAttrOfType<StringAttr>(i, kStateAttrName);
        kind && kind.getValue() == "loss_scale") {
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      lossScale =
          tensor::ExtractOp::create(b, loc, entry->getArgument(i), zero);
    }
  Value dLogits = lossValues.dLogits;
  if (lossScale)
    dLogits = scaleTensor(b, loc, dLogits, lossScale, /*divide=*/false);
  rm.accumulate(stepLogits, dLogits);
  // Loss terms (LDP's cost): added to the loss, each with adjoint 1 (S).
  Value loss = lossValues.loss;
  for (unsigned i : lossTermIdx) {
    Value term = mapping.lookup(returnOp.getOperand(i));
    auto termType = cast<RankedTensorType>(term.getType());
    Value value = tensor::ExtractOp::create(b, loc, term, ValueRange{});
    loss = arith::AddFOp::create(b, loc, loss, value);
    Value seed =
        lossScale
            ? lossScale
            : arith::ConstantOp::create(b, loc, b.getFloatAttr(scalar, 1.0))
                  .getResult();
    rm.accumulate(term, tensor::FromElementsOp::create(b, loc, termType, seed));
  }
  if (failed(rm.run(forwardOps)))
    return failure();
  for (Operation *op = beforeBackward ? beforeBackward->getNextNode()
                                      : &entry->front();
       op; op = op->getNextNode())
    setRole(op, Role::Error);

  // Update.
  SmallVector<Value> results(2 * numParams);
  for (unsigned k = 0; k < numParams; ++k) {
    Value param = params[k];
    Value grad = rm.getAdjoint(param);
    if (!grad) {
      remark::analysis(forwardFn.getLoc(),
                       remark::RemarkOpts::name("zero-gradient")
                           .category(getArgument())
                           .function(forwardFn.getSymName()))
          << ("parameter #" + Twine(paramIdx[k]) +
              " does not affect the loss; its gradient is zero")
                 .str();
      grad = rm.zeros(loc, cast<RankedTensorType>(param.getType()));
    }
    if (lossScale)
      grad = scaleTensor(b, loc, grad, lossScale, /*divide=*/true);
    if (Operation *def = grad.getDefiningOp())
      setRole(def, Role::WeightGrad);
    // A learnable precision (LDP) takes no weight decay: decay would pull
    // every layer to its minimum bits.
    Value decay = weightDecay;
    if (step.getArgAttr(k, kPrecisionAttrName))
      decay = arith::ConstantOp::create(b, loc, b.getFloatAttr(scalar, 0.0));
    SgdValues updated =
        buildSgdUpdate(b, loc, param, grad, entry->getArgument(numParams + k),
                       lr, momentum, decay);
    results[k] = updated.param;
    results[numParams + k] = updated.momentum;
  }
  for (auto [k, i] : llvm::enumerate(stateIdx)) {
    results.push_back(mapping.lookup(returnOp.getOperand(i)));
    step.setResultAttrs(2 * numParams + k, forwardFn.getResultAttrDict(i));
  }
  results.push_back(loss);
  func::ReturnOp::create(b, loc, results);
  numDifferentiated += forwardOps.size();
  return success();
}

/// Turns the forward function into the evaluation step: activations are
/// quantized with their running ranges instead of the batch's, batch norm
/// uses its running statistics, and the state is input only (evaluation
/// does not update it).
static void useRunningRanges(func::FuncOp fn) {
  SmallVector<RangeEmaOp> emas(fn.getOps<RangeEmaOp>());
  for (RangeEmaOp ema : emas) {
    OpBuilder b(ema);
    b.setInsertionPointAfterValue(ema.getState());
    Location loc = ema.getLoc();
    auto at = [&](int64_t i) {
      Value index = arith::ConstantIndexOp::create(b, loc, i);
      return tensor::ExtractOp::create(b, loc, ema.getState(), index);
    };
    // The state is [min, range]: the quantizer takes the width as it is
    // (min + range - min would round).
    Value mn = at(0), width = at(1);
    for (Operation *user : ema.getInput().getUsers()) {
      auto quant = dyn_cast<FakeQuantOp>(user);
      if (!quant || quant.getMin() || quant.getGranularity().isPerChannel())
        continue;
      quant.getMinMutable().assign(mn);
      quant.getMaxMutable().assign(width);
      quant.setWidth(true);
    }
  }
  auto returnOp = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  unsigned numStates = fn.getNumResults() - 1;
  returnOp.getOperandsMutable().erase(1, numStates);
  llvm::BitVector drop(fn.getNumResults());
  drop.set(1, fn.getNumResults());
  (void)fn.eraseResults(drop);
  // Evaluation has no dropout.
  SmallVector<DropoutOp> dropouts(fn.getOps<DropoutOp>());
  for (DropoutOp dropout : dropouts) {
    dropout.getResult().replaceAllUsesWith(dropout.getInput());
    dropout.erase();
  }
  // Batch norm evaluates with its running statistics.
  SmallVector<RunningStatOp> stats(fn.getOps<RunningStatOp>());
  for (RunningStatOp stat : stats) {
    stat.getStat().replaceAllUsesWith(stat.getRunning());
    stat.getUpdated().replaceAllUsesWith(stat.getRunning());
    stat.erase();
  }
  // Evaluation does not update the running ranges: whatever else read the
  // updated range (a rounding of it, found by fuzz/ir) reads the state as
  // it came in.
  for (RangeEmaOp ema : emas) {
    ema.getResult().replaceAllUsesWith(ema.getState());
    ema.erase();
  }
}

/// Checks that `fn` has the shape of a forward graph; emits an error if not.
static LogicalResult verifyForward(func::FuncOp fn, LossKind lossKind) {
  if (fn.isExternal() || !fn.getBody().hasOneBlock())
    return fn.emitError("qtrain-autodiff: @")
           << fn.getSymName() << " must have a body of one block";
  if (fn.getNumResults() < 1)
    return fn.emitError("qtrain-autodiff: @")
           << fn.getSymName() << " must return the logits";
  for (unsigned i = 1, e = fn.getNumResults(); i < e; ++i) {
    if (fn.getResultAttr(i, kLossTermAttrName)) {
      auto type = dyn_cast<RankedTensorType>(fn.getResultTypes()[i]);
      if (!type || type.getRank() != 0 ||
          type.getElementType() !=
              cast<ShapedType>(fn.getResultTypes()[0]).getElementType())
        return fn.emitError("qtrain-autodiff: loss term #")
               << i << " of @" << fn.getSymName()
               << " must be a 0-d tensor of the logits' element type, got "
               << fn.getResultTypes()[i];
      continue;
    }
    if (!fn.getResultAttr(i, kStateAttrName))
      return fn.emitError("qtrain-autodiff: @")
             << fn.getSymName()
             << " must return the logits, then only state marked "
                "{qtrain.state} or loss terms marked {qtrain.loss_term}; "
                "result #"
             << i << " is not";
  }
  auto logits = dyn_cast<RankedTensorType>(fn.getResultTypes()[0]);
  if (!logits || logits.getRank() != 2 || !logits.hasStaticShape() ||
      !(logits.getElementType().isF32() || logits.getElementType().isF64()))
    return fn.emitError("qtrain-autodiff: the logits of @")
           << fn.getSymName()
           << " must be a static batch x classes f32 (or f64) tensor, got "
           << fn.getResultTypes()[0];
  Type floatType = logits.getElementType();
  bool anyParam = false, sawInput = false;
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
    bool isParam = bool(fn.getArgAttr(i, kParamAttrName));
    // @eval_step keeps @forward's argument order, and the step ABI passes
    // parameters first.
    if (isParam && sawInput)
      return fn.emitError("qtrain-autodiff: parameter #")
             << i << " of @" << fn.getSymName()
             << " follows an input; parameters must come first";
    sawInput |= !isParam;
    anyParam |= isParam;
    auto type = dyn_cast<RankedTensorType>(fn.getArgumentTypes()[i]);
    if (isParam &&
        (!type || !type.hasStaticShape() || type.getElementType() != floatType))
      return fn.emitError("qtrain-autodiff: parameter #")
             << i << " of @" << fn.getSymName() << " must be a static "
             << floatType << " tensor like the logits, got "
             << fn.getArgumentTypes()[i];
    // Nothing to train, and no bundle holds a tensor with a zero dimension
    // (qtrain-run refuses the manifest): say so here, at the argument.
    if (isParam && type.getNumElements() == 0)
      return emitError(fn.getArgument(i).getLoc(),
                       "qtrain-autodiff: parameter #")
             << i << " of @" << fn.getSymName() << ", " << type
             << ", has no elements; parameters need every dimension above 0";
  }
  if (!anyParam)
    return fn.emitError("qtrain-autodiff: @")
           << fn.getSymName()
           << " has no parameters; mark them with {qtrain.param}";
  (void)lossKind;
  return success();
}

void AutodiffPass::runOnOperation() {
  ModuleOp module = getOperation();
  std::optional<LossKind> lossKind =
      llvm::StringSwitch<std::optional<LossKind>>(loss)
          .Case("cross-entropy", LossKind::SoftmaxCrossEntropy)
          .Case("mse", LossKind::MeanSquaredError)
          .Default(std::nullopt);
  if (!lossKind) {
    module.emitError("qtrain-autodiff: unknown loss '")
        << loss << "' (expected cross-entropy or mse)";
    return signalPassFailure();
  }
  auto forwardFn = module.lookupSymbol<func::FuncOp>(forward);
  if (!forwardFn) {
    module.emitError("qtrain-autodiff: no function @")
        << forward << " in the module (set forward=<name>)";
    return signalPassFailure();
  }
  for (StringRef name : {StringRef(trainEntry), StringRef(evalEntry)})
    if (name != forward && module.lookupSymbol(name)) {
      module.emitError("qtrain-autodiff: the module already has a symbol @")
          << name;
      return signalPassFailure();
    }
  if (failed(verifyForward(forwardFn, *lossKind)) ||
      failed(buildTrainStep(forwardFn, *lossKind)))
    return signalPassFailure();
  forwardFn.setSymName(evalEntry);
  useRunningRanges(forwardFn);
  // grad_quant and grad_round_float only act in reverse mode, which now
  // exists: they are the identity everywhere else.
  module.walk([](Operation *op) {
    if (isa<GradQuantOp, GradRoundFloatOp>(op)) {
      op->replaceAllUsesWith(ValueRange{op->getOperand(0)});
      op->erase();
    }
  });
}
