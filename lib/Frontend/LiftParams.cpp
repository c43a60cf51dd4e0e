//===- LiftParams.cpp - Turn inlined weights into parameters ----*- C++ -*-===//
//
// qtrain-lift-params: the weights an exporter inlined into @forward as
// constants become arguments marked {qtrain.param}, with their exported
// values kept as qtrain.init.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Frontend/Passes.h"

#include "QTrain/QTrainAttrs.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Remarks.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_LIFTPARAMSPASS
#include "qtrain/Frontend/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;
using namespace mlir::qtrain;

namespace {

struct LiftParamsPass : mlir::qtrain::impl::LiftParamsPassBase<LiftParamsPass> {
  using LiftParamsPassBase::LiftParamsPassBase;
  void runOnOperation() override;
};

/// What to do with a tensor constant.
enum class ConstantKind {
  /// A scalar, a splat (fill or padding value) or a small constant: stays.
  Keep,
  /// A weight: becomes a parameter.
  Lift,
  /// Looks like a weight but is not a float tensor: an error.
  NotFloat,
};

} // namespace

/// Classifies `cst`; `minElements` is the pass option.
static ConstantKind classify(arith::ConstantOp cst, unsigned minElements) {
  auto type = dyn_cast<RankedTensorType>(cst.getType());
  auto value = dyn_cast<ElementsAttr>(cst.getValue());
  if (!type || !value ||
      type.getNumElements() < static_cast<int64_t>(minElements))
    return ConstantKind::Keep;
  // dense_resource blobs are never splats: exporters write every
  // parameter and buffer as one, whatever its values.
  if (auto dense = dyn_cast<DenseElementsAttr>(value); dense && dense.isSplat())
    return ConstantKind::Keep;
  if (!isa<FloatType>(type.getElementType()))
    return ConstantKind::NotFloat;
  return ConstantKind::Lift;
}

/// A short description of the constant's value for remarks: the resource
/// key of a blob and the type, not the values.
static std::string describe(arith::ConstantOp cst) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto blob = dyn_cast<DenseResourceElementsAttr>(cst.getValue()))
    os << "dense_resource<" << blob.getRawHandle().getKey() << "> : ";
  os << cst.getType();
  return text;
}

/// Functions `fn` calls, directly or not, other than itself.
static SmallVector<func::FuncOp> getCallees(func::FuncOp fn,
                                            SymbolTable &symbols) {
  llvm::SetVector<func::FuncOp> callees;
  SmallVector<func::FuncOp> worklist{fn};
  while (!worklist.empty()) {
    func::FuncOp caller = worklist.pop_back_val();
    caller.walk([&](CallOpInterface call) {
      auto ref = dyn_cast<SymbolRefAttr>(call.getCallableForCallee());
      auto callee =
          ref ? symbols.lookup<func::FuncOp>(ref.getRootReference()) : nullptr;
      if (callee && callee != fn && callees.insert(callee))
        worklist.push_back(callee);
    });
  }
  return callees.takeVector();
}

void LiftParamsPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  SymbolTable symbols(module);
  auto fn = symbols.lookup<func::FuncOp>(forward);
  if (!fn || fn.isExternal()) {
    module.emitError("qtrain-lift-params: no function @")
        << forward << " with a body in the module (set forward=<name>)";
    return signalPassFailure();
  }

  // Weights in a function @forward calls would need that function's
  // signature changed too.
  for (func::FuncOp callee : getCallees(fn, symbols)) {
    WalkResult walk = callee.walk([&](arith::ConstantOp cst) {
      if (classify(cst, minElements) == ConstantKind::Keep)
        return WalkResult::advance();
      cst.emitError("qtrain-lift-params: this constant of @")
          << callee.getSymName() << ", which @" << forward
          << " calls, would need lifting; only constants of @" << forward
          << " become parameters (inline the call first)";
      return WalkResult::interrupt();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
  }

  // Number the tensor constants in program order, for the remarks.
  llvm::DenseMap<Operation *, unsigned> number;
  WalkResult walk = fn.walk([&](arith::ConstantOp cst) {
    if (!isa<RankedTensorType>(cst.getType()))
      return WalkResult::advance();
    number[cst] = number.size();
    if (classify(cst, minElements) != ConstantKind::NotFloat)
      return WalkResult::advance();
    cst.emitError("qtrain-lift-params: constant #")
        << number[cst] << " of type " << cst.getType()
        << " is not a float tensor; only float constants become parameters";
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return signalPassFailure();

  // The constants to lift, in the order of their first use.
  llvm::SetVector<arith::ConstantOp> lifted;
  fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (auto cst = operand.getDefiningOp<arith::ConstantOp>())
        if (classify(cst, minElements) == ConstantKind::Lift)
          lifted.insert(cst);
  });

  // Lifted parameters go after the leading parameters: first, in an export.
  unsigned position = 0;
  while (position < fn.getNumArguments() &&
         fn.getArgAttr(position, kParamAttrName))
    ++position;
  bool hasParams =
      llvm::any_of(llvm::seq(fn.getNumArguments()), [&](unsigned i) {
        return bool(fn.getArgAttr(i, kParamAttrName));
      });
  if (lifted.empty()) {
    if (hasParams)
      return;
    fn.emitError("qtrain-lift-params: @")
        << forward
        << " has no constant to lift (a float tensor constant, not a splat, "
           "with at least "
        << static_cast<unsigned>(minElements)
        << " elements) and no {qtrain.param} argument: nothing would be "
           "trained";
    return signalPassFailure();
  }

  SmallVector<unsigned> indices(lifted.size(), position);
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
  SmallVector<Location> locs;
  for (arith::ConstantOp cst : lifted) {
    NamedAttrList list;
    list.append(kParamAttrName, UnitAttr::get(ctx));
    if (!reinit)
      list.append(kInitAttrName, cst.getValue());
    types.push_back(cst.getType());
    attrs.push_back(list.getDictionary(ctx));
    locs.push_back(cst.getLoc());
  }
  LogicalResult inserted = fn.insertArguments(indices, types, attrs, locs);
  assert(succeeded(inserted) && "func.func takes arguments of any type");
  (void)inserted;
  for (auto [k, constant] : llvm::enumerate(lifted)) {
    arith::ConstantOp cst = constant;
    unsigned argIndex = position + k;
    remark::passed(cst.getLoc(), remark::RemarkOpts::name("lifted")
                                     .category(getArgument())
                                     .function(fn.getSymName()))
        << ("lifted constant #" + Twine(number[cst]) + " (" + describe(cst) +
            ") into parameter %arg" + Twine(argIndex))
               .str();
    cst.replaceAllUsesWith(fn.getArgument(argIndex));
    cst.erase();
    ++numLifted;
  }
}
