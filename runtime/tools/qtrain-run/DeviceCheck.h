//===- DeviceCheck.h - qtrain-run --device=cuda -----------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What --device=cuda does while the training step does not run on the GPU
/// yet (docs/cuda.md): it checks everything a GPU run needs -- the bundle's
/// CUDA target, the driver, a device new enough for the module, the module
/// with every kernel, and a GPU kernel for every product at every precision
/// the run's schedules reach -- and then stops with an error that says so.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUN_DEVICECHECK_H
#define QTRAIN_RUN_DEVICECHECK_H

#include "qtrain/runtime/Bundle.h"
#include "qtrain/runtime/Schedule.h"

#include <string>

namespace qtrain::run {

/// Runs the checks of the file comment and exits with code 1: with the
/// first failure, or, when all pass, with "training on the GPU is not
/// built yet". Never returns.
[[noreturn]] void stopOnCuda(const qtrain::rt::Bundle &bundle,
                             const qtrain::rt::Schedule &schedule,
                             const std::string &scheduleText,
                             const qtrain::rt::Schedule &gradSchedule,
                             const std::string &gradText);

} // namespace qtrain::run

#endif // QTRAIN_RUN_DEVICECHECK_H
