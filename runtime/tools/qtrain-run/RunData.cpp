//===- RunData.cpp - qtrain-run's data, evaluation and trainer ------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "RunData.h"

#include "Fatal.h"

#include "qtrain/runtime/Sha256.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

using namespace qtrain::run;
namespace rt = qtrain::rt;

rt::Normalization qtrain::run::normalizationOf(const Options &o) {
  rt::Normalization n;
  if (!o.normalize.empty()) {
    // Checked when the flags were parsed.
    (void)rt::parseNormalization(o.normalize, n);
    return n;
  }
  if (o.meanGiven || o.stdGiven || o.data == "fashion-mnist" ||
      o.data == "mnist-format")
    return {{o.mean}, {o.std}};
  if (o.data == "cifar10")
    return rt::cifar10Normalization();
  if (o.data == "cifar100")
    return rt::cifar100Normalization();
  return n;
}

namespace {

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

/// --shuffle: the orders of a .npy file, each a permutation of the
/// training samples (after --train-limit).
void loadShuffle(const Options &o, Data &d) {
  if (o.shuffle == "seeded" || o.shuffle == "none") {
    d.shuffleName = o.shuffle;
    return;
  }
  rt::NpyArray a;
  if (rt::Status s = rt::readNpy(o.shuffle, {"<i4", "<i8"}, a); s.failed())
    die("--shuffle: " + s.message());
  int64_t count = d.train.count;
  if (a.shape.empty() || a.shape.size() > 2 || a.shape.back() != count ||
      (a.shape.size() == 2 && a.shape[0] < 1))
    die(o.shuffle + ": expected " + std::to_string(count) +
        " indices (the training samples), or E x " + std::to_string(count) +
        " for E epochs, got shape " + shapeString(a.shape));
  int64_t rows = a.shape.size() == 2 ? a.shape[0] : 1;
  bool wide = a.dtype == "<i8";
  d.orders.assign(size_t(rows), std::vector<int64_t>(size_t(count)));
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<bool> seen(size_t(count), false);
    for (int64_t i = 0; i < count; ++i) {
      size_t at = size_t(r * count + i);
      int64_t v;
      if (wide) {
        std::memcpy(&v, a.bytes.data() + 8 * at, 8);
      } else {
        int32_t w;
        std::memcpy(&w, a.bytes.data() + 4 * at, 4);
        v = w;
      }
      if (v < 0 || v >= count || seen[size_t(v)])
        die(o.shuffle + ": row " + std::to_string(r) + ", position " +
            std::to_string(i) + ": " + std::to_string(v) +
            (v < 0 || v >= count ? " is not a training sample (0.." +
                                       std::to_string(count - 1) + ")"
                                 : " appears twice (not a permutation)"));
      seen[size_t(v)] = true;
      d.orders[size_t(r)][size_t(i)] = v;
    }
  }
  std::string bytes;
  for (const std::vector<int64_t> &row : d.orders)
    bytes.append(reinterpret_cast<const char *>(row.data()),
                 row.size() * sizeof(int64_t));
  d.shuffleName = "npy:" + rt::sha256Hex(bytes.data(), bytes.size());
}

} // namespace

std::vector<int64_t> Data::epochOrder(uint64_t seed, int64_t epoch) const {
  if (!orders.empty())
    return orders[size_t(epoch % int64_t(orders.size()))];
  if (shuffleName == "none") {
    std::vector<int64_t> order(size_t(train.count));
    for (int64_t i = 0; i < train.count; ++i)
      order[size_t(i)] = i;
    return order;
  }
  return rt::shuffleOrder(seed, epoch, train.count);
}

Data qtrain::run::loadData(const Options &o, const rt::Manifest &m) {
  Data d;
  d.dir = o.dataDir.empty() ? std::string(rt::kFashionMnistDir) : o.dataDir;
  d.source.dir = d.dir;
  d.formatName = "idx";
  if (o.data == "cifar10" || o.data == "cifar100") {
    d.source.format = o.data == "cifar10" ? rt::DataFormat::Cifar10
                                          : rt::DataFormat::Cifar100;
    d.source.coarseLabels =
        o.data == "cifar100" && o.cifar100Labels == "coarse";
    d.formatName = d.source.coarseLabels ? "cifar100-coarse" : o.data;
  } else if (o.data == "npy") {
    d.source.format = rt::DataFormat::Npy;
    d.formatName = "npy";
  }
  d.source.tokenIds = m.input.dtype == rt::DType::I64;
  if (d.source.tokenIds && d.source.format != rt::DataFormat::Npy)
    die("the bundle's input is token ids (i64); give --data=npy with N x S "
        "integer x arrays");
  for (auto [split, set] :
       {std::pair("train", &d.train), std::pair("test", &d.test)})
    if (rt::Status s = rt::loadSplit(d.source, split, *set); s.failed())
      die(s.message());
  // Found here, naming the file, rather than by the step that gets it.
  for (auto [split, set] :
       {std::pair("train", &d.train), std::pair("test", &d.test)}) {
    if (!set->isIds || m.inputMaxValue < 0)
      continue;
    auto it = std::find_if(set->ids.begin(), set->ids.end(),
                           [&](int64_t id) { return id > m.inputMaxValue; });
    if (it != set->ids.end()) {
      size_t at = size_t(it - set->ids.begin());
      die(d.dir + "/" + split + "_x.npy: token id " + std::to_string(*it) +
          " at sample " + std::to_string(at / size_t(set->cols)) +
          ", position " + std::to_string(at % size_t(set->cols)) +
          " is past the bundle's tables (ids 0.." +
          std::to_string(m.inputMaxValue) + ")");
    }
  }
  if (o.trainLimit > 0 && o.trainLimit < d.train.count)
    d.train.truncate(o.trainLimit);
  if (o.testLimit > 0 && o.testLimit < d.test.count)
    d.test.truncate(o.testLimit);
  const rt::Dataset &a = d.train, &b = d.test;
  if (a.channels != b.channels || a.rows != b.rows || a.cols != b.cols ||
      a.isFloat != b.isFloat)
    die("the training samples are " + std::to_string(a.channels) + "x" +
        std::to_string(a.rows) + "x" + std::to_string(a.cols) +
        (a.isFloat ? " fp32" : " u8") + " but the test samples " +
        std::to_string(b.channels) + "x" + std::to_string(b.rows) + "x" +
        std::to_string(b.cols) + (b.isFloat ? " fp32" : " u8"));
  loadShuffle(o, d);
  d.normalization = normalizationOf(o);
  bool augment = o.augment.empty()
                     ? d.source.format == rt::DataFormat::Cifar10 ||
                           d.source.format == rt::DataFormat::Cifar100
                     : o.augment == "crop-flip";
  std::vector<std::string> notices;
  if (rt::Status s =
          rt::makeInputPipeline(d.train, m.input.shape, d.normalization,
                                augment, o.seed, d.input, notices);
      s.failed())
    die(s.message());
  for (const std::string &notice : notices)
    std::fprintf(stderr, "qtrain-run: note: %s\n", notice.c_str());
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
                                 const rt::InputPipeline &input, int bits) {
  const rt::Manifest &m = trainer.getBundle().getManifest();
  int64_t batch = m.batch, classes = m.classes;
  size_t numel = size_t(batch * input.sampleSize());
  std::vector<float> x(input.isIds ? 0 : numel),
      logits(size_t(batch * classes));
  std::vector<int64_t> ids(input.isIds ? numel : 0);
  std::vector<int64_t> indices(static_cast<size_t>(batch));
  int64_t correct = 0;
  double lossSum = 0;
  for (int64_t start = 0; start < test.count; start += batch) {
    int64_t n = std::min(batch, test.count - start);
    for (int64_t i = 0; i < n; ++i)
      indices[size_t(i)] = start + i;
    std::fill(x.begin(), x.end(), 0.0f);
    std::fill(ids.begin(), ids.end(), 0);
    if (input.isIds)
      rt::fillIdSamples(test, indices.data(), size_t(n), ids.data());
    else
      rt::fillSamples(test, indices.data(), size_t(n), input, x.data());
    if (rt::Status s = input.isIds
                           ? trainer.eval(ids.data(), logits.data(), bits)
                           : trainer.eval(x.data(), logits.data(), bits);
        s.failed())
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

std::unique_ptr<rt::Trainer> qtrain::run::makeTrainer(
    const Options &o, std::shared_ptr<const rt::Bundle> bundle,
    const std::string &schedule, const std::string &gradSchedule,
    int64_t totalSteps, std::shared_ptr<rt::Communicator> communicator,
    rt::ExchangeOptions exchange, std::shared_ptr<rt::StepDevice> device) {
  rt::TrainerOptions t = trainerOptions(o, schedule, gradSchedule, totalSteps);
  t.communicator = std::move(communicator);
  t.exchange = exchange;
  t.device = std::move(device);
  std::unique_ptr<rt::Trainer> trainer;
  if (rt::Status s = rt::Trainer::create(std::move(bundle), t, trainer);
      s.failed())
    die(s.message());
  return trainer;
}
