//===- main.cpp - qtrain-run: train a compiled bundle on real data --------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// qtrain-run BUNDLE [options]: trains a bundle made by qtrain-compile on an
/// image dataset (Fashion-MNIST by default; IDX, CIFAR or npy files,
/// Data.h), evaluating on the test set every epoch, with progress, logs,
/// plots and checkpoints (docs/run.md). Built on the runtime only: no LLVM.
///
/// main checks every flag before any output is created, then wires the
/// parts: Options (the command line), RunData (data, evaluation, the
/// trainer), Schedules (--print-schedule, --range-test), Resume (the
/// checkpoint's configuration), Logs (the output folder and logs),
/// Training (the loop), Progress and Plots (what it prints and draws).
///
//===----------------------------------------------------------------------===//

#include "Device.h"
#include "Distributed.h"
#include "Fatal.h"
#include "Logs.h"
#include "Options.h"
#include "Progress.h"
#include "Resume.h"
#include "RunData.h"
#include "Schedules.h"
#include "Training.h"

#include "qtrain/runtime/Bundle.h"
#include "qtrain/runtime/Schedule.h"
#include "qtrain/runtime/Trainer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <unistd.h>

using namespace qtrain::run;
namespace rt = qtrain::rt;
using json = nlohmann::json;

int main(int argc, char **argv) {
  // Under mpirun, this process is one rank of a data-parallel job.
  Job job = openJob(argc, argv);
  Options o = parseOptions(argc, argv);
  configureJob(job, o);

  std::unique_ptr<rt::Bundle> opened;
  if (rt::Status s = rt::openBundle(o.bundle, opened); s.failed())
    die(s.message());
  std::shared_ptr<const rt::Bundle> bundle(std::move(opened));
  const rt::Manifest &m = bundle->getManifest();
  if (o.batch != 0 && o.batch != m.batch)
    die("--batch=" + std::to_string(o.batch) +
        ", but the bundle's step was "
        "compiled for batch " +
        std::to_string(m.batch) + " (recompile with qtrain-compile --batch=" +
        std::to_string(o.batch) + ")");
  std::string scheduleText = o.schedule.empty() ? m.schedule : o.schedule;
  std::string gradText =
      o.gradSchedule.empty() ? m.gradSchedule : o.gradSchedule;
  rt::Schedule schedule, gradSchedule;
  if (rt::Status s = rt::parseSchedule(scheduleText, schedule); s.failed())
    die("--schedule: " + s.message());
  if (rt::Status s = rt::parseSchedule(gradText, gradSchedule); s.failed())
    die("--grad-schedule: " + s.message());
  // Before the data: a GPU run needs the driver, a device and the step.
  std::shared_ptr<rt::StepDevice> device;
  if (o.device == "cuda") {
    if (o.rangeTest)
      die("--range-test runs on the CPU: leave out --device=cuda");
    device = openCuda(*bundle, schedule, scheduleText, gradSchedule, gradText,
                      o.cudaGemm, o.cudaGraphs == "on");
  }

  Data data = loadData(o, m);
  if (o.rangeTest)
    return rangeTest(o, bundle, data, gradSchedule, gradText);

  int64_t batch = m.batch;
  // Each step takes one global batch of the epoch's order: `ranks`
  // bundle batches, rank r's the r-th.
  int64_t globalBatch = batch * job.ranks;
  int64_t stepsPerEpoch = data.train.count / globalBatch;
  if (stepsPerEpoch == 0)
    die("the global batch (" + std::to_string(job.ranks) + " ranks x batch " +
        std::to_string(batch) + " = " + std::to_string(globalBatch) +
        ") is larger than the " + std::to_string(data.train.count) +
        " training samples: run fewer ranks or compile a smaller batch");
  int64_t total = stepsPerEpoch * o.epochs;
  checkScheduleLength(schedule, scheduleText, "--schedule", total);
  checkScheduleLength(gradSchedule, gradText, "--grad-schedule", total);
  if (o.printSchedule) {
    if (rt::Status s = rt::validateSchedule(m, schedule, scheduleText,
                                            gradSchedule, gradText);
        s.failed())
      die(s.message());
    if (schedule.kind == rt::ScheduleKind::Learned) {
      std::printf("schedule %s, backward %s, %lld steps (%lld per epoch): "
                  "each layer's bits are learned during training (LDP), "
                  "from %d to %d; the run logs them per step\n",
                  scheduleText.c_str(), gradText.c_str(), (long long)total,
                  (long long)stepsPerEpoch, schedule.minBits, schedule.maxBits);
      return 0;
    }
    printSchedules(schedule, scheduleText, gradSchedule, gradText, total,
                   stepsPerEpoch, m);
    return 0;
  }

  std::unique_ptr<rt::Trainer> trainer =
      makeTrainer(o, bundle, scheduleText, gradText, total,
                  job.exchanges ? job.shared() : nullptr, job.exchange, device);

  // An LDP model is evaluated at its learned bits unless asked otherwise.
  bool learnedEval =
      trainer->isLearned() && (!o.evalBitsGiven || o.evalBits == "current");
  int evalBits = learnedEval               ? rt::kScheduleBits
                 : o.evalBits == "max"     ? rt::scheduleMaxBits(schedule)
                 : o.evalBits == "current" ? rt::kScheduleBits
                                           : std::atoi(o.evalBits.c_str());

  if (evalBits != rt::kScheduleBits)
    for (const rt::SiteSpec &site : m.sites)
      if (std::none_of(
              site.variants.begin(), site.variants.end(),
              [&](const rt::VariantSpec &v) { return v.bits == evalBits; }))
        die("--eval-bits: site '" + site.name + "' has no " +
            precisionPhrase(evalBits) +
            " variant to evaluate with (compile the bundle with those bits)");
  if (o.stopAt >= total)
    std::fprintf(stderr,
                 "qtrain-run: warning: --stop-at=%lld is not before the last "
                 "step (%lld); the run goes to the end\n",
                 (long long)o.stopAt, (long long)total);

  // Every flag is checked before any output is created.
  if (!o.overflowProfile.empty() && !trainer->hasPromotion())
    die("--overflow-profile needs a bundle compiled with --precision-ratio or "
        "--precision-budget that has low P/Y tensors");
  if (!o.overflowProfile.empty()) {
    size_t slash = o.overflowProfile.find_last_of('/');
    std::string dir = slash == std::string::npos
                          ? "."
                          : o.overflowProfile.substr(0, slash + 1);
    if (isDirectory(o.overflowProfile) || ::access(dir.c_str(), W_OK) != 0)
      die("--overflow-profile=" + o.overflowProfile + ": cannot write there (" +
          (isDirectory(o.overflowProfile) ? std::string("a directory")
                                          : dir + ": " + std::strerror(errno)) +
          ")");
  }
  // --eval-bits as it acts: "max" is the schedule's largest bits, "04" is
  // 4, and an LDP run evaluates at the current bits by default.
  std::string evalText = learnedEval || evalBits == rt::kScheduleBits
                             ? "current"
                             : std::to_string(evalBits);
  json config = runConfig(o, m, data, scheduleText, gradText, evalText, total);
  // Data parallel: the number of ranks and how they exchange (the data
  // order of rank r follows from the seed, the rank and the ranks).
  config["ranks"] = job.ranks;
  config["allreduce"] = job.exchangeName();
  if (job.exchanges && job.exchange.mode == rt::ExchangeMode::Int8)
    config["allreduce_bucket"] = job.exchange.bucketElements;
  checkSameRun(job, config, data);
  // Rank 0 reads the checkpoint; the others take its state.
  ResumePoint start;
  if (job.isLeader())
    start = resumeRun(o, config, *trainer, total, stepsPerEpoch);
  if (!o.resume.empty())
    shareStart(job, *trainer, start);
  if (start.complete)
    return 0;
  if (!job.isLeader())
    return train({o, data, *trainer, schedule, job, nullptr, config.dump(), "",
                  "", evalBits, learnedEval, stepsPerEpoch, total, start});
  // Where the logs before the checkpoint are: beside it.
  std::string resumeDir = resumeFolder(o);
  std::string outDir = makeOutputFolder(o, scheduleText, resumeDir);
  std::string checkpointPath = outDir + "/checkpoint.qck";
  bool ownFolder = checkOutputFolder(o, outDir, checkpointPath);
  Logs logs(outDir);
  std::string logsWarning =
      logs.open(start.step, stepsPerEpoch,
                ownFolder || start.step == 0 ? outDir : resumeDir);
  if (!logsWarning.empty())
    std::fprintf(stderr, "qtrain-run: warning: %s\n", logsWarning.c_str());

  int64_t values = 0;
  for (const rt::ParameterSpec &p : m.parameters)
    values += p.numel;
  std::printf("qtrain-run: %s: %lld parameter tensors (%lld values), batch "
              "%lld\n",
              o.bundle.c_str(), (long long)m.parameters.size(),
              (long long)values, (long long)batch);
  // IDX data without augmentation says what it always said.
  std::string dataKind;
  if (data.formatName != "idx" || data.input.augment)
    dataKind = " (" + data.formatName +
               (data.input.augment ? ", crop-flip augmentation" : "") + ")";
  std::printf("  data %s%s: %lld training, %lld test samples; %lld steps per "
              "epoch, %lld epochs\n",
              data.dir.c_str(), dataKind.c_str(), (long long)data.train.count,
              (long long)data.test.count, (long long)stepsPerEpoch,
              (long long)o.epochs);
  std::printf("  schedule %s, backward %s%s; evaluation at %s; SGD lr %g "
              "momentum %g weight decay %g; seed %llu\n",
              scheduleText.c_str(), gradText.c_str(),
              m.gradFormat == "e5m2" ? " (errors in fp8 e5m2)" : "",
              learnedEval ? "each layer's learned bits"
              : evalBits == rt::kScheduleBits
                  ? "the current step's bits"
                  : precisionPhrase(evalBits).c_str(),
              double(o.lr), double(o.momentum), double(o.weightDecay),
              (unsigned long long)o.seed);
  if (start.step > 0)
    std::printf("  resumed from %s at step %lld\n", o.resume.c_str(),
                (long long)start.step);
  if (start.step > 0 && !ownFolder && logsWarning.empty())
    std::printf("  logs before step %lld copied from %s\n",
                (long long)start.step, resumeDir.c_str());
  if (job.ranks > 1 || job.exchanges) {
    const rt::GradientExchange &x = *trainer->getGradientExchange();
    std::printf("  data parallel: %d rank%s (%s), global batch %lld; "
                "gradients exchanged in %s: %.3f MiB per rank per step "
                "(%zu buckets)\n",
                job.ranks, job.ranks == 1 ? "" : "s",
                job.communicator->getName().c_str(), (long long)globalBatch,
                job.exchangeName().c_str(),
                double(x.getPayloadBytes()) / double(1 << 20),
                x.getNumBuckets());
    if (int64_t rest = data.train.count % globalBatch;
        rest > 0 && job.ranks > 1)
      std::printf("  the last %lld samples of each epoch's order are not "
                  "visited (%lld training samples, global batch %lld)\n",
                  (long long)rest, (long long)data.train.count,
                  (long long)globalBatch);
  }
  std::printf("  logs and plots in %s\n", outDir.c_str());
  std::fflush(stdout);

  int status = train({o, data, *trainer, schedule, job, &logs, config.dump(),
                      outDir, checkpointPath, evalBits, learnedEval,
                      stepsPerEpoch, total, start});
  if (device && status == 0)
    if (std::string work = device->describeWork(); !work.empty())
      std::printf("device: %s\n", work.c_str());
  return status;
}
