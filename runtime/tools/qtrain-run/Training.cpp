//===- Training.cpp - qtrain-run's training loop --------------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "Training.h"

#include "Fatal.h"
#include "Plots.h"
#include "Progress.h"

#include "qtrain/runtime/Checkpoint.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>

using namespace qtrain::run;
namespace rt = qtrain::rt;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

int qtrain::run::train(const Session &session) {
  const Options &o = session.options;
  const Data &data = session.data;
  rt::Trainer &trainer = session.trainer;
  const rt::Manifest &m = trainer.getBundle().getManifest();
  const rt::Schedule &schedule = session.schedule;
  const Job &job = session.job;
  bool leader = job.isLeader();
  // Followers have no logs; the leader's are always open.
  Logs dummy("");
  Logs &logs = session.logs ? *session.logs : dummy;
  const std::string &outDir = session.outDir,
                    &checkpointPath = session.checkpointPath;
  int64_t batch = m.batch, stepsPerEpoch = session.stepsPerEpoch,
          total = session.total, start = session.start.step;
  int evalBits = session.evalBits;
  bool learnedEval = session.learnedEval;
  double epochLoss = session.start.epochLoss;
  int64_t epochSteps = session.start.epochSteps;

  Progress progress(o.progress, stepsPerEpoch, o.epochs);
  bool ids = data.input.isIds;
  std::vector<float> x(ids ? 0 : static_cast<size_t>(m.input.numel));
  std::vector<int64_t> idsX(ids ? static_cast<size_t>(m.input.numel) : 0);
  std::vector<int64_t> labels(static_cast<size_t>(batch));
  std::vector<int64_t> order;
  StepTimes stepTimes;
  // --overflow-profile: per promotable tensor, the sum and max of its
  // overflow ratios over the steps.
  std::vector<double> overflowSum(trainer.getNumPromotable(), 0.0),
      overflowMax(trainer.getNumPromotable(), 0.0);
  int64_t profiledSteps = 0;
  EvalResult last;
  auto runStart = Clock::now();
  auto rateStart = runStart;
  int64_t rateSteps = 0;
  double rate = 0;
  std::string lastCheckpoint = start > 0 ? o.resume : "";
  std::string digest;
  setStopNote(job, lastCheckpoint);
  // The logs on disk, then a checkpoint that they are complete up to; every
  // rank checks first that all hold the same parameters.
  auto checkpoint = [&]() {
    digest =
        checkSameParameters(job, trainer, trainer.getStep(), lastCheckpoint);
    if (!leader)
      return;
    logs.flush();
    if (rt::Status s = rt::saveCheckpoint(
            checkpointPath, rt::captureCheckpoint(trainer, session.config,
                                                  epochLoss, epochSteps));
        s.failed())
      die(s.message());
    lastCheckpoint = checkpointPath;
    setStopNote(job, lastCheckpoint);
  };
  // The end of a session: logs on disk, a checkpoint, the plots.
  auto finish = [&]() {
    progress.clear();
    checkpoint();
    if (!leader)
      return;
    writePlots(outDir, logs.getHistory());
    if (trainer.isLearned())
      writeLdpPlots(
          outDir, logs.getHistory(), m, schedule.minBits, schedule.maxBits,
          trainer.getStaticBitOps(schedule.maxBits,
                                  trainer.getGradBits(trainer.getStep())));
  };
  for (int64_t step = start; step < total; ++step) {
    int64_t epoch = step / stepsPerEpoch, pos = step % stepsPerEpoch;
    if (order.empty() || pos == 0 || step == start)
      order = data.epochOrder(o.seed, epoch);
    // Rank r's slice of the global batch: bundle batch pos * ranks + r of
    // the order (augmented with its own Philox step).
    int64_t slice = pos * job.ranks + job.rank;
    if (ids)
      rt::fillIdBatch(data.train, order, slice, batch, idsX.data(),
                      labels.data());
    else
      rt::fillBatch(data.train, order, slice, batch,
                    step * job.ranks + job.rank, data.input, x.data(),
                    labels.data());
    float loss = 0;
    float lossScale = trainer.getLossScale();
    // The lambda this step's loss uses (a target cost moves it after).
    float lambda = trainer.getLdpLambda();
    auto t0 = Clock::now();
    if (rt::Status s = ids ? trainer.step(idsX.data(), labels.data(), loss)
                           : trainer.step(x.data(), labels.data(), loss);
        s.failed())
      die("step " + std::to_string(step) + ": " + s.message() +
          (job.ranks > 1 && !lastCheckpoint.empty()
               ? "; the last checkpoint " + lastCheckpoint + " is intact"
               : ""));
    if (!o.overflowProfile.empty()) {
      const std::vector<float> &ratios = trainer.getLastOverflowRatios();
      for (size_t k = 0; k < ratios.size() && k < overflowSum.size(); ++k) {
        overflowSum[k] += ratios[k];
        overflowMax[k] = std::max(overflowMax[k], double(ratios[k]));
      }
      ++profiledSteps;
    }
    for (const rt::Promotion &p : trainer.getLastPromotions()) {
      progress.clear();
      std::printf("step %lld: %s overflowed its low format in %.4g of its "
                  "elements; promoted to the high format\n",
                  (long long)step, p.name.c_str(), p.overflowRatio);
      std::fflush(stdout);
    }
    if (trainer.lastStepSkipped()) {
      progress.clear();
      std::printf("step %lld: a gradient overflowed at loss scale %g; step "
                  "skipped, loss scale now %g\n",
                  (long long)step, lossScale, trainer.getLossScale());
      std::fflush(stdout);
    }
    double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (!std::isfinite(loss)) {
      progress.clear();
      if (leader)
        logs.flush();
      die("step " + std::to_string(step) + ": the loss is " +
          std::to_string(loss) +
          " (diverged; try a smaller --lr). Logs are "
          "in " +
          outDir);
    }
    int bits = trainer.getLastBits(), gradBits = trainer.getLastGradBits();
    std::vector<int> siteBits;
    if (trainer.isLearned())
      for (size_t i = 0; i < m.sites.size(); ++i)
        siteBits.push_back(trainer.getLastSiteBits(i));
    double meanBits = trainer.getLastMeanBits();
    auto &times = stepTimes[{
        siteBits.empty() ? std::vector<int>{bits} : siteBits, gradBits}];
    ++times.first;
    times.second += seconds;
    if (leader)
      logs.step(step, epoch, loss, meanBits, gradBits, trainer.getLastBitOps(),
                trainer.getTotalBitOps(), seconds, lossScale,
                trainer.lastStepSkipped(), trainer.getLastPromotions(),
                siteBits, lambda);
    // A step of this run is logged: its output stays, whatever happens.
    createdOutputs().armed = false;
    epochLoss += loss;
    ++epochSteps;
    ++rateSteps;
    double elapsed =
        std::chrono::duration<double>(Clock::now() - rateStart).count();
    if (elapsed > 0)
      rate = double(rateSteps) / elapsed;
    progress.update(step, loss, forwardBitsName(bits, siteBits, meanBits),
                    gradBits, rate);

    if (o.checkEvery > 0 && (step + 1) % o.checkEvery == 0)
      checkSameParameters(job, trainer, step + 1, lastCheckpoint);
    // Rank 0 evaluates; the others go on to the next step's exchange.
    bool epochEnd = (step + 1) % stepsPerEpoch == 0;
    if (epochEnd && leader) {
      last = evaluate(trainer, data.test, data.input, evalBits);
      if (!std::isfinite(last.loss)) {
        // Nothing of this epoch is saved: the last checkpoint stays the
        // last good one.
        progress.clear();
        logs.flush();
        die("epoch " + std::to_string(epoch + 1) + ": the test loss is " +
            nonFiniteName(last.loss) +
            " (the model's logits on the test set are not finite); the run "
            "stops without a checkpoint of this epoch. Logs are in " +
            outDir);
      }
      if (learnedEval)
        last.bits = kLearnedBits;
      else if (evalBits == rt::kScheduleBits)
        last.bits = trainer.getBits(trainer.getStep());
      double wall =
          std::chrono::duration<double>(Clock::now() - runStart).count();
      logs.epoch(epoch, step + 1, epochLoss / double(epochSteps), last.loss,
                 last.accuracy, last.bits, trainer.getTotalBitOps(), wall);
      progress.clear();
      std::printf("epoch %lld/%lld: train loss %.4f, test loss %.4f, test "
                  "accuracy %.2f%% (at %s), %s elapsed\n",
                  (long long)epoch + 1, (long long)o.epochs,
                  epochLoss / double(epochSteps), last.loss,
                  100.0 * last.accuracy, precisionPhrase(last.bits).c_str(),
                  hms(wall).c_str());
      std::fflush(stdout);
    }
    if (epochEnd) {
      epochLoss = 0;
      epochSteps = 0;
      // The rate excludes evaluation.
      rateStart = Clock::now();
      rateSteps = 0;
      // Dynamic loss scaling doubles the scale every epoch (PAPERS.md
      // section 4), up to 2^64.
      if (trainer.hasLossScale() && trainer.getLossScale() < 0x1p64f)
        (void)trainer.setLossScale(2.0f * trainer.getLossScale());
    }
    // After the epoch's evaluation, so that a checkpoint at an epoch's end
    // has that epoch's row in the logs.
    if (o.checkpointEvery > 0 && (step + 1) % o.checkpointEvery == 0 &&
        step + 1 < total)
      checkpoint();
    if (o.stopAt > 0 && step + 1 == o.stopAt && step + 1 < total) {
      finish();
      std::printf(
          "stopped after step %lld of %lld; continue with --resume=%s\n",
          (long long)o.stopAt, (long long)total, checkpointPath.c_str());
      return 0;
    }
  }
  finish();
  if (!leader)
    return 0;

  double wall = std::chrono::duration<double>(Clock::now() - runStart).count();
  printSummary(trainer, stepTimes, last.accuracy, last.bits, wall, start,
               total);
  if (const rt::GradientExchange *x = trainer.getGradientExchange()) {
    int64_t steps = trainer.getStep() - start;
    double exchange = trainer.getTotalExchangeSeconds();
    double stepping = 0;
    for (const auto &[key, times] : stepTimes)
      stepping += times.second;
    std::printf("gradient exchange (%s, %d rank%s): %.3f MiB per rank per "
                "step, %.3f MiB sent by each in a ring all-reduce; %.2f ms "
                "per step (%.1f%% of the step), after the backward pass (not "
                "overlapped: the compiled step is one call)\n",
                job.exchangeName().c_str(), job.ranks,
                job.ranks == 1 ? "" : "s",
                double(x->getPayloadBytes()) / double(1 << 20),
                double(x->getSentBytes()) / double(1 << 20),
                steps > 0 ? 1e3 * exchange / double(steps) : 0.0,
                stepping > 0 ? 100.0 * exchange / stepping : 0.0);
    if (job.ranks > 1)
      std::printf("all %d ranks hold the same parameters, momentum and state "
                  "(digest %s)\n",
                  job.ranks, digest.c_str());
  }
  if (!o.overflowProfile.empty()) {
    json tensors = json::array();
    std::vector<std::string> names = trainer.getPromotableNames();
    for (size_t k = 0; k < names.size(); ++k)
      tensors.push_back(
          {{"name", names[k]},
           {"mean",
            profiledSteps ? overflowSum[k] / double(profiledSteps) : 0.0},
           {"max", overflowMax[k]}});
    json profile = {{"format", "qtrain-overflow-profile"},
                    {"version", 1},
                    {"steps", profiledSteps},
                    {"promotion_threshold", o.promotionThreshold},
                    {"tensors", tensors}};
    std::ofstream out(o.overflowProfile);
    out << profile.dump(2) << "\n";
    if (!out)
      die("cannot write the overflow profile " + o.overflowProfile);
    std::printf("overflow profile: %s (%lld steps)\n",
                o.overflowProfile.c_str(), (long long)profiledSteps);
  }
  if (trainer.isLearned() && trainer.getStep() > start) {
    const std::vector<int> &bits = trainer.getLastSiteBits();
    std::printf("learned bits per layer now:");
    for (size_t i = 0; i < bits.size(); ++i)
      std::printf(" %s=%d", m.sites[i].name.c_str(), bits[i]);
    std::printf("; lambda %g\n", double(trainer.getLdpLambda()));
  }
  std::printf("checkpoint: %s\nlogs: %s/{steps,epochs}.{csv,jsonl}; plots: "
              "%s/{precision,loss,accuracy%s}.svg\n",
              checkpointPath.c_str(), outDir.c_str(), outDir.c_str(),
              trainer.isLearned() ? ",bits,cost,lambda" : "");
  return 0;
}
