//===- DropAnnotations.cpp - Remove qtrain annotations ----------*- C++ -*-===//
//
// qtrain-drop-annotations: strips qtrain.* discardable attributes from ops,
// arguments and results before the CPU lowering.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CPU/Passes.h"

#include "QTrain/QTrainDialect.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::qtrain {
#define GEN_PASS_DEF_DROPANNOTATIONSPASS
#include "qtrain/Codegen/CPU/Passes.h.inc"
} // namespace mlir::qtrain

using namespace mlir;

namespace {

bool isQTrain(NamedAttribute attr) {
  return attr.getName().getValue().starts_with("qtrain.");
}

/// Kept for the lowering: qtrain-microkernels and qtrain-gpu-gemms consume
/// them.
bool isLoweringHint(NamedAttribute attr) {
  using Dialect = mlir::qtrain::QTrainDialect;
  return attr.getName() == Dialect::CodeBitsAttrHelper::getNameStr() ||
         attr.getName() == Dialect::Bf16OperandsAttrHelper::getNameStr() ||
         attr.getName() == Dialect::FloatOperandsAttrHelper::getNameStr();
}

struct DropAnnotationsPass
    : mlir::qtrain::impl::DropAnnotationsPassBase<DropAnnotationsPass> {
  void runOnOperation() override {
    getOperation()->walk([](Operation *op) {
      for (NamedAttribute attr : llvm::to_vector(op->getDiscardableAttrs()))
        if (isQTrain(attr) && !isLoweringHint(attr))
          op->removeDiscardableAttr(attr.getName());
      auto fn = dyn_cast<FunctionOpInterface>(op);
      if (!fn)
        return;
      for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
        for (NamedAttribute attr : llvm::to_vector(fn.getArgAttrs(i)))
          if (isQTrain(attr))
            fn.removeArgAttr(i, attr.getName());
      for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i)
        for (NamedAttribute attr : llvm::to_vector(fn.getResultAttrs(i)))
          if (isQTrain(attr))
            fn.removeResultAttr(i, attr.getName());
    });
  }
};

} // namespace
