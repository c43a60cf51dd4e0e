//===- HostCode.h - Facts about the CUDA step's host code -------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What the passes that move host code of the bufferized CUDA step
/// (qtrain-scalars-to-device, qtrain-defer-result-reads) need to know about
/// it: which buffers are the step's own (device memory once
/// qtrain-map-step-to-gpu has run), which ops are scalar arithmetic a
/// kernel can run, and whether an op may touch a buffer.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_CODEGEN_CUDA_HOSTCODE_H
#define QTRAIN_CODEGEN_CUDA_HOSTCODE_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Operation.h"

namespace mlir::qtrain {

/// The buffer `value` views, through view-like ops: a function argument or
/// the op that made the buffer.
Value rootBuffer(Value value);

/// Whether `root` (a buffer, not a view) is memory the step made, which
/// qtrain-map-step-to-gpu places on the device: an allocation, or a
/// constant global. Arguments are not: the runtime may keep some in host
/// memory (the slots).
bool isStepBuffer(Value root);

/// Whether `op` is arithmetic a kernel can run as is: pure, without
/// regions, with scalar results.
bool isScalarArithmetic(Operation *op);

/// Whether `op`, or an op nested in it, may write or free memory that may
/// be `root`'s, or read it when `reads` is set. An op of unknown effects (a
/// call, a GEMM kernel's launch) may touch any buffer it is given.
bool mayTouch(Operation *op, Value root, bool reads);

/// The first op after `load`, up to `until` (an op after it in its block),
/// that may write or free what `load` reads, else `until`: how late the
/// read may move. Ops `moving` says move along with the read are skipped,
/// and deallocations of the read's own buffer are added to `deallocs` (they
/// must move after it).
Operation *firstWriterAfter(memref::LoadOp load, Operation *until,
                            llvm::function_ref<bool(Operation *)> moving,
                            SmallVectorImpl<Operation *> &deallocs);

} // namespace mlir::qtrain

#endif // QTRAIN_CODEGEN_CUDA_HOSTCODE_H
