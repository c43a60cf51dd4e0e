//===- InitAll.h - Register qtrain's dialects and passes --------*- C++ -*-===//
//
// One place that lists what the qtrain tools register, so that each tool links
// only what it needs and no header grows with every pass.
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_INITALL_H
#define QTRAIN_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::qtrain {

/// Registers the dialects qtrain reads and writes: func, arith, math, tensor,
/// linalg, memref, scf, bufferization, cf, llvm and qtrain, and the
/// bufferization models the CPU lowering needs.
void registerAllDialects(DialectRegistry &registry);

/// Registers qtrain's passes and pipelines, and the upstream passes its
/// pipelines and tests use (canonicalize, cse).
void registerAllPasses();

} // namespace mlir::qtrain

#endif // QTRAIN_INITALL_H
