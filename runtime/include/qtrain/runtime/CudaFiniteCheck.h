//===- CudaFiniteCheck.h - Finiteness of device buffers, on the GPU -*- C++
//-*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// After each step the Trainer asks whether the new parameters and momentum
/// are finite (a scaled gradient that overflowed skips the step). On a GPU
/// its buffers are managed memory: scanning them on the host moves every
/// page to the host and back each step. CudaFiniteCheck answers on the
/// device instead: the runtime's own kernel (lib/Cuda/FiniteCheck.ptx,
/// embedded and JIT-compiled by the driver) sets a 4-byte flag when an
/// element is inf or NaN, and the host reads only the flag.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_CUDAFINITECHECK_H
#define QTRAIN_RUNTIME_CUDAFINITECHECK_H

#include "qtrain/runtime/CudaDriver.h"

#include <memory>

namespace qtrain::rt {

class CudaFiniteCheck {
public:
  /// Loads the kernel into the current context and allocates the flag.
  static Status open(const CudaDriver &driver,
                     std::unique_ptr<CudaFiniteCheck> &out);

  /// Whether every element of the `n` buffers (counts[i] floats at
  /// buffers[i], in memory the device addresses) is finite: one launch per
  /// non-empty buffer on the default stream after the work queued there,
  /// then one 4-byte read.
  Status allFinite(const float *const *buffers, const size_t *counts, size_t n,
                   bool &finite);

  /// The kernel's PTX (lib/Cuda/FiniteCheck.ptx).
  static const char *ptx();

  /// Checks done so far.
  int64_t getChecks() const { return checks; }

private:
  explicit CudaFiniteCheck(const CudaDriver &driver) : driver(driver) {}
  const CudaDriver &driver;
  std::unique_ptr<CudaModule> module;
  CudaBuffer flag;
  int64_t checks = 0;
};

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_CUDAFINITECHECK_H
