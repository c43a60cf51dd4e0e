//===- downstream-opt.cpp - Another project's opt tool with qtrain -------===//
//
// An mlir-opt style driver of a project that builds on an installed qtrain:
// it registers qtrain's dialects, passes and pipelines next to upstream
// MLIR's own transforms, so both run in one pipeline:
//
//   downstream-opt model.mlir --qtrain-autodiff --canonicalize
//
//===----------------------------------------------------------------------===//

#include "qtrain/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::qtrain::registerAllDialects(registry);
  mlir::qtrain::registerAllPasses();
  // The project's own passes would be registered here; upstream's generic
  // transforms stand in for them.
  mlir::registerTransformsPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "a downstream tool with qtrain's passes\n", registry));
}
