//===- qtrain-opt.cpp - qtrain's mlir-opt driver ----------------*- C++ -*-===//
//
// Parses, verifies and transforms MLIR with the qtrain dialect and passes,
// with every standard mlir-opt flag.
//
//===----------------------------------------------------------------------===//

#include "qtrain/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::qtrain::registerAllDialects(registry);
  mlir::qtrain::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "qtrain optimizer driver\n", registry));
}
