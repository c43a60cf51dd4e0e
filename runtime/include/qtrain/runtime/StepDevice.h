//===- StepDevice.h - Where a Trainer's compiled steps run ------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A Trainer runs its bundle's compiled steps on the CPU (model.so) unless
/// TrainerOptions::device names another device: then its buffers
/// (parameters, momentum, state) come from the device's allocator, in
/// memory the host and the device address with the same pointer, and the
/// device runs the steps on the Trainer's packed argument arrays
/// (docs/bundle.md, "The step ABI"). Everything else the Trainer does
/// (initialization, selection, the checks after a step, checkpoints) is
/// unchanged. CudaStepDevice.h is the GPU's.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_STEPDEVICE_H
#define QTRAIN_RUNTIME_STEPDEVICE_H

#include "qtrain/runtime/ErrorKind.h"
#include "qtrain/runtime/Status.h"

#include <cstddef>
#include <string>

namespace qtrain::rt {

class StepDevice {
public:
  virtual ~StepDevice() = default;
  /// `bytes` of memory both the host and the device address, 64-byte
  /// aligned; null when there is not enough.
  virtual void *allocate(size_t bytes) = 0;
  /// Returns memory from allocate().
  virtual void release(void *pointer) = 0;
  /// Runs the train step (`train`) or the eval step on `args`. Two of its
  /// buffers are the caller's host memory, which the device copies:
  /// `args[inputIndex]` (`inputBytes`, the batch) in, and for the train
  /// step `args[otherIndex]` (the labels) in, for the eval step (the
  /// logits) out. Every other buffer comes from allocate(). Fails, naming
  /// the device call, when the step could not run; its outputs are then
  /// unspecified.
  virtual Status run(bool train, void **args, size_t inputIndex,
                     size_t inputBytes, size_t otherIndex, size_t otherBytes,
                     ErrorKind *kind) = 0;
  /// Whether every element of the `n` buffers from allocate() (counts[i]
  /// floats at buffers[i]) is finite, computed where the buffers live, after
  /// the steps run so far. Sets `checked` to false (and leaves `finite`
  /// alone) when the device has no such check: the caller then reads the
  /// buffers itself.
  virtual Status checkFinite(const float *const *buffers, const size_t *counts,
                             size_t n, bool &finite, bool &checked) {
    (void)buffers, (void)counts, (void)n, (void)finite;
    checked = false;
    return Status::success();
  }
  /// What the device is, e.g. "NVIDIA H200 (sm_90)".
  virtual std::string describe() const = 0;
  /// Where the step's products run, for the run's log ("" if nowhere
  /// special).
  virtual std::string describeProducts() const { return {}; }
  /// What the device did since it was opened (launches, products run by a
  /// library), for the end of a run ("" if nothing to say).
  virtual std::string describeWork() const { return {}; }
};

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_STEPDEVICE_H
