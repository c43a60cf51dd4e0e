//===- Passes.h - qtrain transforms -----------------------------*- C++ -*-===//
//
// Declarations of the qtrain transforms (generated from Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_TRANSFORMS_PASSES_H
#define QTRAIN_TRANSFORMS_PASSES_H

#include "QTrain/QTrainDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::qtrain {

#define GEN_PASS_DECL
#include "qtrain/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "qtrain/Transforms/Passes.h.inc"

} // namespace mlir::qtrain

#endif // QTRAIN_TRANSFORMS_PASSES_H
