//===- Pipelines.h - qtrain's named pass pipelines --------------*- C++ -*-===//
//
// The pipelines qtrain-compile runs, also registered with qtrain-opt.
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_PIPELINES_PIPELINES_H
#define QTRAIN_PIPELINES_PIPELINES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>

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

/// The first part of buildCPULoweringPipeline: the step as buffers, each
/// allocated right before its first use and freed after its last
/// (bufferization, deallocation, qtrain-free-early). This is what
/// qtrain-compile --dump-buffers writes and stepBufferPeak measures.
void buildCPUBufferPipeline(OpPassManager &pm);

/// The peak bytes of the buffers @train_step holds at once, on a module
/// after buildCPUBufferPipeline: its memref.alloc and memref.dealloc in
/// program order, an allocation inside a loop counted once (it is freed in
/// the same iteration). This is what the step's allocator measures at run
/// time (qtrain-run's "peak memory of the step's buffers"; parameters,
/// momentum, data and the microkernels' packing space are not step buffers)
/// and what scripts/step-buffers.py prints. Fails, with an error on the op,
/// on a buffer whose size is not static and when there is no @train_step.
FailureOr<int64_t> stepBufferPeak(ModuleOp module);

/// Registers `qtrain-lower-cpu` (the pipeline above) with the pass registry.
void registerPipelines();

} // namespace mlir::qtrain

#endif // QTRAIN_PIPELINES_PIPELINES_H
