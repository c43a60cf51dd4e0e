//===- LayerMacs.h - Multiply-accumulates of a layer ------------*- C++ -*-===//
//
// Part of the qtrain project.
//
// One count of a layer's MACs for the passes that need it: the manifest's
// per-site MACs (qtrain-materialize-variants), from which the runtime counts
// BitOps, and LDP's cost term (qtrain-insert-quant), which must weigh the
// layers the same way.
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_ANALYSIS_LAYERMACS_H
#define QTRAIN_ANALYSIS_LAYERMACS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::qtrain {

/// The multiply-accumulates of a linalg op: the product of its static loop
/// ranges (a dynamic range counts as 1).
inline int64_t countMacs(linalg::LinalgOp op) {
  int64_t macs = 1;
  for (int64_t range : op.getStaticLoopRanges())
    macs *= ShapedType::isDynamic(range) ? 1 : range;
  return macs;
}

} // namespace mlir::qtrain

#endif // QTRAIN_ANALYSIS_LAYERMACS_H
