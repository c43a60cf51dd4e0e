//===- BufferAliasing.h - Which buffers may be the same memory --*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The conservative aliasing facts the buffer-level passes rely on
/// (qtrain-microkernels folding a transpose, qtrain-promote-accumulators
/// keeping a sum in a register, on the CPU and in the CUDA step's
/// kernels): a view is the buffer it views; distinct allocations (any op
/// that allocates its result: memref.alloc, memref.alloca, gpu.alloc) never
/// overlap, nor an allocation and a function argument; two function
/// arguments may.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_ANALYSIS_BUFFERALIASING_H
#define QTRAIN_ANALYSIS_BUFFERALIASING_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::qtrain {

/// The buffer `v` is a view of.
inline Value rootOf(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

/// Whether `v` is an argument of a function (an entry-block argument of a
/// FunctionOpInterface op): memory the caller owns, which no allocation
/// inside the function can be. Other block arguments (loop-carried values)
/// may be anything.
inline bool isFunctionArgument(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg)
    return false;
  Block *block = arg.getOwner();
  return block->isEntryBlock() &&
         isa_and_nonnull<FunctionOpInterface>(block->getParentOp());
}

/// Whether two buffer roots may be the same memory.
inline bool mayAlias(Value a, Value b) {
  if (a == b)
    return true;
  // Memory an op allocates as its result (memref.alloc, memref.alloca,
  // gpu.alloc on the CUDA step's device).
  auto fresh = [](Value v) {
    Operation *def = v.getDefiningOp();
    return def && hasEffect<MemoryEffects::Allocate>(def, v);
  };
  if (fresh(a) && (fresh(b) || isFunctionArgument(b)))
    return false;
  return !(fresh(b) && isFunctionArgument(a));
}

} // namespace mlir::qtrain

#endif // QTRAIN_ANALYSIS_BUFFERALIASING_H
