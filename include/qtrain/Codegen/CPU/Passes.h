//===- Passes.h - qtrain CPU codegen ----------------------------*- C++ -*-===//
//
// Declarations of the qtrain CPU codegen passes (generated from Passes.td in
// this folder; docs/pipeline.md places them in the pipeline).
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_CODEGEN_CPU_PASSES_H
#define QTRAIN_CODEGEN_CPU_PASSES_H

#include "QTrain/QTrainDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
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
#include "qtrain/Codegen/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "qtrain/Codegen/CPU/Passes.h.inc"

} // namespace mlir::qtrain

#endif // QTRAIN_CODEGEN_CPU_PASSES_H
