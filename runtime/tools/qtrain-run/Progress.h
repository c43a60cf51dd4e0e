//===- Progress.h - qtrain-run's terminal output ----------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What qtrain-run prints as it trains: the progress display (a bar on a
/// terminal, else a line every tenth of an epoch) and the summary at the
/// end of a session, with the names it gives precisions and durations.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUN_PROGRESS_H
#define QTRAIN_RUN_PROGRESS_H

#include "qtrain/runtime/Trainer.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace qtrain::run {

/// EvalResult::bits of an evaluation at each layer's learned bits (LDP),
/// and the forward bits of an LDP step.
constexpr int kLearnedBits = -1;

/// Sites up to which an LDP step's forward bits are named site by site.
constexpr size_t kMaxListedSites = 8;

/// "1:05" or "1:02:05".
std::string hms(double seconds);

/// "8", "fp32", or "ldp" (kLearnedBits).
std::string precisionName(int bits);

/// "8 bits", or "fp32".
std::string precisionPhrase(int bits);

/// The forward bits of a step: "8" or "fp32"; for an LDP step
/// (`siteBits`, each site's bits) the bits of every site, ','-separated
/// ("3,5,8"), or with more than kMaxListedSites sites their MACs-weighted
/// `mean` and range ("5.42 [3-8]").
std::string forwardBitsName(int bits, const std::vector<int> &siteBits,
                            double mean);

/// The progress display: a bar on a terminal, else a line every tenth of
/// an epoch.
class Progress {
public:
  /// `mode` is --progress: auto, bar, lines or none.
  Progress(const std::string &mode, int64_t stepsPerEpoch, int64_t epochs);

  /// `bits` names the step's forward bits (forwardBitsName()).
  void update(int64_t step, float loss, const std::string &bits, int gradBits,
              double stepsPerSecond);

  /// Ends the bar's line before other output.
  void clear();

private:
  int64_t stepsPerEpoch, epochs;
  bool bar = false, none = false, dirty = false;
};

/// Step count and seconds per (forward bits, backward bits): the step's
/// bits, or under LDP each site's bits.
using StepTimes =
    std::map<std::pair<std::vector<int>, int>, std::pair<int64_t, double>>;

/// The summary of a session that ran steps [start, total) in `wall`
/// seconds: the last evaluation's `accuracy` at `evalBits`, the step times,
/// BitOps, and the trainer's loss scaling, promotions and step memory.
void printSummary(const rt::Trainer &trainer, const StepTimes &stepTimes,
                  double accuracy, int evalBits, double wall, int64_t start,
                  int64_t total);

} // namespace qtrain::run

#endif // QTRAIN_RUN_PROGRESS_H
