//===- RunData.cpp - qtrain-run's data, evaluation and trainer ------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "RunData.h"

#include "Fatal.h"

#include <algorithm>
#include <cmath>

using namespace qtrain::run;
namespace rt = qtrain::rt;

Data qtrain::run::loadData(const Options &o, const rt::Manifest &m) {
  Data d;
  if (!o.dataDir.empty())
    d.dir = o.dataDir;
  else if (o.data == "fashion-mnist")
    d.dir = rt::kFashionMnistDir;
  else
    die("--data: unknown dataset '" + o.data +
            "' (fashion-mnist, or give --data-dir=DIR)",
        2);
  for (auto [split, set] :
       {std::pair("train", &d.train), std::pair("test", &d.test)})
    if (rt::Status s = rt::loadDataset(d.dir, split, *set); s.failed())
      die(s.message());
  auto limit = [](rt::Dataset &set, int64_t n) {
    if (n <= 0 || n >= set.count)
      return;
    set.count = n;
    set.pixels.resize(size_t(n * set.rows * set.cols));
    set.labels.resize(size_t(n));
  };
  limit(d.train, o.trainLimit);
  limit(d.test, o.testLimit);
  int64_t pixels = d.train.rows * d.train.cols;
  if (m.input.numel != m.batch * pixels || d.test.rows != d.train.rows ||
      d.test.cols != d.train.cols)
    die("the bundle takes " + std::to_string(m.input.numel / m.batch) +
        " inputs per sample, the data has " + std::to_string(d.train.rows) +
        "x" + std::to_string(d.train.cols) + " images");
  for (const rt::Dataset *set : {&d.train, &d.test})
    if (set->classes > m.classes)
      die("the data has labels up to " + std::to_string(set->classes - 1) +
          " but the bundle classifies " + std::to_string(m.classes) +
          " classes");
  if (d.train.count < m.batch)
    die("the training set has " + std::to_string(d.train.count) +
        " samples, fewer than one batch (" + std::to_string(m.batch) + ")");
  return d;
}

EvalResult qtrain::run::evaluate(rt::Trainer &trainer, const rt::Dataset &test,
                                 const Options &o, int bits) {
  const rt::Manifest &m = trainer.getBundle().getManifest();
  int64_t batch = m.batch, classes = m.classes;
  int64_t pixels = test.rows * test.cols;
  std::vector<float> x(static_cast<size_t>(batch * pixels)),
      logits(size_t(batch * classes));
  std::vector<int64_t> indices(static_cast<size_t>(batch));
  int64_t correct = 0;
  double lossSum = 0;
  for (int64_t start = 0; start < test.count; start += batch) {
    int64_t n = std::min(batch, test.count - start);
    for (int64_t i = 0; i < n; ++i)
      indices[size_t(i)] = start + i;
    std::fill(x.begin(), x.end(), 0.0f);
    rt::normalizeBatch(test, indices.data(), size_t(n), o.mean, o.std,
                       x.data());
    if (rt::Status s = trainer.eval(x.data(), logits.data(), bits); s.failed())
      die("evaluation: " + s.message());
    for (int64_t i = 0; i < n; ++i) {
      const float *row = &logits[size_t(i * classes)];
      int label = test.labels[size_t(start + i)];
      int64_t best = std::max_element(row, row + classes) - row;
      correct += best == label;
      double top = *std::max_element(row, row + classes), sum = 0;
      for (int64_t c = 0; c < classes; ++c)
        sum += std::exp(double(row[c]) - top);
      lossSum += std::log(sum) + top - double(row[label]);
    }
  }
  return {double(correct) / double(test.count), lossSum / double(test.count),
          bits};
}

std::string qtrain::run::nonFiniteName(double value) {
  return std::isnan(value) ? "NaN" : value > 0 ? "inf" : "-inf";
}

rt::TrainerOptions qtrain::run::trainerOptions(const Options &o,
                                               const std::string &schedule,
                                               const std::string &gradSchedule,
                                               int64_t totalSteps) {
  rt::TrainerOptions t;
  t.schedule = schedule;
  t.gradSchedule = gradSchedule;
  t.totalSteps = totalSteps;
  t.seed = o.seed;
  t.learningRate = o.lr;
  t.momentum = o.momentum;
  t.weightDecay = o.weightDecay;
  t.initialLossScale = o.lossScale;
  t.promotionThreshold = o.promotionThreshold;
  t.maxStepMemory = o.maxStepMemory;
  t.threads = int(o.threads);
  t.ldpLambda = o.ldpLambda;
  t.ldpTargetCost = o.ldpTargetCost;
  t.ldpLambdaRate = o.ldpLambdaRate;
  return t;
}

std::unique_ptr<rt::Trainer>
qtrain::run::makeTrainer(const Options &o,
                         std::shared_ptr<const rt::Bundle> bundle,
                         const std::string &schedule,
                         const std::string &gradSchedule, int64_t totalSteps) {
  rt::TrainerOptions t = trainerOptions(o, schedule, gradSchedule, totalSteps);
  std::unique_ptr<rt::Trainer> trainer;
  if (rt::Status s = rt::Trainer::create(std::move(bundle), t, trainer);
      s.failed())
    die(s.message());
  return trainer;
}
