//===- RangeTest.h - CPT's precision range test -----------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// CPT's precision range test (PAPERS.md §1, details unconfirmed, so all
/// are options; qtrain-run --range-test, docs/run.md): for each static
/// precision from the lowest the bundle has, train from the same
/// initialization for `steps` steps and compare the training accuracy of
/// the first and last `window` batches (measured on each batch before its
/// step, at that precision). Bmin is the first precision whose gain exceeds
/// the threshold. A precision whose training diverges (a step's update or
/// loss is not finite) gains nothing; the next one starts from the same
/// initialization, as every precision does. Bmax is the static baseline,
/// 8 bits, when the bundle has it, else the bundle's largest precision.
///
/// The measurement (measureRange, runRangeTest) needs a bundle; the choice
/// of the candidates and of Bmin and Bmax (rangeTestCandidates,
/// decideRange) does not.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_RANGETEST_H
#define QTRAIN_RUNTIME_RANGETEST_H

#include "qtrain/runtime/Batch.h"
#include "qtrain/runtime/Data.h"
#include "qtrain/runtime/Schedule.h"
#include "qtrain/runtime/Status.h"
#include "qtrain/runtime/Trainer.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

namespace qtrain::rt {

/// The test's settings.
struct RangeTestOptions {
  /// Steps trained at each precision, and the batches whose accuracy is
  /// averaged at each end (at most half of `steps`).
  int64_t steps = 300, window = 50;
  /// The gain in accuracy (a fraction, last window minus first) that
  /// counts.
  double threshold = 0.10;
  /// The batch order's seed.
  uint64_t seed = 1;
  /// How samples become inputs (normalization, fitting, augmentation; step
  /// t of each precision's training draws its augmentation as training
  /// step t would).
  InputPipeline input;
};

/// What the test measured at one precision.
struct RangePoint {
  int bits = 0;
  /// The step whose update or loss was not finite; -1 when training did
  /// not diverge (the accuracies are then measured).
  int64_t divergedAt = -1;
  /// Training accuracy over the first and the last window of batches.
  double firstAccuracy = 0, lastAccuracy = 0;

  bool diverged() const { return divergedAt >= 0; }
  double gain() const { return lastAccuracy - firstAccuracy; }
};

/// The test's outcome over the precisions measured so far.
struct RangeDecision {
  /// The first precision whose gain exceeds the threshold; -1: none yet.
  int bmin = -1;
  /// 8 when it is a candidate, else the largest candidate.
  int bmax = 0;
  /// The precisions whose training diverged, in the order tested.
  std::vector<int> diverged;
};

/// The precisions the test tries, in increasing order: the static ones
/// (1 to 16 bits) that a bundle of `manifest` serves with backward
/// schedule `gradSchedule` (spelled `gradText`).
std::vector<int> rangeTestCandidates(const Manifest &manifest,
                                     const Schedule &gradSchedule,
                                     std::string_view gradText);

/// Bmin and Bmax from `points`, measured in the order of `candidates`
/// (non-empty). A diverged precision is never Bmin, whatever the
/// threshold.
RangeDecision decideRange(const std::vector<int> &candidates,
                          const std::vector<RangePoint> &points,
                          double threshold);

/// Trains `trainer`, fresh and scheduled at static `bits`, for
/// `options.steps` steps of `train` in the seeded batch order
/// (shuffleOrder()), measuring each end's accuracy at `bits`. A step that
/// diverges ends the measurement; any other failure is returned.
Status measureRange(Trainer &trainer, int bits, const Dataset &train,
                    const RangeTestOptions &options, RangePoint &point);

/// Called after each precision with its point and the decision so far.
using RangeObserver =
    std::function<void(const RangePoint &, const RangeDecision &)>;

/// The whole test over `candidates` (non-empty, rangeTestCandidates()):
/// for each, a new Trainer of `bundle` with `trainerOptions` scheduled at
/// static:bits over `options.steps` steps, measured by measureRange().
/// `decision` gets the outcome; the first failure to create or train a
/// trainer is returned.
Status runRangeTest(std::shared_ptr<const Bundle> bundle,
                    const std::vector<int> &candidates,
                    TrainerOptions trainerOptions, const Dataset &train,
                    const RangeTestOptions &options,
                    const RangeObserver &observer, RangeDecision &decision);

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_RANGETEST_H
