//===- Resume.cpp - What a qtrain-run checkpoint must match ---------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "Resume.h"

#include "Fatal.h"

#include "qtrain/runtime/Checkpoint.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

using namespace qtrain::run;
namespace rt = qtrain::rt;
using json = nlohmann::json;

json qtrain::run::runConfig(const Options &o, const rt::Manifest &m,
                            const Data &d, const std::string &schedule,
                            const std::string &gradSchedule,
                            const std::string &evalBits, int64_t totalSteps) {
  json config = {{"bundle_library", m.library},
                 {"bundle_library_sha256", m.librarySha256},
                 {"bundle_batch", m.batch},
                 {"parameters", m.parameters.size()},
                 {"data_dir", d.dir},
                 {"train_samples", d.train.count},
                 {"test_samples", d.test.count},
                 {"eval_bits", evalBits},
                 {"data_format", d.formatName},
                 {"augment", d.input.augment ? "crop-flip" : "none"},
                 {"shuffle", d.shuffleName},
                 {"epochs", o.epochs},
                 {"total_steps", totalSteps},
                 {"seed", o.seed},
                 {"lr", o.lr},
                 {"momentum", o.momentum},
                 {"weight_decay", o.weightDecay},
                 {"promotion_threshold", o.promotionThreshold},
                 {"schedule", schedule},
                 {"grad_schedule", gradSchedule}};
  // One value for every channel is recorded as a number, as before there
  // were per-channel statistics; none is mean 0, std 1 (the same inputs).
  const rt::Normalization &n = d.normalization;
  if (n.mean.size() <= 1) {
    config["mean"] = n.mean.empty() ? 0.0f : n.mean[0];
    config["std"] = n.std.empty() ? 1.0f : n.std[0];
  } else {
    config["mean"] = n.mean;
    config["std"] = n.std;
  }
  // The initial loss scale of bundles with loss scaling (the scale itself
  // is state, in the checkpoint; a resumed run asking for another start
  // would silently not get it).
  if (std::any_of(m.state.begin(), m.state.end(), [](const rt::StateSpec &t) {
        return t.kind == "loss_scale";
      }))
    config["loss_scale"] = o.lossScale;
  // LDP runs: how lambda is set (a resumed run must set it the same way).
  if (rt::learnsPrecisions(m)) {
    config["ldp_lambda"] =
        std::isnan(o.ldpLambda) ? json("bundle") : json(o.ldpLambda);
    config["ldp_target_cost"] = o.ldpTargetCost;
    config["ldp_lambda_rate"] = o.ldpLambdaRate;
  }
  return config;
}

namespace {

/// What sets a runConfig entry, for messages.
std::string settingOf(const std::string &key) {
  static const std::map<std::string, std::string> kSettings = {
      {"bundle_library", "the bundle"},
      {"bundle_library_sha256", "the bundle"},
      {"bundle_batch", "the bundle"},
      {"parameters", "the bundle"},
      {"data_dir", "--data or --data-dir"},
      {"data_format", "--data or --cifar100-labels"},
      {"augment", "--augment"},
      {"shuffle", "--shuffle"},
      {"train_samples", "--train-limit or the data"},
      {"test_samples", "--test-limit or the data"},
      {"eval_bits", "--eval-bits"},
      {"mean", "--mean or --normalize"},
      {"std", "--std or --normalize"},
      {"epochs", "--epochs"},
      {"total_steps", "--epochs, --train-limit or the data"},
      {"seed", "--seed"},
      {"lr", "--lr"},
      {"momentum", "--momentum"},
      {"weight_decay", "--weight-decay"},
      {"promotion_threshold", "--promotion-threshold"},
      {"schedule", "--schedule"},
      {"grad_schedule", "--grad-schedule or --grad-bits"},
      {"loss_scale", "--loss-scale"},
      {"ldp_lambda", "--ldp-lambda"},
      {"ldp_target_cost", "--ldp-target-cost"},
      {"ldp_lambda_rate", "--ldp-lambda-rate"},
      {"ranks", "mpirun -np"},
      {"allreduce", "--allreduce, or mpirun"},
      {"allreduce_bucket", "--allreduce-bucket"}};
  auto it = kSettings.find(key);
  return it == kSettings.end() ? "" : " (" + it->second + ")";
}

/// The entries runConfig() gained after checkpoints without them were
/// written, with the value those runs had: such a checkpoint resumes when
/// the run sets them so.
const json *addedLater(const std::string &key) {
  static const std::map<std::string, json> kDefaults = {{"data_format", "idx"},
                                                        {"augment", "none"},
                                                        {"shuffle", "seeded"},
                                                        {"ranks", 1},
                                                        {"allreduce", "none"}};
  auto it = kDefaults.find(key);
  return it == kDefaults.end() ? nullptr : &it->second;
}

} // namespace

std::vector<std::string> qtrain::run::configMismatches(const json &saved,
                                                       const json &now) {
  std::vector<std::string> out;
  for (auto it = now.begin(); it != now.end(); ++it) {
    auto other = saved.find(it.key());
    const json *legacy = addedLater(it.key());
    if (other == saved.end() && legacy && *legacy == it.value())
      continue;
    if (other == saved.end() && legacy)
      out.push_back(it.key() + ": checkpoint " + legacy->dump() +
                    " (from before the setting was recorded), now " +
                    it.value().dump() + settingOf(it.key()));
    else if (other == saved.end())
      out.push_back(it.key() + " (missing in the checkpoint)" +
                    settingOf(it.key()));
    else if (*other != it.value())
      out.push_back(it.key() + ": checkpoint " + other->dump() + ", now " +
                    it.value().dump() + settingOf(it.key()));
  }
  return out;
}

ResumePoint qtrain::run::resumeRun(const Options &o, const json &config,
                                   rt::Trainer &trainer, int64_t total,
                                   int64_t stepsPerEpoch) {
  if (o.resume.empty())
    return ResumePoint();
  rt::Checkpoint c;
  if (rt::Status s = rt::loadCheckpoint(o.resume, c); s.failed())
    die(s.message());
  std::vector<std::string> diffs =
      configMismatches(json::parse(c.config), config);
  if (!diffs.empty()) {
    std::string text;
    for (const std::string &d : diffs)
      text += "\n  " + d;
    die(o.resume + ": the checkpoint is of a different run:" + text);
  }
  if (rt::Status s = rt::restoreCheckpoint(trainer, c); s.failed())
    die(o.resume + ": " + s.message());
  ResumePoint p;
  p.step = c.step;
  p.epochLoss = c.epochLossSum;
  p.epochSteps = c.epochLossCount;
  int64_t start = p.step;
  if (start > total)
    die(o.resume + ": step " + std::to_string(start) + " is past the run's " +
        std::to_string(total) + " steps");
  if (start == total) {
    std::printf("%s: the run is complete (%lld steps); its results are in "
                "the epochs.csv beside it\n",
                o.resume.c_str(), (long long)total);
    p.complete = true;
    return p;
  }
  if (o.stopAt > 0 && o.stopAt <= start)
    die("--stop-at=" + std::to_string(o.stopAt) +
        " is not after the checkpoint's step " + std::to_string(start));
  if (p.epochSteps != start % stepsPerEpoch)
    die(o.resume + ": the checkpoint at step " + std::to_string(start) +
        " has the training losses of " + std::to_string(p.epochSteps) +
        " steps of its epoch, but " + std::to_string(start % stepsPerEpoch) +
        " steps of it are done");
  return p;
}

std::string qtrain::run::resumeFolder(const Options &o) {
  if (o.resume.empty())
    return "";
  size_t slash = o.resume.find_last_of('/');
  return slash == std::string::npos ? "." : o.resume.substr(0, slash);
}
