//===- TosaToLinalg.h - TOSA input as linalg on tensors ---------*- C++ -*-===//
//
// The qtrain-tosa-to-linalg pipeline: upstream's TOSA lowerings, arranged
// so that the rest of qtrain reads their output (docs/passes/import.md).
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_FRONTEND_TOSATOLINALG_H
#define QTRAIN_FRONTEND_TOSATOLINALG_H

#include "mlir/IR/BuiltinOps.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::qtrain {

/// Adds the lowering of every func.func of a module from TOSA to linalg on
/// tensors, arith and tensor to `pm` (a module pass manager).
void buildTosaToLinalgPipeline(OpPassManager &pm);

/// Registers buildTosaToLinalgPipeline as qtrain-tosa-to-linalg.
void registerTosaToLinalgPipeline();

/// Whether `module` has an op of the TOSA dialect (qtrain-compile then runs
/// the pipeline first).
bool hasTosaOps(ModuleOp module);

} // namespace mlir::qtrain

#endif // QTRAIN_FRONTEND_TOSATOLINALG_H
