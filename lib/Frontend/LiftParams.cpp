//===- LiftParams.cpp - Turn inlined weights into parameters ----*- C++ -*-===//
//
// qtrain-lift-params: the weights an exporter inlined into @forward as
// constants become arguments marked {qtrain.param}, with their exported
// values kept as qtrain.init, or PyTorch's default initialization
// (qtrain.fresh_init) where the export has no values.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Analysis/FreshInit.h"
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
  /// A scalar, an integer or index tensor, a splat that is no weight (fill
  /// or padding value) or a small constant: stays.
  Keep,
  /// A weight with values: becomes a parameter that starts from them.
  Lift,
  /// A weight without values (an elided blob, or a splat standing in a
  /// weight position): becomes a freshly initialized parameter.
  Fresh,
};

} // namespace

/// Classifies `cst`; `minElements` is the pass option.
static ConstantKind classify(arith::ConstantOp cst, unsigned minElements) {
  auto type = dyn_cast<RankedTensorType>(cst.getType());
  auto value = dyn_cast<ElementsAttr>(cst.getValue());
  // Integer, index and i1 tensors are position ids, index tables and
  // masks, never weights.
  if (!type || !value || !isa<FloatType>(type.getElementType()) ||
      type.getNumElements() < static_cast<int64_t>(minElements))
    return ConstantKind::Keep;
  // dense_resource blobs are never splats: exporters write every
  // parameter and buffer as one, whatever its values. One whose data is
  // missing (`dense_resource<__elided__>`) has no values to start from.
  if (auto blob = dyn_cast<DenseResourceElementsAttr>(value))
    return blob.getRawHandle().getBlob() ? ConstantKind::Lift
                                         : ConstantKind::Fresh;
  // A splat is a fill or padding value unless it stands where a layer
  // reads its weight, bias, scale or shift (a placeholder for the weight).
  if (auto dense = dyn_cast<DenseElementsAttr>(value); dense && dense.isSplat())
    return inferFreshInit(cst.getResult()).fromUse ? ConstantKind::Fresh
                                                   : ConstantKind::Keep;
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

/// Why `cst` gets a fresh initialization rather than its values.
static StringRef whyFresh(arith::ConstantOp cst, bool reinit) {
  if (auto blob = dyn_cast<DenseResourceElementsAttr>(cst.getValue());
      blob && !blob.getRawHandle().getBlob())
    return "the export elided its values";
  if (auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
      dense && dense.isSplat())
    return "a splat in a weight position";
  assert(reinit && "only reinit re-initializes a weight with values");
  (void)reinit;
  return "reinit";
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
  fn.walk([&](arith::ConstantOp cst) {
    if (isa<RankedTensorType>(cst.getType()))
      number[cst] = number.size();
  });

  // The constants to lift, in the order of their first use, and whether
  // each starts from its own values.
  llvm::SetVector<arith::ConstantOp> lifted;
  llvm::DenseMap<Operation *, bool> fresh;
  fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
    for (Value operand : op->getOperands()) {
      auto cst = operand.getDefiningOp<arith::ConstantOp>();
      if (!cst || lifted.contains(cst))
        continue;
      ConstantKind kind = classify(cst, minElements);
      if (kind == ConstantKind::Keep)
        continue;
      lifted.insert(cst);
      fresh[cst] = reinit || kind == ConstantKind::Fresh;
    }
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
  // reinit: the parameters already present start afresh too.
  for (unsigned i = 0, e = fn.getNumArguments(); reinit && i < e; ++i) {
    if (!fn.getArgAttr(i, kParamAttrName) || !fn.getArgAttr(i, kInitAttrName))
      continue;
    FreshInit init = inferFreshInit(fn.getArgument(i));
    fn.removeArgAttr(i, kInitAttrName);
    fn.setArgAttr(i, kFreshInitAttrName, getFreshInitAttr(ctx, init));
    remark::passed(fn.getArgument(i).getLoc(),
                   remark::RemarkOpts::name("reinit")
                       .category(getArgument())
                       .function(fn.getSymName()))
        << "parameter %arg" + std::to_string(i) + " initialized " +
               stringifyFreshInitKind(init.kind).str() +
               " instead of its qtrain.init (reinit): " + init.reason;
  }
  if (lifted.empty()) {
    if (hasParams)
      return;
    fn.emitError("qtrain-lift-params: @")
        << forward
        << " has no constant to lift (a float tensor constant with at least "
        << static_cast<unsigned>(minElements)
        << " elements, not a fill or padding splat) and no {qtrain.param} "
           "argument: nothing would be trained";
    return signalPassFailure();
  }

  SmallVector<unsigned> indices(lifted.size(), position);
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
  SmallVector<Location> locs;
  SmallVector<FreshInit> inits;
  for (arith::ConstantOp cst : lifted) {
    NamedAttrList list;
    list.append(kParamAttrName, UnitAttr::get(ctx));
    if (fresh[cst]) {
      // Chosen while the constant still has the uses of the export.
      inits.push_back(inferFreshInit(cst.getResult()));
      list.append(kFreshInitAttrName, getFreshInitAttr(ctx, inits.back()));
    } else {
      list.append(kInitAttrName, cst.getValue());
    }
    types.push_back(cst.getType());
    attrs.push_back(list.getDictionary(ctx));
    locs.push_back(cst.getLoc());
  }
  LogicalResult inserted = fn.insertArguments(indices, types, attrs, locs);
  assert(succeeded(inserted) && "func.func takes arguments of any type");
  (void)inserted;
  const FreshInit *init = inits.begin();
  for (auto [k, constant] : llvm::enumerate(lifted)) {
    arith::ConstantOp cst = constant;
    unsigned argIndex = position + k;
    std::string text =
        ("lifted constant #" + Twine(number[cst]) + " (" + describe(cst) +
         ") into parameter %arg" + Twine(argIndex))
            .str();
    if (fresh[cst]) {
      text += ", initialized " + stringifyFreshInitKind(init->kind).str() +
              " (" + whyFresh(cst, reinit).str() + "): " + init->reason;
      ++init;
    }
    remark::passed(cst.getLoc(), remark::RemarkOpts::name("lifted")
                                     .category(getArgument())
                                     .function(fn.getSymName()))
        << text;
    cst.replaceAllUsesWith(fn.getArgument(argIndex));
    cst.erase();
    ++numLifted;
  }
}
