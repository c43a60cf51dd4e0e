//===- AddEmptySlots.cpp - The step ABI without kernel sites -------------===//
//
// qtrain-add-empty-slots: an empty `slots` control and an empty
// qtrain.sites for a training module that has no kernel sites, so that the
// runtime calls its steps like any other (docs/bundle.md, "The step ABI").
//
//===----------------------------------------------------------------------===//

#include "qtrain/Kernels/Passes.h"

#include "QTrain/QTrainAttrs.h"

using namespace mlir;
using namespace mlir::qtrain;

namespace mlir::qtrain {
#define GEN_PASS_DEF_ADDEMPTYSLOTSPASS
#include "qtrain/Kernels/Passes.h.inc"
} // namespace mlir::qtrain

static LogicalResult addEmptySlots(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  if (module->hasAttr(kSitesAttrName))
    return module.emitError(
        "qtrain-add-empty-slots: the module has kernel sites");
  for (StringRef name : {"train_step", "eval_step"}) {
    auto fn = module.lookupSymbol<func::FuncOp>(name);
    if (!fn || fn.isExternal())
      return module.emitError("qtrain-add-empty-slots: no function @") << name;
    // The slots go after the last control or state argument.
    unsigned index = 0;
    for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
      if (fn.getArgAttr(i, kControlAttrName) ||
          fn.getArgAttr(i, kStateAttrName))
        index = i + 1;
    if (index == 0)
      return fn.emitError("qtrain-add-empty-slots: @")
             << name << " has no control arguments";
    (void)fn.insertArgument(
        index, RankedTensorType::get({0}, IntegerType::get(ctx, 32)),
        DictionaryAttr::get(
            ctx, {NamedAttribute(StringAttr::get(ctx, kControlAttrName),
                                 StringAttr::get(ctx, "slots"))}),
        fn.getLoc());
  }
  module->setAttr(kSitesAttrName, ArrayAttr::get(ctx, {}));
  return success();
}

namespace {
struct AddEmptySlotsPass
    : mlir::qtrain::impl::AddEmptySlotsPassBase<AddEmptySlotsPass> {
  void runOnOperation() override {
    if (failed(addEmptySlots(getOperation())))
      signalPassFailure();
  }
};
} // namespace
