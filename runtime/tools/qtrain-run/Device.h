//===- Device.h - qtrain-run --device=cuda ----------------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// --device=cuda (docs/cuda.md, "Running"): the whole training step on the
/// GPU, from the bundle's cuda/step.so; the Trainer selects the variants
/// per step as on the CPU.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUN_DEVICE_H
#define QTRAIN_RUN_DEVICE_H

#include "qtrain/runtime/Bundle.h"
#include "qtrain/runtime/Schedule.h"
#include "qtrain/runtime/StepDevice.h"

#include <memory>
#include <string>

namespace qtrain::run {

/// The GPU a run's Trainer steps on, after checking that the bundle has a
/// CUDA target and serves the schedules; dies with the first failure
/// (no target, no step library, no driver, no device, a device too old
/// for the chip, a changed library, kernels that do not load, with
/// `gemms` "cublaslt" a cuBLASLt that does not load). Prints the device
/// and where the products run. `graphs` runs each step as a CUDA graph.
std::shared_ptr<qtrain::rt::StepDevice>
openCuda(const qtrain::rt::Bundle &bundle, const qtrain::rt::Schedule &schedule,
         const std::string &scheduleText,
         const qtrain::rt::Schedule &gradSchedule, const std::string &gradText,
         const std::string &gemms, bool graphs);

} // namespace qtrain::run

#endif // QTRAIN_RUN_DEVICE_H
