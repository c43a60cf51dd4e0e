//===- Passes.h - qtrain CUDA codegen ---------------------------*- C++ -*-===//
//
// Declarations of the qtrain CUDA codegen passes (generated from Passes.td
// in this folder; docs/cuda.md places them in the pipeline).
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_CODEGEN_CUDA_PASSES_H
#define QTRAIN_CODEGEN_CUDA_PASSES_H

#include "QTrain/QTrainAttrs.h"
#include "QTrain/QTrainDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::qtrain {

/// The name of the gpu.module qtrain-cuda-gemm-kernels fills.
inline constexpr llvm::StringLiteral kCudaModuleName = "qtrain_cuda";
/// The gpu.module attribute listing each product's kernels (each kernel's
/// own description is kGemmAttrName, QTrainAttrs.h).
inline constexpr llvm::StringLiteral kCudaSitesAttrName = "qtrain.sites";

#define GEN_PASS_DECL
#include "qtrain/Codegen/CUDA/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "qtrain/Codegen/CUDA/Passes.h.inc"

} // namespace mlir::qtrain

#endif // QTRAIN_CODEGEN_CUDA_PASSES_H
