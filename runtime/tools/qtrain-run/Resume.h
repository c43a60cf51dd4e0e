//===- Resume.h - What a qtrain-run checkpoint must match -------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The configuration a checkpoint records of its run (runConfig), and
/// --resume: a checkpoint continues only the run it was saved by, bit for
/// bit (docs/run.md); a resumed run that sets something differently is
/// refused with what differs and which flag sets it.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUN_RESUME_H
#define QTRAIN_RUN_RESUME_H

#include "Options.h"
#include "RunData.h"

#include "qtrain/runtime/Bundle.h"
#include "qtrain/runtime/Trainer.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace qtrain::run {

/// What a checkpoint records of the run, and what a resumed run must match.
/// Every setting that changes a run's results is here: a resumed run that
/// sets one differently is refused (configMismatches) rather than silently
/// continuing as another run. `evalBits` is --eval-bits as the run reads
/// it ("max", "current" or a bit count).
nlohmann::json runConfig(const Options &o, const rt::Manifest &m, const Data &d,
                         const std::string &schedule,
                         const std::string &gradSchedule,
                         const std::string &evalBits, int64_t totalSteps);

/// The entries of `now` that `saved` lacks or has otherwise, each with the
/// flag that sets it.
std::vector<std::string> configMismatches(const nlohmann::json &saved,
                                          const nlohmann::json &now);

/// Where a session starts: step 0, or its checkpoint's step with the
/// running sum and count of that epoch's training losses (from the
/// checkpoint, never from the logs).
struct ResumePoint {
  int64_t step = 0;
  double epochLoss = 0;
  int64_t epochSteps = 0;
  /// The checkpoint is at the run's end: there is nothing to train (the
  /// message says so).
  bool complete = false;
};

/// Restores `trainer` from --resume=o.resume, a checkpoint of the run of
/// `config` with `total` steps; dies when it is of another run or does not
/// fit this one. Without --resume, step 0.
ResumePoint resumeRun(const Options &o, const nlohmann::json &config,
                      rt::Trainer &trainer, int64_t total,
                      int64_t stepsPerEpoch);

/// The folder of the --resume checkpoint, where the logs before it are;
/// empty without --resume.
std::string resumeFolder(const Options &o);

} // namespace qtrain::run

#endif // QTRAIN_RUN_RESUME_H
