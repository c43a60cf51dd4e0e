//===- Training.h - qtrain-run's training loop ------------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A session of a run, once main has checked its flags, restored any
/// checkpoint and opened the logs: the steps in the seeded batch order,
/// an evaluation after every epoch, the logs and progress as it goes,
/// checkpoints, and at the end (or at --stop-at) a checkpoint, the plots
/// and the summary.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUN_TRAINING_H
#define QTRAIN_RUN_TRAINING_H

#include "Distributed.h"
#include "Logs.h"
#include "Options.h"
#include "Resume.h"
#include "RunData.h"

#include "qtrain/runtime/Schedule.h"
#include "qtrain/runtime/Trainer.h"

#include <cstdint>
#include <string>

namespace qtrain::run {

/// What a session trains and where it writes.
struct Session {
  const Options &options;
  const Data &data;
  rt::Trainer &trainer;
  /// The forward schedule (the bounds of an LDP run's bits plot).
  const rt::Schedule &schedule;
  /// The job; a rank other than 0 follows: no logs (null), output folder,
  /// checkpoints or evaluation.
  const Job &job;
  Logs *logs;
  /// runConfig() as the checkpoints record it.
  std::string config;
  std::string outDir, checkpointPath;
  /// The evaluation's bits (or rt::kScheduleBits); `learnedEval`: an LDP
  /// model evaluated at its learned bits.
  int evalBits = 0;
  bool learnedEval = false;
  int64_t stepsPerEpoch = 0, total = 0;
  ResumePoint start;
};

/// Trains steps [session.start.step, session.total), or up to --stop-at;
/// returns the exit code (errors die).
int train(const Session &session);

} // namespace qtrain::run

#endif // QTRAIN_RUN_TRAINING_H
