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

/// Opens the step on device 0, in this order, each failure an error:
/// the bundle has a step library; the driver loads (CudaDriver::load);
/// the device runs the bundle's chip (selectCudaDevice); the library's
/// SHA-256 is the manifest's; it loads, its constructors load every
/// kernel module (CudaHostAbi.h), and it has both packed entry points.
/// The Trainer's buffers are then managed memory; the batch, labels and
/// logits travel through managed staging buffers.
Status openCudaStepDevice(const Bundle &bundle,
                          std::shared_ptr<StepDevice> &out,
                          ErrorKind *kind = nullptr);

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_CUDASTEPDEVICE_H
