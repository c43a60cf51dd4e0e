//===- InsertRounding.cpp - Materialize assigned float formats --*- C++ -*-===//
//
// qtrain-insert-rounding: turns the qtrain.formats that
// qtrain-assign-precision wrote into qtrain.round_float (forward tensors P
// and Y) and qtrain.grad_round_float (their gradients GP and GY) on the
// forward graph, for qtrain-autodiff to differentiate.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Transforms/Passes.h"

#include "QTrain/QTrainAttrs.h"
#include "QTrain/QTrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_INSERTROUNDINGPASS
#include "qtrain/Transforms/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {
struct InsertRoundingPass
    : mlir::qtrain::impl::InsertRoundingPassBase<InsertRoundingPass> {
  using InsertRoundingPassBase::InsertRoundingPassBase;
  void runOnOperation() override;
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
static void roundUses(OpBuilder &b, Location loc, Value value,
                      FloatFormatAttr forward, FloatFormatAttr grad,
                      bool parameter) {
  MLIRContext *ctx = b.getContext();
  Role role = parameter ? Role::Weight : Role::Activation;
  Role gradRole = parameter ? Role::WeightGrad : Role::Error;
  Value rounded;
  Operation *first;
  if (parameter) {
    auto g = GradRoundFloatOp::create(b, loc, value, grad,
                                      RoleAttr::get(ctx, gradRole));
    first = g;
    rounded =
        RoundFloatOp::create(b, loc, g, forward, RoleAttr::get(ctx, role));
  } else {
    auto r =
        RoundFloatOp::create(b, loc, value, forward, RoleAttr::get(ctx, role));
    first = r;
    rounded =
        GradRoundFloatOp::create(b, loc, r, grad, RoleAttr::get(ctx, gradRole));
  }
  value.replaceAllUsesExcept(rounded, first);
}

void InsertRoundingPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto fn = module.lookupSymbol<func::FuncOp>(forward);
  if (!fn || fn.isExternal()) {
    module.emitError("qtrain-insert-rounding: no function @") << forward;
    return signalPassFailure();
  }
  OpBuilder b(&getContext());
  Block &body = fn.getBody().front();
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
    b.setInsertionPointToStart(&body);
    roundUses(b, arg.getLoc(), arg, formats->first, formats->second, parameter);
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
    roundUses(b, op.getLoc(), op.getResult(0), formats->first, formats->second,
              /*parameter=*/false);
    op.removeAttr(kFormatsAttrName);
    op.removeAttr(kGroupAttrName);
  }
  if (!lossScale)
    return;
  // The loss scale: a state tensor the step returns unchanged.
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
    if (auto kind = fn.getArgAttrOfType<StringAttr>(i, kStateAttrName);
        kind && kind.getValue() == "loss_scale") {
      fn.emitError("qtrain-insert-rounding: @")
          << forward << " has a loss scale already";
      return signalPassFailure();
    }
  MLIRContext *ctx = &getContext();
  auto type = RankedTensorType::get({1}, Float32Type::get(ctx));
  auto attrs = DictionaryAttr::get(
      ctx, {NamedAttribute(StringAttr::get(ctx, kStateAttrName),
                           StringAttr::get(ctx, "loss_scale"))});
  unsigned index = fn.getNumArguments();
  (void)fn.insertArgument(index, type, attrs, fn.getLoc());
  (void)fn.insertResult(fn.getNumResults(), type, attrs);
  auto returnOp = cast<func::ReturnOp>(body.getTerminator());
  returnOp.getOperandsMutable().append(fn.getArgument(index));
}
