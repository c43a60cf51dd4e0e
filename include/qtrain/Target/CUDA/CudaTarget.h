//===- CudaTarget.h - The CUDA target of a bundle ---------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The compiler side of a bundle's CUDA target (docs/cuda.md): the
/// gpu.module qtrain-cuda-gemm-kernels added to the materialized training
/// module is moved into a module of its own, lowered by qtrain-lower-cuda
/// to PTX and assembled by the toolkit's ptxas into a cubin for the chip;
/// the manifest's "cuda" target and each site's kernels are read from its
/// attributes.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_TARGET_CUDA_CUDATARGET_H
#define QTRAIN_TARGET_CUDA_CUDATARGET_H

#include "qtrain/runtime/Manifest.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::qtrain {

struct CudaTargetOptions {
  /// "cubin" (ptxas assembles the PTX) or "ptx" (the driver JIT-compiles
  /// it when the bundle is loaded).
  std::string format = "cubin";
  /// The CUDA toolkit whose bin/ptxas assembles cubins.
  std::string cudaPath = "/usr/local/cuda";
  /// Extra ptxas options, e.g. "-O3".
  std::string ptxasOptions = "-O3";
};

struct CudaTarget {
  /// The manifest's "cuda" (module path cuda/CHIP.FORMAT, its SHA-256 and
  /// the kernels).
  ::qtrain::rt::CudaTargetSpec spec;
  /// What each site's products got, by site index (SiteSpec::cudaKernels).
  std::vector<std::map<std::string, std::map<std::string, std::string>>> sites;
  /// The module file's bytes and the PTX it was assembled from.
  std::string module, ptx;
};

/// Moves the gpu.module @qtrain_cuda out of `step` (which keeps no GPU
/// code and loses gpu.container_module), lowers and serializes it. Fails
/// with an error at the module when there is none, ptxas is missing or
/// rejects the PTX.
FailureOr<CudaTarget> buildCudaTarget(ModuleOp step, size_t numSites,
                                      const CudaTargetOptions &options);

} // namespace mlir::qtrain

#endif // QTRAIN_TARGET_CUDA_CUDATARGET_H
