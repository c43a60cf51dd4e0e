//===- EmulateTensorCores.h - Tensor-core GEMM kernels on the host -*- C++
//-*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Host forms of the ops GemmKernel.h's tensor-core kernels use, so that
/// qtrain-emulate-gpu (gemms=kernel) runs a kernel's own code, fragment
/// layouts included, on the host:
///
/// - `nvvm.convert.float.to.tf32` (rna): the f32 bits rounded to 19 bits,
///   to nearest, ties away from zero;
/// - `mma.sync` m16n8kK (`nvvm.mma.sync`, or the fp8 instruction as inline
///   assembly): a warp-wide op, emulated per lane. The lane recomputes
///   what every lane of its warp holds in its A and B registers (the
///   registers are loads of read-only operands and arithmetic on the thread
///   id, the block ids and the loop counters: their slice is cloned with the
///   other lane's thread id), gathers the 16 x K and K x 8 matrices from
///   them by PTX's fragment layouts (PTX ISA, "Matrix Fragments for
///   mma.m16n8k*"; written here from the ISA, independently of the
///   kernel builder) and computes its own four elements of D = A B + C: the
///   products summed in k order onto C (f32 for the float kinds, wrapping
///   i32 for s8).
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_CODEGEN_CUDA_EMULATETENSORCORES_H
#define QTRAIN_CODEGEN_CUDA_EMULATETENSORCORES_H

#include "qtrain/Codegen/CUDA/GemmKernel.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::qtrain {

/// One element of a GEMM kernel's operand, `raw` in `encoding` (its storage
/// type: f32, i16 bf16 bits, i8 fp8 byte or code), as the value the kernel
/// multiplies: f32 (tf32 kernels: rounded to nearest, ties away from zero,
/// as cvt.rna.tf32.f32) or an i32 code.
Value decodeGemmElement(OpBuilder &b, Location loc, Value raw,
                        const GemmKernelSpec &spec, GemmEncoding encoding);

/// Replaces the tensor-core ops in `launch`, the body of a GEMM kernel of
/// `spec` inlined into a launch, by host ops (see the file comment). Fails
/// with an error at the op for a register that is not a function of the
/// thread id, read-only loads and pure ops.
LogicalResult emulateTensorCores(RewriterBase &rewriter, gpu::LaunchOp launch,
                                 const GemmKernelSpec &spec);

} // namespace mlir::qtrain

#endif // QTRAIN_CODEGEN_CUDA_EMULATETENSORCORES_H
