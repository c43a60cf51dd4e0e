//===- RunData.h - qtrain-run's data, evaluation and trainer ----*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What a qtrain-run session trains on and with: the dataset's splits as
/// the flags limit them, the test-set evaluation after each epoch, and
/// the Trainer built from the flags.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUN_RUNDATA_H
#define QTRAIN_RUN_RUNDATA_H

#include "Options.h"

#include "qtrain/runtime/Bundle.h"
#include "qtrain/runtime/Data.h"
#include "qtrain/runtime/Trainer.h"

#include <memory>
#include <string>

namespace qtrain::run {

/// The data of a run: the training and test splits, limited as asked.
struct Data {
  rt::Dataset train, test;
  std::string dir;
};

/// The splits that --data/--data-dir and the limits give, checked against
/// bundle `m`; dies when they do not fit it.
Data loadData(const Options &o, const rt::Manifest &m);

/// Test-set accuracy and mean cross-entropy, in batches; the last batch is
/// padded with zeros and only its real samples count (evaluation reads the
/// running ranges, not batch statistics, so samples do not interact).
struct EvalResult {
  double accuracy = 0, loss = 0;
  int bits = 0;
};

/// Evaluates `trainer` on `test` at `bits` (or rt::kScheduleBits); dies
/// when the bundle's evaluation fails.
EvalResult evaluate(rt::Trainer &trainer, const rt::Dataset &test,
                    const Options &o, int bits);

/// "NaN", "inf" or "-inf", for messages.
std::string nonFiniteName(double value);

/// The Trainer settings of the run's seed and SGD flags, with the given
/// schedules laid out over `totalSteps`.
rt::TrainerOptions trainerOptions(const Options &o, const std::string &schedule,
                                  const std::string &gradSchedule,
                                  int64_t totalSteps);

/// A trainer of `bundle` with trainerOptions(); dies when it cannot be
/// created.
std::unique_ptr<rt::Trainer>
makeTrainer(const Options &o, std::shared_ptr<const rt::Bundle> bundle,
            const std::string &schedule, const std::string &gradSchedule,
            int64_t totalSteps);

} // namespace qtrain::run

#endif // QTRAIN_RUN_RUNDATA_H
