//===- Pipelines.h - qtrain's named pass pipelines --------------*- C++ -*-===//
//
// The pipelines qtrain-compile runs, also registered with qtrain-opt.
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_PIPELINES_PIPELINES_H
#define QTRAIN_PIPELINES_PIPELINES_H

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::qtrain {

/// Lowers a materialized training module (tensors, linalg, qtrain
/// quantizers, scf.index_switch dispatch) to the LLVM dialect for the CPU:
/// convert-qtrain-to-linalg, qtrain-drop-annotations, one-shot bufferization
/// with identity layouts, results as out-parameters, deallocation, loops, and
/// the conversions to LLVM with bare-pointer memrefs (docs/bundle.md, "The step
/// ABI").
void buildCPULoweringPipeline(OpPassManager &pm);

/// Registers `qtrain-lower-cpu` (the pipeline above) with the pass registry.
void registerPipelines();

} // namespace mlir::qtrain

#endif // QTRAIN_PIPELINES_PIPELINES_H
