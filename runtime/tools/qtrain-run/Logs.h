//===- Logs.h - qtrain-run's output folder and logs -------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The output folder of a run and its logs: steps.csv, steps.jsonl,
/// epochs.csv and epochs.jsonl (docs/run.md), appended as the run goes. A
/// resumed run keeps the rows before its checkpoint, from the logs beside
/// that checkpoint. What the run creates is recorded in createdOutputs()
/// (Fatal.h), so that an error before its first logged step removes it.
///
/// The logs also keep, in memory, the figures the plots draw (LogHistory):
/// the rows kept from a resumed run's logs and each row written since, as
/// the CSV files hold them.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUN_LOGS_H
#define QTRAIN_RUN_LOGS_H

#include "Options.h"

#include "qtrain/runtime/Trainer.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace qtrain::run {

/// Whether `path` names a directory.
bool isDirectory(const std::string &path);

/// Creates `path` and its missing parents (recording them in
/// createdOutputs()); dies when one cannot be created.
void makeDirectories(const std::string &path);

/// The last component of `path`, trailing slashes ignored.
std::string baseName(std::string path);

/// The run's output folder, created: --out, else a resumed run's
/// checkpoint folder `resumeDir`, else
/// qtrain-runs/<bundle>-<schedule>-seed<seed>.
std::string makeOutputFolder(const Options &o, const std::string &scheduleText,
                             const std::string &resumeDir);

/// Whether the run continues in the folder of its --resume checkpoint.
/// Otherwise logs of another run are never mixed in or overwritten by
/// accident: a new run needs an empty --out (or --overwrite); dies when
/// `outDir` holds another run.
bool checkOutputFolder(const Options &o, const std::string &outDir,
                       const std::string &checkpointPath);

/// A steps.csv row's figures for the plots, with the precision the CSV
/// prints them at.
struct LoggedStep {
  double step = 0, epoch = 0, loss = 0, bits = 0, gradBits = 0;
  /// Whether the row has the five leading figures; a row copied from an
  /// older or damaged log may not, and only its LDP figures are drawn.
  bool complete = false;
  /// Each site's bits (LDP rows; empty otherwise), the step's BitOps and
  /// the cost term's lambda.
  std::vector<double> siteBits;
  double bitOps = 0, lambda = 0;
};

/// An epochs.csv row's figures for the plots.
struct LoggedEpoch {
  double epoch = 0, accuracy = 0;
};

/// The whole run's logged figures, in log order.
struct LogHistory {
  std::vector<LoggedStep> steps;
  std::vector<LoggedEpoch> epochs;
};

/// Per-step and per-epoch logs, CSV and JSON lines, appended as the run
/// goes (a resumed run first drops the rows past its checkpoint).
class Logs {
public:
  explicit Logs(const std::string &dir) : dir(dir) {}
  ~Logs();
  Logs(const Logs &) = delete;
  Logs &operator=(const Logs &) = delete;

  /// Opens the logs of a run at `resumeStep`, keeping the rows before it;
  /// each CSV starts with this version's header, whatever the old file had.
  /// They come from the logs in `from` (the resumed checkpoint's folder,
  /// which may be another folder than this one). Returns a warning when
  /// `from` lacks some of those rows, empty otherwise.
  std::string open(int64_t resumeStep, int64_t stepsPerEpoch,
                   const std::string &from);

  /// `lossScale` is the scale the step ran with (1 without loss scaling).
  /// LDP steps (non-empty `siteBits`, each site's bits) log the MACs-
  /// weighted mean of the sites' bits as `bits`, the bits of every site
  /// (';'-separated in the CSV) and the cost term's lambda.
  void step(int64_t step, int64_t epoch, float loss, double bits, int gradBits,
            double bitOps, double total, double seconds, float lossScale,
            bool skipped, const std::vector<rt::Promotion> &promotions,
            const std::vector<int> &siteBits, float lambda);

  /// An epoch's row: its mean training loss, the test loss and accuracy
  /// at `evalBits`, the run's BitOps and seconds so far. Flushes the logs.
  void epoch(int64_t epoch, int64_t step, double trainLoss, double testLoss,
             double testAccuracy, int evalBits, double total, double seconds);

  /// Writes the logs out; dies when they cannot be written.
  void flush();

  /// Every row of the run's CSV logs, the kept ones first.
  const LogHistory &getHistory() const { return history; }

private:
  std::string path(const char *name) const { return dir + "/" + name; }

  /// Writes the rows of `from`/`name` whose first field (step or epoch) is
  /// below `limit` to this folder's `name`, after `header` for a CSV file in
  /// place of the old first line; returns how many (0 when there is no such
  /// file: nothing is written).
  int64_t keep(const std::string &from, const char *name, int64_t limit,
               const char *header);
  /// Adds kept CSV row `line` of `name` to the history.
  void remember(const char *name, const std::string &line);
  std::FILE *append(const char *name, const char *header);

  std::string dir;
  std::FILE *stepsCsv = nullptr, *stepsJson = nullptr, *epochsCsv = nullptr,
            *epochsJson = nullptr;
  LogHistory history;
};

} // namespace qtrain::run

#endif // QTRAIN_RUN_LOGS_H
