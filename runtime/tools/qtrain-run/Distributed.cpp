//===- Distributed.cpp - qtrain-run as one rank of a job ------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "Distributed.h"

#include "Fatal.h"

#include "qtrain/runtime/Sha256.h"

#if QTRAIN_RUN_HAVE_MPI
#include "qtrain/runtime/MpiCommunicator.h"
#endif

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

using namespace qtrain::run;
namespace rt = qtrain::rt;
using json = nlohmann::json;

namespace {

/// The job's communicator, for the whole process: destroyed (and MPI
/// finalized) after main returns.
std::unique_ptr<rt::Communicator> &theCommunicator() {
  static std::unique_ptr<rt::Communicator> communicator;
  return communicator;
}

[[noreturn]] void abortJob(int code) {
  // This rank's own error ends the job: the launcher's signal must not add
  // rank 0's "the job was stopped" note to it.
  std::signal(SIGTERM, SIG_DFL);
  std::signal(SIGINT, SIG_DFL);
  theCommunicator()->abort(code);
}

/// Rank 0's note when a signal stops the job: written with write(2) from
/// the handler, so kept ready in static storage.
char stopNote[4096];
volatile std::sig_atomic_t stopNoteLength = 0;

void onStopSignal(int signal) {
  if (size_t length = size_t(stopNoteLength))
    (void)!::write(STDERR_FILENO, stopNote, length);
  std::_Exit(128 + signal);
}

/// The SHA-256 of the data's samples and labels, both splits.
std::string dataDigest(const Data &d) {
  rt::Sha256 hash;
  for (const rt::Dataset *set : {&d.train, &d.test}) {
    hash.update(set->labels.data(), set->labels.size() * sizeof(int32_t));
    hash.update(set->pixels.data(), set->pixels.size());
    hash.update(set->values.data(), set->values.size() * sizeof(float));
    hash.update(set->ids.data(), set->ids.size() * sizeof(int64_t));
  }
  return hash.hexDigest();
}

void check(const rt::Status &s, const char *what) {
  if (s.failed())
    die(std::string(what) + ": " + s.message());
}

/// Rank `root`'s string on every rank.
void broadcastString(rt::Communicator &c, std::string &text, int root) {
  uint64_t size = text.size();
  check(c.broadcast(&size, sizeof(size), root), "broadcast");
  text.resize(size);
  check(c.broadcast(text.data(), size, root), "broadcast");
}

/// The highest rank for which `differs` holds, or 0.
int highestDiffering(rt::Communicator &c, bool differs, int rank) {
  int32_t who = differs ? rank : 0;
  check(c.allReduce(&who, 1, rt::CommType::I32, rt::CommOp::Max), "all-reduce");
  return who;
}

/// Every rank ends with code 1; rank 0 prints `message`.
[[noreturn]] void dieTogether(const Job &job, const std::string &message) {
  if (job.isLeader())
    std::fprintf(stderr, "qtrain-run: error: %s\n", message.c_str());
  std::fflush(nullptr);
  createdOutputs().remove();
  (void)job.communicator->barrier();
  theCommunicator().reset();
  std::_Exit(1);
}

} // namespace

std::shared_ptr<rt::Communicator> Job::shared() const {
  return std::shared_ptr<rt::Communicator>(communicator,
                                           [](rt::Communicator *) {});
}

std::string Job::exchangeName() const {
  return exchanges ? rt::toString(exchange.mode) : "none";
}

Job qtrain::run::openJob(int &argc, char **&argv) {
  std::unique_ptr<rt::Communicator> &c = theCommunicator();
#if QTRAIN_RUN_HAVE_MPI
  if (rt::launchedByMpi())
    if (rt::Status s = rt::openMpi(&argc, &argv, c); s.failed())
      die(s.message());
#else
  (void)argc;
  (void)argv;
  if (rt::mpiWorldSize() > 1)
    die("an MPI launcher started this qtrain-run as one of " +
        std::to_string(rt::mpiWorldSize()) +
        " ranks, but it was built without MPI: install libopenmpi-dev and "
        "rebuild (scripts/setup.sh)");
#endif
  if (!c)
    c = rt::makeSingleProcess();
  Job job;
  job.communicator = c.get();
  job.rank = c->getRank();
  job.ranks = c->getSize();
  if (job.ranks > 1)
    setJobExit(&abortJob, "rank " + std::to_string(job.rank) + ": ");
  if (!job.isLeader()) {
    // One voice: rank 0 prints; the others' errors still reach stderr.
    int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      std::fflush(stdout);
      ::dup2(null, STDOUT_FILENO);
      ::close(null);
    }
  }
  return job;
}

void qtrain::run::configureJob(Job &job, Options &o) {
  job.exchanges = job.ranks > 1 || !o.allreduce.empty();
  if (!o.allreduce.empty())
    (void)rt::parseExchangeMode(o.allreduce, job.exchange.mode);
  job.exchange.bucketElements = o.allreduceBucket;
  if (!job.isLeader())
    o.progress = "none";
  if (job.ranks > 1 && o.rangeTest)
    die("--range-test runs in one process (without mpirun)", 2);
}

void qtrain::run::checkSameRun(const Job &job, const json &config,
                               const Data &data) {
  if (job.ranks == 1)
    return;
  rt::Communicator &c = *job.communicator;
  std::string mine = config.dump(), leader = mine;
  broadcastString(c, leader, 0);
  std::string mineData = dataDigest(data), leaderData = mineData;
  broadcastString(c, leaderData, 0);
  int other =
      highestDiffering(c, mine != leader || mineData != leaderData, job.rank);
  if (other == 0)
    return;
  std::string theirs = mine, theirsData = mineData;
  broadcastString(c, theirs, other);
  broadcastString(c, theirsData, other);
  std::string message = "the ranks of this job do not run the same training:";
  if (job.isLeader()) {
    std::string r = "rank " + std::to_string(other);
    json a = json::parse(leader), b = json::parse(theirs);
    for (auto it = b.begin(); it != b.end(); ++it)
      if (!a.contains(it.key()) || a[it.key()] != it.value())
        message += "\n  " + it.key() + ": rank 0 " +
                   (a.contains(it.key()) ? a[it.key()].dump() : "(none)") +
                   ", " + r + " " + it.value().dump();
    if (leaderData != theirsData)
      message += "\n  the data: " + r +
                 "'s samples or labels differ from rank 0's (digest " +
                 theirsData + " vs " + leaderData + ")";
    message += "\n(every rank needs the same bundle, flags and data)";
  }
  dieTogether(job, message);
}

void qtrain::run::shareStart(const Job &job, rt::Trainer &trainer,
                             ResumePoint &start) {
  if (job.ranks == 1)
    return;
  rt::Communicator &c = *job.communicator;
  double header[5] = {double(start.step), start.epochLoss,
                      double(start.epochSteps), start.complete ? 1.0 : 0.0,
                      trainer.getTotalBitOps()};
  check(c.broadcast(header, sizeof(header), 0), "broadcast");
  std::vector<std::vector<float>> copies(trainer.getNumBuffers());
  std::vector<const float *> pointers;
  for (size_t i = 0; i < copies.size(); ++i) {
    const float *data = trainer.getBuffer(i);
    copies[i].assign(data, data + trainer.getBufferSize(i));
    check(c.broadcast(copies[i].data(), copies[i].size() * sizeof(float), 0),
          "broadcast");
    pointers.push_back(copies[i].data());
  }
  start.step = int64_t(header[0]);
  start.epochLoss = header[1];
  start.epochSteps = int64_t(header[2]);
  start.complete = header[3] != 0.0;
  if (!job.isLeader())
    check(trainer.restore(pointers, start.step, header[4]), "resume");
}

std::string qtrain::run::checkSameParameters(const Job &job,
                                             const rt::Trainer &trainer,
                                             int64_t step,
                                             const std::string &checkpoint) {
  if (job.ranks == 1)
    return "";
  rt::Sha256 hash;
  for (size_t i = 0; i < trainer.getNumBuffers(); ++i)
    hash.update(trainer.getBuffer(i), trainer.getBufferSize(i) * sizeof(float));
  std::string mine = hash.hexDigest(), leader = mine;
  rt::Communicator &c = *job.communicator;
  broadcastString(c, leader, 0);
  int other = highestDiffering(c, mine != leader, job.rank);
  if (other == 0)
    return mine;
  dieTogether(job, "after step " + std::to_string(step) + ": rank " +
                       std::to_string(other) +
                       " holds other parameters than rank 0 (the ranks no "
                       "longer train one model; a rank's memory or its "
                       "exchange is faulty)" +
                       (checkpoint.empty() ? std::string()
                                           : "; the last checkpoint " +
                                                 checkpoint + " is intact"));
}

void qtrain::run::setStopNote(const Job &job, const std::string &checkpoint) {
  if (job.ranks == 1 || !job.isLeader())
    return;
  std::string note =
      "qtrain-run: error: rank 0: the job was stopped (a rank failed, or "
      "the launcher was interrupted); " +
      (checkpoint.empty()
           ? std::string("no checkpoint was written yet\n")
           : "the last checkpoint " + checkpoint +
                 " is intact: continue with --resume=" + checkpoint + "\n");
  // The handler reads the note only while its length is set.
  stopNoteLength = 0;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  size_t length = std::min(note.size(), sizeof(stopNote));
  std::memcpy(stopNote, note.data(), length);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  stopNoteLength = std::sig_atomic_t(length);
  static bool installed = false;
  if (!installed) {
    std::signal(SIGTERM, &onStopSignal);
    std::signal(SIGINT, &onStopSignal);
    installed = true;
  }
}
