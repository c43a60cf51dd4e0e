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

#include "qtrain/runtime/Batch.h"
#include "qtrain/runtime/Bundle.h"
#include "qtrain/runtime/Data.h"
#include "qtrain/runtime/Trainer.h"

#include <memory>
#include <string>

namespace qtrain::run {

/// The data of a run: the training and test splits, limited as asked, and
/// how their samples become the bundle's input.
struct Data {
  rt::Dataset train, test;
  rt::DataSource source;
  std::string dir;
  /// The normalization as resolved (--normalize, --mean/--std or the
  /// dataset's default; see normalizationOf()).
  rt::Normalization normalization;
  rt::InputPipeline input;
  /// "idx", "cifar10", "cifar100", "cifar100-coarse" or "npy", as the
  /// checkpoint records it.
  std::string formatName;
  /// The visiting order (--shuffle): "seeded", "none", or "npy:" and the
  /// SHA-256 of the orders of a file, as the checkpoint records it; the
  /// file's orders, one per epoch, repeating.
  std::string shuffleName = "seeded";
  std::vector<std::vector<int64_t>> orders;

  /// The order of the training samples in epoch `epoch` of a run seeded
  /// with `seed`.
  std::vector<int64_t> epochOrder(uint64_t seed, int64_t epoch) const;
};

/// The normalization of --normalize, else of --mean/--std, else the
/// dataset's default: CIFAR-10's or CIFAR-100's per-channel statistics,
/// Fashion-MNIST's for IDX data, none for npy.
rt::Normalization normalizationOf(const Options &o);

/// The splits that --data/--data-dir and the limits give, checked against
/// bundle `m`; prints a note per input convenience (Batch.h) and dies when
/// they do not fit it.
Data loadData(const Options &o, const rt::Manifest &m);

/// Test-set accuracy and mean cross-entropy, in batches; the last batch is
/// padded with zeros (id 0 for token ids) and only its real samples count
/// (evaluation reads the running ranges, not batch statistics, so samples do
/// not interact).
struct EvalResult {
  double accuracy = 0, loss = 0;
  int bits = 0;
};

/// Evaluates `trainer` on `test` (through `input`, never augmented) at
/// `bits` (or rt::kScheduleBits); dies when the bundle's evaluation fails.
EvalResult evaluate(rt::Trainer &trainer, const rt::Dataset &test,
                    const rt::InputPipeline &input, int bits);

/// "NaN", "inf" or "-inf", for messages.
std::string nonFiniteName(double value);

/// The Trainer settings of the run's seed and SGD flags, with the given
/// schedules laid out over `totalSteps`.
rt::TrainerOptions trainerOptions(const Options &o, const std::string &schedule,
                                  const std::string &gradSchedule,
                                  int64_t totalSteps);

/// A trainer of `bundle` with trainerOptions(), data parallel over
/// `communicator` when given, stepping on `device` when given (else the
/// CPU); dies when it cannot be created.
std::unique_ptr<rt::Trainer>
makeTrainer(const Options &o, std::shared_ptr<const rt::Bundle> bundle,
            const std::string &schedule, const std::string &gradSchedule,
            int64_t totalSteps,
            std::shared_ptr<rt::Communicator> communicator = nullptr,
            rt::ExchangeOptions exchange = {},
            std::shared_ptr<rt::StepDevice> device = nullptr);

} // namespace qtrain::run

#endif // QTRAIN_RUN_RUNDATA_H
