//===- Passes.h - qtrain conversions ----------------------------*- C++ -*-===//
//
// Declarations of the conversions out of the qtrain dialect.
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_CONVERSION_PASSES_H
#define QTRAIN_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace mlir::qtrain {

/// The OpConversionPatterns that lower the qtrain ops of a training step to
/// linalg/arith/math/scf on tensors (convert-qtrain-to-linalg).
void populateQTrainToLinalgConversionPatterns(RewritePatternSet &patterns);

#define GEN_PASS_DECL
#include "qtrain/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "qtrain/Conversion/Passes.h.inc"

} // namespace mlir::qtrain

#endif // QTRAIN_CONVERSION_PASSES_H
