//===- Distributed.h - qtrain-run as one rank of a job ----------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Data-parallel runs (docs/scale-out.md): `mpirun -np P qtrain-run ...`
/// starts P ranks of one job. Each trains the same bundle on its slice of
/// every global batch; the Trainer averages the gradients through the
/// job's Communicator. Rank 0 leads: it alone prints, evaluates, writes
/// logs, plots and checkpoints, and reads --resume; the others follow it.
///
/// How a job ends on an error:
/// - found on every rank at once (a launch whose ranks differ, ranks whose
///   parameters parted): rank 0 says what differs, every rank exits 1;
/// - found on one rank (a bad file, a failed step, a rank that died): that
///   rank's message, then the launcher ends every rank (MPI_Abort);
/// - a signal (the launcher stops the job when a rank dies): rank 0 says
///   which checkpoint is intact and how to resume.
/// Checkpoints are written atomically (a temporary file renamed), so none
/// is ever half written.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUN_DISTRIBUTED_H
#define QTRAIN_RUN_DISTRIBUTED_H

#include "Options.h"
#include "Resume.h"
#include "RunData.h"

#include "qtrain/runtime/Communicator.h"
#include "qtrain/runtime/GradientExchange.h"
#include "qtrain/runtime/Trainer.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace qtrain::run {

/// The job a qtrain-run process is a rank of.
struct Job {
  /// Lives until the process ends (MPI is finalized then).
  rt::Communicator *communicator = nullptr;
  int rank = 0, ranks = 1;
  /// Whether the steps exchange gradients: under mpirun, or in one process
  /// when --allreduce is given.
  bool exchanges = false;
  rt::ExchangeOptions exchange;

  bool isLeader() const { return rank == 0; }
  /// The communicator as the Trainer holds it (not owning).
  std::shared_ptr<rt::Communicator> shared() const;
  /// "none", or the exchange mode as the checkpoint records it.
  std::string exchangeName() const;
};

/// The job of this process: MPI's when an MPI launcher started it (dies
/// when this qtrain-run was built without MPI), else one process. Called
/// before the flags are read; on ranks other than 0 standard output then
/// goes to /dev/null, and die() ends the whole job.
Job openJob(int &argc, char **&argv);

/// Applies --allreduce and --allreduce-bucket; followers never draw
/// progress.
void configureJob(Job &job, Options &o);

/// Checks that every rank runs the same configuration (`config`, which
/// names the bundle's library and its SHA-256) on the same data; otherwise
/// rank 0 says what differs on which rank and the job ends.
void checkSameRun(const Job &job, const nlohmann::json &config,
                  const Data &data);

/// After rank 0 restored --resume (resumeRun), gives every rank rank 0's
/// training state and resume point.
void shareStart(const Job &job, rt::Trainer &trainer, ResumePoint &start);

/// Checks that every rank holds rank 0's parameters, momentum and state (a
/// digest of each rank's, compared); otherwise the job ends with an error
/// naming a rank that differs. `checkpoint` is the last one written (for
/// the message), or empty. Returns the digest (SHA-256 in hex; empty for
/// one rank).
std::string checkSameParameters(const Job &job, const rt::Trainer &trainer,
                                int64_t step, const std::string &checkpoint);

/// Rank 0's note if the job is stopped by a signal (mpirun stops every
/// rank when one dies): the checkpoint that is intact.
void setStopNote(const Job &job, const std::string &checkpoint);

} // namespace qtrain::run

#endif // QTRAIN_RUN_DISTRIBUTED_H
