//===- Passes.td - qtrain bundle target --------------------*- tablegen -*-===//
//
// The bundle target: the last rewrites of a step lowered to the LLVM
// dialect before it becomes model.so (docs/bundle.md); the manifest and the
// object file are written by the library beside them (Bundle.h).
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_TARGET_BUNDLE_PASSES_TD
#define QTRAIN_TARGET_BUNDLE_PASSES_TD

include "mlir/Pass/PassBase.td"

def PackedEntryPointsPass : Pass<"qtrain-packed-entry-points",
                                 "::mlir::ModuleOp"> {
  let summary = "Add the packed entry points of the step ABI";
  let description = [{
    Adds `qtrain_train_step(ptr)` and `qtrain_eval_step(ptr)` to a module
    lowered to the LLVM dialect (after `qtrain-lower-cpu`): one uniform
    signature for every model, so that the runtime calls a step without
    knowing its arity. Each loads its i-th argument from the i-th pointer of
    the array (the pointer itself for a memref, the value it points to for a
    scalar), calls `@train_step` or `@eval_step`, and stores a scalar result
    through the pointer after the last argument (docs/bundle.md, "The step
    ABI").

    Fails when the module has no lowered `@train_step` or `@eval_step`.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // QTRAIN_TARGET_BUNDLE_PASSES_TD
