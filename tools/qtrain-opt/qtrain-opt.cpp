//===- qtrain-opt.cpp - qtrain's mlir-opt driver ----------------*- C++ -*-===//
//
// Parses, verifies and transforms MLIR with the qtrain dialect and passes,
// with every standard mlir-opt flag.
//
//===----------------------------------------------------------------------===//

#include "qtrain/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/thread.h"

#include <optional>

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::qtrain::registerAllDialects(registry);
  mlir::qtrain::registerAllPasses();
  // MLIR's parser, verifier, passes and printer recurse once or more per
  // level of nesting: 5,000 nested regions overflowed the 8 MiB main stack.
  // MlirOptMain runs on a thread with 512 MiB (qtrain-compile's stack; it
  // also bounds the nesting, this developer tool does not).
  int status = 1;
  llvm::thread worker(std::optional<unsigned>(512u << 20), [&] {
    status = mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, "qtrain optimizer driver\n", registry));
  });
  worker.join();
  return status;
}
