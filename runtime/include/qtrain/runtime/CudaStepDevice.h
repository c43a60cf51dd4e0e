//===- CudaStepDevice.h - A bundle's step on an NVIDIA GPU ------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The StepDevice of a bundle whose CUDA target has a step library
/// (cuda/step.so, docs/cuda.md): the whole training step on the GPU,
/// variants selected per step by the Trainer exactly as on the CPU.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_CUDASTEPDEVICE_H
#define QTRAIN_RUNTIME_CUDASTEPDEVICE_H

#include "qtrain/runtime/Bundle.h"
#include "qtrain/runtime/StepDevice.h"

#include <memory>

namespace qtrain::rt {

/// Where the step's products run (qtrain-gpu-gemms offers each to the
/// runtime before it launches its generated kernel, CudaHostAbi.h).
enum class CudaGemmLibrary {
  /// cuBLASLt where it loads and has an algorithm for the product, else the
  /// generated kernel.
  Auto,
  /// The same, but a cuBLASLt that does not load is an error.
  CublasLt,
  /// The generated kernels only.
  Generated,
};

struct CudaStepOptions {
  CudaGemmLibrary gemms = CudaGemmLibrary::Auto;
  /// cuBLASLt's workspace.
  size_t workspaceBytes = size_t(32) << 20;
  /// Run each step's launches as a CUDA graph (CudaGraphs.h), keeping at
  /// most `graphCapacity` graphs; off, or where the driver has no graphs,
  /// kernels are launched one by one.
  bool graphs = true;
  size_t graphCapacity = 64;
};

/// Opens the step on device 0, in this order, each failure an error:
/// the bundle has a step library; the driver loads (CudaDriver::load);
/// the device runs the bundle's chip (selectCudaDevice); the library's
/// SHA-256 is the manifest's; it loads, its constructors load every
/// kernel module (CudaHostAbi.h), and it has both packed entry points.
/// The Trainer's buffers are then managed memory; the batch, labels and
/// logits travel through managed staging buffers. Then cuBLASLt, as
/// `options` say; the device's describe() says which GEMMs run. Then the
/// graph recorder, as `options` say: a driver without graphs is not an
/// error, and describeWork() says why the launches were not graphed.
Status openCudaStepDevice(const Bundle &bundle,
                          std::shared_ptr<StepDevice> &out,
                          ErrorKind *kind = nullptr,
                          const CudaStepOptions &options = {});

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_CUDASTEPDEVICE_H
