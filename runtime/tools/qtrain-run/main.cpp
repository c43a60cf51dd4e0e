//===- main.cpp - qtrain-run: train a compiled bundle on real data --------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// qtrain-run BUNDLE [options]: trains a bundle made by qtrain-compile on an
/// MNIST-format dataset (Fashion-MNIST by default), evaluating on the test
/// set every epoch, with progress, logs, plots and checkpoints
/// (docs/run.md). Built on the runtime only: no LLVM.
///
//===----------------------------------------------------------------------===//

#include "Svg.h"

#include "qtrain/runtime/Bundle.h"
#include "qtrain/runtime/Checkpoint.h"
#include "qtrain/runtime/Cost.h"
#include "qtrain/runtime/Data.h"
#include "qtrain/runtime/Schedule.h"
#include "qtrain/runtime/Trainer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace rt = qtrain::rt;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

const char *const kUsage = R"(usage: qtrain-run BUNDLE [options]

Trains a bundle made by qtrain-compile on an MNIST-format dataset and
evaluates it on the test set after every epoch (docs/run.md).

data:
  --data=fashion-mnist      the dataset (default; Debian package
                            dataset-fashion-mnist)
  --data-dir=DIR            any directory of MNIST-format IDX files
                            (train-images-idx3-ubyte[.gz], ...)
  --mean=F --std=F          input normalization (default Fashion-MNIST's
                            0.2860, 0.3530)
  --train-limit=N           use the first N training samples only
  --test-limit=N            evaluate on the first N test samples only
training:
  --epochs=N                epochs (default 5)
  --batch=N                 must equal the bundle's batch (default: it)
  --lr=F                    SGD learning rate (default 0.05)
  --momentum=F              SGD momentum (default 0.9)
  --weight-decay=F          weight decay (default 5e-4)
  --loss-scale=F            initial dynamic loss scale of bundles compiled
                            with --precision-ratio/--precision-budget: a
                            power of two (default 65536); x2 every epoch,
                            x0.5 and the step skipped on an overflow
  --promotion-threshold=F   promote a low P or Y tensor to the high format
                            for the rest of training when this ratio of its
                            elements overflows in a step (default 0.01,
                            PAPERS.md; above 1: never)
  --max-step-memory=SIZE    the most memory the compiled step's buffers may
                            hold at once (bytes, or with KiB, MiB, GiB); a
                            step that needs more stops the run with an error
                            and changes nothing (default: no limit)
  --overflow-profile=FILE   write each low P/Y tensor's overflow ratio (mean
                            and max over this session's steps) as JSON, for
                            qtrain-compile --precision-order=profiled
  --seed=N                  initialization, shuffling and rounding noise
                            (default 1)
  --threads=N               only 1: the compiled step is single-threaded
precision:
  --schedule=S              forward schedule (default: the bundle's), e.g.
                            cpt:3:8, static:8, fp32, cyclic:linear:3:8:cycles=32;
                            see qtrain-schedule --help
  --grad-bits=B             backward bits, static (default: the bundle's)
  --grad-schedule=S         backward schedule (instead of --grad-bits)
  --print-schedule          print what the schedules do over this run, exit
  --eval-bits=max|current|B evaluation precision (default max: the
                            schedule's largest bits; current: the bits of
                            the step, as CPT's code does; for an LDP bundle
                            the default is current: each layer at its
                            learned bits)
LDP (bundles compiled with --policy=ldp):
  --ldp-lambda=F            weight of the cost term (default: the bundle's)
  --ldp-target-cost=F       steer lambda every step so that the step's
                            BitOps approach this share of static max-bits
                            BitOps (e.g. 0.6; default 0: fixed lambda)
  --ldp-lambda-rate=F       how fast lambda follows the target (default 1)
output:
  --out=DIR                 logs, plots, checkpoints (default
                            qtrain-runs/<bundle>-<schedule>-seed<seed>)
  --checkpoint-every=N      also checkpoint every N steps (default 0: only
                            at the end)
  --overwrite               replace the logs and checkpoint of an earlier
                            run in --out (otherwise refused)
  --resume=FILE             continue from a checkpoint (bit for bit)
  --stop-at=N               stop after step N with a checkpoint (resume
                            later with --resume)
  --progress=auto|bar|lines|none   (default auto: a bar on a terminal)
range test:
  --range-test              CPT's precision range test: report Bmin, exit
  --range-test-steps=N      steps per precision (default 300)
  --range-test-window=N     steps averaged at each end (default 50)
  --range-test-threshold=F  accuracy gain that counts (default 0.10)
)";

/// What this run created of its output (the folder and the logs), while
/// no step of it is logged: an error then (a flag value found bad only at
/// the first step, such as a too small --max-step-memory) removes them, so
/// that they do not block the corrected rerun as "an earlier run".
struct CreatedOutputs {
  std::vector<std::string> files, directories;
  bool armed = true;

  void remove() {
    if (!armed)
      return;
    armed = false;
    for (const std::string &f : files)
      (void)::unlink(f.c_str());
    // Innermost first; a folder that holds anything else stays.
    for (auto it = directories.rbegin(); it != directories.rend(); ++it)
      (void)::rmdir(it->c_str());
  }
} createdOutputs;

[[noreturn]] void die(const std::string &message, int code = 1) {
  std::fprintf(stderr, "qtrain-run: error: %s\n", message.c_str());
  std::fflush(nullptr);
  createdOutputs.remove();
  std::exit(code);
}

struct Options {
  std::string bundle;
  std::string data = "fashion-mnist";
  std::string dataDir;
  float mean = rt::kFashionMnistMean, std = rt::kFashionMnistStd;
  int64_t trainLimit = 0, testLimit = 0;
  int64_t epochs = 5, batch = 0;
  float lr = 0.05f, momentum = 0.9f, weightDecay = 5e-4f;
  float lossScale = 65536.0f;
  double promotionThreshold = 0.01;
  int64_t maxStepMemory = 0;
  std::string overflowProfile;
  float ldpLambda = std::numeric_limits<float>::quiet_NaN();
  double ldpTargetCost = 0, ldpLambdaRate = 1.0;
  bool evalBitsGiven = false;
  uint64_t seed = 1;
  int64_t threads = 1;
  std::string schedule, gradSchedule;
  bool printSchedule = false;
  std::string evalBits = "max";
  std::string out;
  int64_t checkpointEvery = 0;
  std::string resume;
  bool overwrite = false;
  int64_t stopAt = 0;
  std::string progress = "auto";
  bool rangeTest = false;
  int64_t rangeSteps = 300, rangeWindow = 50;
  double rangeThreshold = 0.10;
};

bool startsWith(const std::string &s, const char *prefix) {
  return s.compare(0, std::strlen(prefix), prefix) == 0;
}

int64_t parseInt(const std::string &flag, const std::string &text, int64_t min,
                 int64_t max) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || errno || v < min || v > max)
    die(flag + ": expected an integer in [" + std::to_string(min) + ", " +
            std::to_string(max) + "], got '" + text + "'",
        2);
  return v;
}

/// A byte count: a non-negative integer with an optional unit B, KiB, MiB
/// or GiB ("512MiB").
int64_t parseBytes(const std::string &flag, const std::string &text) {
  static const std::pair<const char *, int64_t> kUnits[] = {
      {"GiB", int64_t(1) << 30},
      {"MiB", int64_t(1) << 20},
      {"KiB", int64_t(1) << 10},
      {"B", 1}};
  std::string digits = text;
  int64_t unit = 1;
  for (auto [suffix, size] : kUnits)
    if (digits.size() > std::strlen(suffix) &&
        digits.compare(digits.size() - std::strlen(suffix), std::string::npos,
                       suffix) == 0) {
      digits.resize(digits.size() - std::strlen(suffix));
      unit = size;
      break;
    }
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(digits.c_str(), &end, 10);
  if (digits.empty() || *end || errno || v < 0 || v > INT64_MAX / unit)
    die(flag +
            ": expected a byte count such as 4096, 512KiB, 64MiB or 2GiB, "
            "got '" +
            text + "'",
        2);
  return v * unit;
}

double parseFloat(const std::string &flag, const std::string &text) {
  char *end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || !std::isfinite(v))
    die(flag + ": expected a finite number, got '" + text + "'", 2);
  return v;
}

Options parseOptions(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (!startsWith(arg, "--")) {
      if (!o.bundle.empty())
        die("more than one bundle: '" + o.bundle + "' and '" + arg + "'", 2);
      o.bundle = arg;
      continue;
    }
    size_t eq = arg.find('=');
    std::string flag = arg.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    bool hasValue = eq != std::string::npos;
    auto need = [&]() {
      if (!hasValue)
        die(flag + " needs a value (" + flag + "=...)", 2);
      return value;
    };
    constexpr int64_t kMax = int64_t(1) << 40;
    if (flag == "--data")
      o.data = need();
    else if (flag == "--data-dir")
      o.dataDir = need();
    else if (flag == "--mean")
      o.mean = float(parseFloat(flag, need()));
    else if (flag == "--std")
      o.std = float(parseFloat(flag, need()));
    else if (flag == "--train-limit")
      o.trainLimit = parseInt(flag, need(), 1, kMax);
    else if (flag == "--test-limit")
      o.testLimit = parseInt(flag, need(), 1, kMax);
    else if (flag == "--epochs")
      o.epochs = parseInt(flag, need(), 1, 1000000);
    else if (flag == "--batch")
      o.batch = parseInt(flag, need(), 1, kMax);
    else if (flag == "--lr")
      o.lr = float(parseFloat(flag, need()));
    else if (flag == "--momentum")
      o.momentum = float(parseFloat(flag, need()));
    else if (flag == "--weight-decay")
      o.weightDecay = float(parseFloat(flag, need()));
    else if (flag == "--loss-scale")
      o.lossScale = float(parseFloat(flag, need()));
    else if (flag == "--promotion-threshold")
      o.promotionThreshold = parseFloat(flag, need());
    else if (flag == "--max-step-memory")
      o.maxStepMemory = parseBytes(flag, need());
    else if (flag == "--overflow-profile")
      o.overflowProfile = need();
    else if (flag == "--ldp-lambda")
      o.ldpLambda = float(parseFloat(flag, need()));
    else if (flag == "--ldp-target-cost")
      o.ldpTargetCost = parseFloat(flag, need());
    else if (flag == "--ldp-lambda-rate")
      o.ldpLambdaRate = parseFloat(flag, need());
    else if (flag == "--seed")
      o.seed = uint64_t(parseInt(flag, need(), 0, INT64_MAX));
    else if (flag == "--threads")
      o.threads = parseInt(flag, need(), 1, 1024);
    else if (flag == "--schedule")
      o.schedule = need();
    else if (flag == "--grad-bits")
      o.gradSchedule =
          "static:" + std::to_string(parseInt(flag, need(), 0, 16));
    else if (flag == "--grad-schedule")
      o.gradSchedule = need();
    else if (flag == "--print-schedule" && !hasValue)
      o.printSchedule = true;
    else if (flag == "--eval-bits") {
      o.evalBits = need();
      o.evalBitsGiven = true;
    } else if (flag == "--out")
      o.out = need();
    else if (flag == "--checkpoint-every")
      o.checkpointEvery = parseInt(flag, need(), 0, kMax);
    else if (flag == "--resume")
      o.resume = need();
    else if (flag == "--overwrite" && !hasValue)
      o.overwrite = true;
    else if (flag == "--stop-at")
      o.stopAt = parseInt(flag, need(), 1, kMax);
    else if (flag == "--progress")
      o.progress = need();
    else if (flag == "--range-test" && !hasValue)
      o.rangeTest = true;
    else if (flag == "--range-test-steps")
      o.rangeSteps = parseInt(flag, need(), 2, 1000000);
    else if (flag == "--range-test-window")
      o.rangeWindow = parseInt(flag, need(), 1, 1000000);
    else if (flag == "--range-test-threshold")
      o.rangeThreshold = parseFloat(flag, need());
    else
      die("unknown option '" + arg + "' (see --help)", 2);
  }
  if (o.bundle.empty())
    die("no bundle given (usage: qtrain-run BUNDLE [options]; see --help)", 2);
  if (o.threads != 1)
    die("--threads=" + std::to_string(o.threads) +
            ": the compiled step runs on one thread; only --threads=1 is "
            "supported",
        2);
  if (o.progress != "auto" && o.progress != "bar" && o.progress != "lines" &&
      o.progress != "none")
    die("--progress: expected auto, bar, lines or none, got '" + o.progress +
            "'",
        2);
  if (o.evalBits != "max" && o.evalBits != "current")
    (void)parseInt("--eval-bits", o.evalBits, 0, 16);
  if (!(o.std > 0))
    die("--std must be positive", 2);
  if (o.rangeWindow * 2 > o.rangeSteps)
    die("--range-test-window must be at most half of --range-test-steps", 2);
  return o;
}

bool isDirectory(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void makeDirectories(const std::string &path) {
  std::string partial;
  std::stringstream parts(path);
  std::string part;
  if (!path.empty() && path[0] == '/')
    partial = "/";
  while (std::getline(parts, part, '/')) {
    if (part.empty())
      continue;
    partial += part;
    if (!isDirectory(partial)) {
      if (::mkdir(partial.c_str(), 0755) == 0)
        createdOutputs.directories.push_back(partial);
      else if (errno != EEXIST)
        die("cannot create directory " + partial + ": " + std::strerror(errno));
    }
    partial += "/";
  }
}

std::string baseName(std::string path) {
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string hms(double seconds) {
  auto s = static_cast<int64_t>(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof(buf), "%lld:%02lld:%02lld", (long long)(s / 3600),
                  (long long)(s / 60 % 60), (long long)(s % 60));
  else
    std::snprintf(buf, sizeof(buf), "%lld:%02lld", (long long)(s / 60),
                  (long long)(s % 60));
  return buf;
}

/// EvalResult::bits of an evaluation at each layer's learned bits (LDP),
/// and the forward bits of an LDP step.
constexpr int kLearnedBits = -1;

std::string precisionName(int bits) {
  return bits == kLearnedBits ? "ldp"
         : bits == 0          ? "fp32"
                              : std::to_string(bits);
}

/// "8 bits", or "fp32".
std::string precisionPhrase(int bits) {
  return bits == kLearnedBits ? "the learned bits"
         : bits == 0          ? "fp32"
                              : std::to_string(bits) + " bits";
}

/// Sites up to which an LDP step's forward bits are named site by site.
constexpr size_t kMaxListedSites = 8;

/// The forward bits of a step: "8" or "fp32"; for an LDP step
/// (`siteBits`, each site's bits) the bits of every site, ','-separated
/// ("3,5,8"), or with more than kMaxListedSites sites their MACs-weighted
/// `mean` and range ("5.42 [3-8]").
std::string forwardBitsName(int bits, const std::vector<int> &siteBits,
                            double mean) {
  if (siteBits.empty())
    return precisionName(bits);
  if (siteBits.size() <= kMaxListedSites) {
    std::string list;
    for (int b : siteBits)
      list += (list.empty() ? "" : ",") + precisionName(b);
    return list;
  }
  int lo = 0, hi = 0;
  for (int b : siteBits)
    if (b > 0) {
      lo = lo ? std::min(lo, b) : b;
      hi = std::max(hi, b);
    }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f [%d-%d]", mean, lo, hi);
  return buf;
}

/// The data of a run: the training and test splits, limited as asked.
struct Data {
  rt::Dataset train, test;
  std::string dir;
};

Data loadData(const Options &o, const rt::Manifest &m) {
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

/// Test-set accuracy and mean cross-entropy, in batches; the last batch is
/// padded with zeros and only its real samples count (evaluation reads the
/// running ranges, not batch statistics, so samples do not interact).
struct EvalResult {
  double accuracy = 0, loss = 0;
  int bits = 0;
};

EvalResult evaluate(rt::Trainer &trainer, const rt::Dataset &test,
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

/// "NaN", "inf" or "-inf", for messages.
std::string nonFiniteName(double value) {
  return std::isnan(value) ? "NaN" : value > 0 ? "inf" : "-inf";
}

/// A training batch: samples [pos * batch, (pos + 1) * batch) of `order`.
void fillBatch(const rt::Dataset &train, const std::vector<int64_t> &order,
               int64_t pos, int64_t batch, const Options &o, float *x,
               int64_t *labels) {
  const int64_t *indices = &order[size_t(pos * batch)];
  rt::normalizeBatch(train, indices, size_t(batch), o.mean, o.std, x);
  for (int64_t i = 0; i < batch; ++i)
    labels[i] = train.labels[size_t(indices[i])];
}

/// Per-step and per-epoch logs, CSV and JSON lines, appended as the run
/// goes (a resumed run first drops the rows past its checkpoint).
class Logs {
public:
  explicit Logs(const std::string &dir) : dir(dir) {}

  /// Opens the logs of a run at `resumeStep`, keeping the rows before it;
  /// each CSV starts with this version's header, whatever the old file had.
  /// They come from the logs in `from` (the resumed checkpoint's folder,
  /// which may be another folder than this one). Returns a warning when
  /// `from` lacks some of those rows, empty otherwise.
  std::string open(int64_t resumeStep, int64_t stepsPerEpoch,
                   const std::string &from) {
    int64_t resumeEpoch = resumeStep / stepsPerEpoch;
    int64_t steps = keep(from, "steps.csv", resumeStep, kStepsHeader);
    keep(from, "steps.jsonl", resumeStep, nullptr);
    int64_t epochs = keep(from, "epochs.csv", resumeEpoch, kEpochsHeader);
    keep(from, "epochs.jsonl", resumeEpoch, nullptr);
    std::string warning;
    if (steps < resumeStep || epochs < resumeEpoch)
      warning = from + " has " + std::to_string(steps) + " of the " +
                std::to_string(resumeStep) + " steps.csv rows and " +
                std::to_string(epochs) + " of the " +
                std::to_string(resumeEpoch) +
                " epochs.csv rows of the run before step " +
                std::to_string(resumeStep) + "; the logs in " + dir +
                " lack the others (the epoch figures do not depend on them: "
                "the checkpoint has what they need)";
    stepsCsv = append("steps.csv", kStepsHeader);
    stepsJson = append("steps.jsonl", "");
    epochsCsv = append("epochs.csv", kEpochsHeader);
    epochsJson = append("epochs.jsonl", "");
    return warning;
  }
  ~Logs() {
    for (std::FILE *f : {stepsCsv, stepsJson, epochsCsv, epochsJson})
      if (f)
        std::fclose(f);
  }

  /// `lossScale` is the scale the step ran with (1 without loss scaling).
  /// LDP steps (non-empty `siteBits`, each site's bits) log the MACs-
  /// weighted mean of the sites' bits as `bits`, the bits of every site
  /// (';'-separated in the CSV) and the cost term's lambda.
  void step(int64_t step, int64_t epoch, float loss, double bits, int gradBits,
            double bitOps, double total, double seconds, float lossScale,
            bool skipped, const std::vector<rt::Promotion> &promotions,
            const std::vector<int> &siteBits, float lambda) {
    std::string sites;
    for (size_t i = 0; i < siteBits.size(); ++i)
      sites += (i ? ";" : "") + std::to_string(siteBits[i]);
    std::fprintf(stepsCsv,
                 "%lld,%lld,%.9g,%.6g,%d,%.6g,%.6g,%.6f,%.9g,%d,%zu,%s,%.9g\n",
                 (long long)step, (long long)epoch, loss, bits, gradBits,
                 bitOps, total, seconds, lossScale, skipped ? 1 : 0,
                 promotions.size(), sites.c_str(), lambda);
    json promoted = json::array();
    for (const rt::Promotion &p : promotions)
      promoted.push_back(
          {{"tensor", p.name}, {"overflow_ratio", p.overflowRatio}});
    json j = {{"step", step},
              {"epoch", epoch},
              {"loss", loss},
              {"bits", bits},
              {"grad_bits", gradBits},
              {"bitops", bitOps},
              {"cumulative_bitops", total},
              {"step_seconds", seconds},
              {"loss_scale", lossScale},
              {"skipped", skipped},
              {"promoted", promoted}};
    if (!siteBits.empty()) {
      j["site_bits"] = siteBits;
      j["ldp_lambda"] = lambda;
    }
    std::fprintf(stepsJson, "%s\n", j.dump().c_str());
  }

  void epoch(int64_t epoch, int64_t step, double trainLoss, const EvalResult &e,
             double total, double seconds) {
    std::fprintf(epochsCsv, "%lld,%lld,%.6f,%.6f,%.6f,%d,%.6g,%.3f\n",
                 (long long)epoch, (long long)step, trainLoss, e.loss,
                 e.accuracy, e.bits, total, seconds);
    json j = {{"epoch", epoch},
              {"step", step},
              {"train_loss", trainLoss},
              {"test_loss", e.loss},
              {"test_accuracy", e.accuracy},
              {"eval_bits", e.bits},
              {"cumulative_bitops", total},
              {"seconds", seconds}};
    std::fprintf(epochsJson, "%s\n", j.dump().c_str());
    flush();
  }

  void flush() {
    for (std::FILE *f : {stepsCsv, stepsJson, epochsCsv, epochsJson})
      if (std::fflush(f) != 0 || std::ferror(f))
        die("cannot write the logs in " + dir + ": " + std::strerror(errno));
  }

private:
  std::string path(const char *name) const { return dir + "/" + name; }

  static constexpr const char *kStepsHeader =
      "step,epoch,loss,bits,grad_bits,bitops,cumulative_bitops,step_seconds,"
      "loss_scale,skipped,promoted,site_bits,ldp_lambda\n";
  static constexpr const char *kEpochsHeader =
      "epoch,step,train_loss,test_loss,test_accuracy,eval_bits,"
      "cumulative_bitops,seconds\n";

  /// Writes the rows of `from`/`name` whose first field (step or epoch) is
  /// below `limit` to this folder's `name`, after `header` for a CSV file in
  /// place of the old first line; returns how many (0 when there is no such
  /// file: nothing is written).
  int64_t keep(const std::string &from, const char *name, int64_t limit,
               const char *header) {
    bool csv = header != nullptr;
    std::ifstream in(from + "/" + name);
    if (!in) {
      // Not even the old rows of this folder (--overwrite) stay.
      std::remove(path(name).c_str());
      return 0;
    }
    std::string line, kept = csv ? header : "";
    bool first = true;
    int64_t rows = 0;
    while (std::getline(in, line)) {
      if (csv && first) {
        first = false;
        continue;
      }
      first = false;
      long long key = -1;
      if (csv)
        key = std::strtoll(line.c_str(), nullptr, 10);
      else {
        json j = json::parse(line, nullptr, false);
        if (!j.is_discarded() && j.is_object()) {
          auto it =
              j.find(std::string(name).find("epoch") == 0 ? "epoch" : "step");
          if (it != j.end() && it->is_number_integer())
            key = it->get<long long>();
        }
      }
      if (key >= 0 && key < limit) {
        kept += line + "\n";
        ++rows;
      }
    }
    in.close();
    // Into a new file renamed over the old one, so that a run killed here
    // still has every row (the kill test of test/tools/faults.test).
    std::string tmp = path(name) + ".tmp";
    // Rows copied from another folder (a resume into another --out) make a
    // file this run created.
    bool created = ::access(path(name).c_str(), F_OK) != 0;
    errno = 0;
    std::FILE *f = std::fopen(tmp.c_str(), "w");
    bool written = f &&
                   std::fwrite(kept.data(), 1, kept.size(), f) == kept.size() &&
                   std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
    int error = errno ? errno : EIO;
    if (f && std::fclose(f) != 0 && written) {
      written = false;
      error = errno ? errno : EIO;
    }
    if (!written || std::rename(tmp.c_str(), path(name).c_str()) != 0) {
      if (written)
        error = errno;
      std::remove(tmp.c_str());
      die("cannot rewrite " + path(name) + ": " + std::strerror(error));
    }
    if (created)
      createdOutputs.files.push_back(path(name));
    return rows;
  }

  std::FILE *append(const char *name, const char *header) {
    std::string p = path(name);
    bool fresh = ::access(p.c_str(), F_OK) != 0;
    std::FILE *f = std::fopen(p.c_str(), "a");
    if (!f)
      die("cannot write " + p + ": " + std::strerror(errno));
    if (fresh) {
      createdOutputs.files.push_back(p);
      std::fputs(header, f);
    }
    return f;
  }

  std::string dir;
  std::FILE *stepsCsv = nullptr, *stepsJson = nullptr, *epochsCsv = nullptr,
            *epochsJson = nullptr;
};

/// The progress display: a bar on a terminal, else a line every tenth of
/// an epoch.
class Progress {
public:
  Progress(const std::string &mode, int64_t stepsPerEpoch, int64_t epochs)
      : stepsPerEpoch(stepsPerEpoch), epochs(epochs) {
    bar = mode == "bar" || (mode == "auto" && ::isatty(STDERR_FILENO));
    none = mode == "none";
  }

  /// `bits` names the step's forward bits (forwardBitsName()).
  void update(int64_t step, float loss, const std::string &bits, int gradBits,
              double stepsPerSecond) {
    if (none)
      return;
    int64_t epoch = step / stepsPerEpoch, pos = step % stepsPerEpoch + 1;
    double eta =
        stepsPerSecond > 0
            ? double(epochs * stepsPerEpoch - step - 1) / stepsPerSecond
            : 0;
    char line[256];
    if (bar) {
      constexpr int kWidth = 24;
      int filled = int(kWidth * pos / stepsPerEpoch);
      std::string fill(size_t(filled), '#');
      fill += std::string(size_t(kWidth - filled), '.');
      std::snprintf(line, sizeof(line),
                    "\repoch %lld/%lld [%s] %lld/%lld  %.1f step/s  ETA %s  "
                    "loss %.4f  bits %s/%s ",
                    (long long)epoch + 1, (long long)epochs, fill.c_str(),
                    (long long)pos, (long long)stepsPerEpoch, stepsPerSecond,
                    hms(eta).c_str(), loss, bits.c_str(),
                    precisionName(gradBits).c_str());
      std::fputs(line, stderr);
      dirty = true;
      return;
    }
    int64_t tenth = std::max<int64_t>(1, stepsPerEpoch / 10);
    if (pos % tenth != 0 && pos != stepsPerEpoch)
      return;
    std::snprintf(line, sizeof(line),
                  "epoch %lld/%lld step %lld/%lld  %.1f step/s  ETA %s  loss "
                  "%.4f  bits %s/%s\n",
                  (long long)epoch + 1, (long long)epochs, (long long)pos,
                  (long long)stepsPerEpoch, stepsPerSecond, hms(eta).c_str(),
                  loss, bits.c_str(), precisionName(gradBits).c_str());
    std::fputs(line, stderr);
  }

  /// Ends the bar's line before other output.
  void clear() {
    if (dirty)
      std::fputs("\r\033[K", stderr);
    dirty = false;
  }

private:
  int64_t stepsPerEpoch, epochs;
  bool bar = false, none = false, dirty = false;
};

/// What a checkpoint records of the run, and what a resumed run must match.
/// Every setting that changes a run's results is here: a resumed run that
/// sets one differently is refused (configMismatches) rather than silently
/// continuing as another run. `evalBits` is --eval-bits as the run reads
/// it ("max", "current" or a bit count).
json runConfig(const Options &o, const rt::Manifest &m, const Data &d,
               const std::string &schedule, const std::string &gradSchedule,
               const std::string &evalBits, int64_t totalSteps) {
  json config = {{"bundle_library", m.library},
                 {"bundle_library_sha256", m.librarySha256},
                 {"bundle_batch", m.batch},
                 {"parameters", m.parameters.size()},
                 {"data_dir", d.dir},
                 {"train_samples", d.train.count},
                 {"test_samples", d.test.count},
                 {"eval_bits", evalBits},
                 {"mean", o.mean},
                 {"std", o.std},
                 {"epochs", o.epochs},
                 {"total_steps", totalSteps},
                 {"seed", o.seed},
                 {"lr", o.lr},
                 {"momentum", o.momentum},
                 {"weight_decay", o.weightDecay},
                 {"promotion_threshold", o.promotionThreshold},
                 {"schedule", schedule},
                 {"grad_schedule", gradSchedule}};
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

/// What sets a runConfig entry, for messages.
std::string settingOf(const std::string &key) {
  static const std::map<std::string, std::string> kSettings = {
      {"bundle_library", "the bundle"},
      {"bundle_library_sha256", "the bundle"},
      {"bundle_batch", "the bundle"},
      {"parameters", "the bundle"},
      {"data_dir", "--data or --data-dir"},
      {"train_samples", "--train-limit or the data"},
      {"test_samples", "--test-limit or the data"},
      {"eval_bits", "--eval-bits"},
      {"mean", "--mean"},
      {"std", "--std"},
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
      {"ldp_lambda_rate", "--ldp-lambda-rate"}};
  auto it = kSettings.find(key);
  return it == kSettings.end() ? "" : " (" + it->second + ")";
}

std::vector<std::string> configMismatches(const json &saved, const json &now) {
  std::vector<std::string> out;
  for (auto it = now.begin(); it != now.end(); ++it) {
    auto other = saved.find(it.key());
    if (other == saved.end())
      out.push_back(it.key() + " (missing in the checkpoint)" +
                    settingOf(it.key()));
    else if (*other != it.value())
      out.push_back(it.key() + ": checkpoint " + other->dump() + ", now " +
                    it.value().dump() + settingOf(it.key()));
  }
  return out;
}

/// Prints the schedules over the run: the precision changes and the
/// histogram of (bits, grad_bits) steps with their share of BitOps.
void printSchedules(const rt::Schedule &fw, const std::string &fwText,
                    const rt::Schedule &bw, const std::string &bwText,
                    int64_t total, int64_t stepsPerEpoch,
                    const rt::Manifest &m) {
  std::printf("schedule %s, backward %s, %lld steps (%lld per epoch)\n",
              fwText.c_str(), bwText.c_str(), (long long)total,
              (long long)stepsPerEpoch);
  std::map<std::pair<int, int>, int64_t> histogram;
  int lastB = -1, lastG = -1;
  int64_t changes = 0;
  std::printf("changes (step: bits/grad_bits), first 20:\n");
  for (int64_t t = 0; t < total; ++t) {
    int b = rt::scheduleBits(fw, t, total), g = rt::scheduleBits(bw, t, total);
    ++histogram[{b, g}];
    if (b != lastB || g != lastG) {
      if (changes < 20)
        std::printf("  %lld: %s/%s\n", (long long)t, precisionName(b).c_str(),
                    precisionName(g).c_str());
      ++changes;
      lastB = b;
      lastG = g;
    }
  }
  std::printf("%lld changes in all\nsteps per precision:\n",
              (long long)changes);
  double macs = 0;
  for (const rt::SiteSpec &s : m.sites)
    macs += double(s.macs);
  double totalBitOps = 0;
  for (auto [p, n] : histogram)
    totalBitOps += double(n) * rt::bitOps(macs, p.first, p.second);
  for (auto [p, n] : histogram)
    std::printf("  %s/%s: %lld steps (%.1f%%)\n",
                precisionName(p.first).c_str(), precisionName(p.second).c_str(),
                (long long)n, 100.0 * double(n) / double(total));
  double static8 = double(total) * rt::bitOps(macs, 8, 8);
  double fp32 = double(total) * rt::bitOps(macs, 0, 0);
  std::printf("BitOps: %.4g (%.4f of static 8/8, %.5f of fp32)\n", totalBitOps,
              totalBitOps / static8, totalBitOps / fp32);
}

/// LDP runs: bits.svg, the bits of every site over the steps (a heatmap),
/// and cost.svg, each step's BitOps relative to `staticBitOps` (a step
/// with every site at the schedule's maximum bits).
void writeLdpPlots(const std::string &dir, const rt::Manifest &m, int minBits,
                   int maxBits, double staticBitOps) {
  qtrain::run::Heatmap map{"Bits per layer (LDP)", "step",         {}, {}, {},
                           double(minBits),        double(maxBits)};
  for (const rt::SiteSpec &site : m.sites)
    map.rows.push_back(site.name + " (" + site.op + ")");
  map.values.resize(m.sites.size());
  std::vector<std::pair<double, double>> cost, lambda;
  std::ifstream steps(dir + "/steps.csv");
  std::string line;
  std::getline(steps, line);
  while (std::getline(steps, line)) {
    std::vector<std::string> fields;
    std::stringstream in(line);
    for (std::string f; std::getline(in, f, ',');)
      fields.push_back(f);
    if (fields.size() < 13 || fields[11].empty())
      continue;
    double step = std::atof(fields[0].c_str());
    std::vector<double> bits;
    std::stringstream sites(fields[11]);
    for (std::string b; std::getline(sites, b, ';');)
      bits.push_back(std::atof(b.c_str()));
    if (bits.size() != m.sites.size())
      continue;
    map.xs.push_back(step);
    for (size_t i = 0; i < bits.size(); ++i)
      map.values[i].push_back(bits[i]);
    cost.push_back({step, std::atof(fields[5].c_str()) / staticBitOps});
    lambda.push_back({step, std::atof(fields[12].c_str())});
  }
  if (map.xs.empty())
    return;
  using qtrain::run::Chart;
  Chart costChart{"BitOps per step relative to static " +
                      std::to_string(maxBits) + "-bit forward",
                  "step",
                  "relative cost",
                  {{"cost", "#1f77b4", cost, true}}};
  Chart lambdaChart{"Weight of the cost term",
                    "step",
                    "lambda",
                    {{"lambda", "#d62728", lambda, false}}};
  if (!qtrain::run::writeHeatmapSvg(dir + "/bits.svg", map))
    std::fprintf(stderr, "qtrain-run: warning: cannot write %s/bits.svg\n",
                 dir.c_str());
  for (auto [name, chart] : {std::pair("cost.svg", &costChart),
                             std::pair("lambda.svg", &lambdaChart)})
    if (!qtrain::run::writeSvg(dir + "/" + name, *chart))
      std::fprintf(stderr, "qtrain-run: warning: cannot write %s/%s\n",
                   dir.c_str(), name);
}

void writePlots(const std::string &dir) {
  // Re-read the logs so that a resumed run plots the whole run.
  std::vector<std::pair<double, double>> bits, gradBits, loss, smooth, acc;
  std::ifstream steps(dir + "/steps.csv");
  std::string line;
  std::getline(steps, line);
  std::vector<double> window;
  double windowSum = 0;
  while (std::getline(steps, line)) {
    double step, epoch, l, b, g;
    if (std::sscanf(line.c_str(), "%lf,%lf,%lf,%lf,%lf", &step, &epoch, &l, &b,
                    &g) != 5)
      continue;
    bits.push_back({step, b == 0 ? 32 : b});
    gradBits.push_back({step, g == 0 ? 32 : g});
    loss.push_back({step, l});
    window.push_back(l);
    windowSum += l;
    if (window.size() > 50) {
      windowSum -= window[window.size() - 51];
    }
    smooth.push_back(
        {step, windowSum / double(std::min<size_t>(window.size(), 50))});
  }
  std::ifstream epochs(dir + "/epochs.csv");
  std::getline(epochs, line);
  while (std::getline(epochs, line)) {
    double epoch, step, trainLoss, testLoss, accuracy;
    if (std::sscanf(line.c_str(), "%lf,%lf,%lf,%lf,%lf", &epoch, &step,
                    &trainLoss, &testLoss, &accuracy) == 5)
      acc.push_back({epoch + 1, 100.0 * accuracy});
  }
  using qtrain::run::Chart;
  Chart precision{"Precision per step",
                  "step",
                  "bits (fp32 shown as 32)",
                  {{"forward", "#1f77b4", bits, true},
                   {"backward", "#d62728", gradBits, true, 1.0, 0.6}}};
  Chart lossChart{"Training loss",
                  "step",
                  "cross-entropy",
                  {{"per step", "#999999", loss, false, 0.7, 0.5},
                   {"mean of 50 steps", "#1f77b4", smooth, false, 2.0}}};
  Chart accChart{"Test accuracy",
                 "epoch",
                 "accuracy (%)",
                 {{"test", "#2ca02c", acc, false, 2.0, 1.0, true}}};
  for (auto [name, chart] : {std::pair("precision.svg", &precision),
                             std::pair("loss.svg", &lossChart),
                             std::pair("accuracy.svg", &accChart)})
    if (!qtrain::run::writeSvg(dir + "/" + name, *chart))
      std::fprintf(stderr, "qtrain-run: warning: cannot write %s/%s\n",
                   dir.c_str(), name);
}

/// Whether cyclic schedule `s` over `total` steps takes every bits of its
/// range [min, max] within its first two periods (both parities of a
/// triangular schedule); the bits it takes are marked in `taken`.
bool coversRange(const rt::Schedule &s, int64_t total,
                 std::vector<bool> &taken) {
  taken.assign(size_t(s.maxBits) + 1, false);
  int64_t period = rt::schedulePeriod(s, total);
  if (period <= 0)
    return false;
  // Within a period every curve runs continuously and monotonically from
  // min to max (or back); the steepest, REX, changes by at most
  // 10 * (max - min) / period between steps, under one bit for such long
  // periods, so it passes through every bits of the range. Short periods
  // are walked.
  constexpr int64_t kLongPeriod = 1 << 16;
  if (period >= kLongPeriod) {
    std::fill(taken.begin() + s.minBits, taken.end(), true);
    return true;
  }
  int missing = s.maxBits - s.minBits + 1;
  for (int64_t t = 0; t < std::min(total, 2 * period) && missing > 0; ++t) {
    int b = rt::scheduleBits(s, t, total);
    if (b >= s.minBits && b <= s.maxBits && !taken[size_t(b)]) {
      taken[size_t(b)] = true;
      --missing;
    }
  }
  return missing == 0;
}

/// The most cycles, at most `s`'s own, with which `s` over `total` steps
/// takes every bits of its range; 0 if none does. Fewer cycles make longer
/// periods, so the answer is found by bisection.
int fittingCycles(rt::Schedule s, int64_t total) {
  std::vector<bool> taken;
  auto covers = [&](int64_t n) {
    s.cycles = int(n);
    return coversRange(s, total, taken);
  };
  int64_t lo = 1, hi = std::min<int64_t>(s.cycles, total);
  if (!covers(lo))
    return 0;
  // covers(lo) holds; find the last n in [lo, hi] that covers.
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    if (covers(mid))
      lo = mid;
    else
      hi = mid - 1;
  }
  return int(lo);
}

/// A cyclic schedule needs at least one step per cycle (refused otherwise,
/// with what to give instead), and periods long enough to rise from its
/// min to its max bits (a warning otherwise: with CPT's 32 cycles, 32 to 63
/// steps make every period one step long, at min bits).
void checkScheduleLength(const rt::Schedule &s, const std::string &text,
                         const char *flag, int64_t total) {
  if (s.kind != rt::ScheduleKind::Cyclic || s.minBits == s.maxBits)
    return;
  std::vector<bool> taken;
  bool tooShort = total < s.cycles;
  if (!tooShort && coversRange(s, total, taken))
    return;
  int cycles = fittingCycles(s, total);
  std::string fix;
  if (cycles > 0) {
    rt::Schedule fewer = s;
    fewer.cycles = cycles;
    fix = "give fewer cycles, " + std::string(flag) + "=" +
          rt::printSchedule(fewer) + " (the most that reach " +
          std::to_string(s.maxBits) + " bits in " + std::to_string(total) +
          " steps)";
  } else {
    fix = "use a static schedule, " + std::string(flag) +
          "=static:" + std::to_string(s.maxBits);
  }
  std::string longer = "train for more steps (--epochs, --train-limit)";
  if (tooShort)
    die(flag + std::string(" ") + text + ": " + std::to_string(s.cycles) +
        " cycles need at least " + std::to_string(s.cycles) +
        " steps (one per period), but the run has " + std::to_string(total) +
        ": " + fix + ", or " + longer);
  std::string bits;
  for (int b = s.minBits; b <= s.maxBits; ++b)
    if (taken[size_t(b)])
      bits += (bits.empty() ? "" : ", ") + std::to_string(b);
  int64_t period = rt::schedulePeriod(s, total);
  std::fprintf(stderr,
               "qtrain-run: warning: %s %s over %lld steps: its %d periods are "
               "%lld step%s long, too short to rise from %d to %d bits: it "
               "runs at %s bits only; %s, or %s\n",
               flag, text.c_str(), (long long)total, s.cycles,
               (long long)period, period == 1 ? "" : "s", s.minBits, s.maxBits,
               bits.c_str(), fix.c_str(), longer.c_str());
}

/// A trainer of `bundle` with the run's seed and SGD settings.
std::unique_ptr<rt::Trainer>
makeTrainer(const Options &o, std::shared_ptr<const rt::Bundle> bundle,
            const std::string &schedule, const std::string &gradSchedule,
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
  t.ldpLambda = o.ldpLambda;
  t.ldpTargetCost = o.ldpTargetCost;
  t.ldpLambdaRate = o.ldpLambdaRate;
  std::unique_ptr<rt::Trainer> trainer;
  if (rt::Status s = rt::Trainer::create(std::move(bundle), t, trainer);
      s.failed())
    die(s.message());
  return trainer;
}

/// CPT's precision range test (PAPERS.md §1, details unconfirmed): for
/// each static precision from the lowest the bundle has, train from the
/// same initialization for `rangeSteps` steps and compare the training
/// accuracy of the first and last `rangeWindow` batches (measured on each
/// batch before its step, at that precision); Bmin is the first precision
/// whose gain exceeds the threshold. A precision whose training diverges
/// (a step's update or loss is not finite) gains nothing; the next one
/// starts from the same initialization, as every precision does. The
/// suggested schedule is one the bundle's variants can serve.
int rangeTest(const Options &o, std::shared_ptr<const rt::Bundle> bundle,
              const Data &d, const std::string &gradSchedule) {
  const rt::Manifest &m = bundle->getManifest();
  std::vector<int> candidates;
  rt::Schedule grad;
  if (rt::Status s = rt::parseSchedule(gradSchedule, grad); s.failed())
    die("--grad-schedule: " + s.message());
  auto servable = [&](const rt::Schedule &schedule, const std::string &text) {
    return rt::validateSchedule(m, schedule, text, grad, gradSchedule).isOk();
  };
  for (int b = 1; b <= 16; ++b)
    if (servable(rt::Schedule::staticBits(b), "static:" + std::to_string(b)))
      candidates.push_back(b);
  if (candidates.empty())
    die("the bundle has no integer precision to test (compile it with "
        "--bits=2:8)");
  std::printf("precision range test: %lld steps per precision, accuracy of "
              "the first and last %lld batches, threshold %+.3f\n",
              (long long)o.rangeSteps, (long long)o.rangeWindow,
              o.rangeThreshold);
  std::printf("%6s %10s %10s %10s\n", "bits", "first", "last", "gain");
  int64_t batch = m.batch, pixels = d.train.rows * d.train.cols;
  std::vector<float> x(static_cast<size_t>(batch * pixels)),
      logits(size_t(batch * m.classes));
  std::vector<int64_t> labels(static_cast<size_t>(batch));
  int64_t perEpoch = d.train.count / batch;
  int bmin = -1;
  std::vector<int> diverged;
  for (int b : candidates) {
    // A fresh trainer per precision: the same seed, the same initial
    // parameters, whatever the previous precision did.
    std::unique_ptr<rt::Trainer> trainer = makeTrainer(
        o, bundle, "static:" + std::to_string(b), gradSchedule, o.rangeSteps);
    std::vector<int64_t> order;
    int64_t correctFirst = 0, correctLast = 0;
    int64_t divergedAt = -1;
    for (int64_t step = 0; step < o.rangeSteps; ++step) {
      int64_t epoch = step / perEpoch, pos = step % perEpoch;
      if (pos == 0)
        order = rt::shuffleOrder(o.seed, epoch, d.train.count);
      fillBatch(d.train, order, pos, batch, o, x.data(), labels.data());
      bool first = step < o.rangeWindow;
      bool last = step >= o.rangeSteps - o.rangeWindow;
      if (first || last) {
        if (rt::Status s = trainer->eval(x.data(), logits.data(), b);
            s.failed())
          die(s.message());
        int64_t correct = 0;
        for (int64_t i = 0; i < batch; ++i) {
          const float *row = &logits[size_t(i * m.classes)];
          correct +=
              std::max_element(row, row + m.classes) - row == labels[size_t(i)];
        }
        (first ? correctFirst : correctLast) += correct;
      }
      float loss;
      rt::ErrorKind kind = rt::ErrorKind::None;
      rt::Status s = trainer->step(x.data(), labels.data(), loss, &kind);
      if (s.failed() && kind != rt::ErrorKind::Diverged)
        die(s.message());
      if (s.failed() || !std::isfinite(loss)) {
        divergedAt = step;
        break;
      }
    }
    if (divergedAt >= 0) {
      diverged.push_back(b);
      std::printf("%6d   diverged at step %lld: no gain\n", b,
                  (long long)divergedAt);
      std::fflush(stdout);
      continue;
    }
    double n = double(o.rangeWindow * batch);
    double a0 = double(correctFirst) / n, a1 = double(correctLast) / n;
    std::printf("%6d %9.2f%% %9.2f%% %+9.2f%s\n", b, 100 * a0, 100 * a1,
                100 * (a1 - a0),
                bmin < 0 && a1 - a0 > o.rangeThreshold ? "  <- Bmin" : "");
    std::fflush(stdout);
    if (bmin < 0 && a1 - a0 > o.rangeThreshold)
      bmin = b;
  }
  if (!diverged.empty()) {
    std::string list;
    for (int b : diverged)
      list += (list.empty() ? "" : ", ") + std::to_string(b);
    std::printf("training diverged at %s bits (counted as no gain; a smaller "
                "--lr may train there)\n",
                list.c_str());
  }
  if (bmin < 0) {
    std::printf("no precision gained more than %.3f: Bmin not found (train "
                "longer with --range-test-steps)\n",
                o.rangeThreshold);
    return 1;
  }
  // Bmax is the static baseline, 8 bits, when the bundle has it; else the
  // bundle's largest precision.
  int bmax =
      std::find(candidates.begin(), candidates.end(), 8) != candidates.end()
          ? 8
          : candidates.back();
  std::string baseline =
      bmax == 8 ? "the static baseline"
                : "the bundle's largest precision; the static baseline, 8, "
                  "is not among its variants";
  if (bmin >= bmax) {
    std::printf("Bmin = %d: no precision below %s (%d) trains; use "
                "--schedule=static:%d\n",
                bmin,
                bmax == 8 ? "the static baseline" : "the bundle's largest",
                bmax, bmin);
    return 0;
  }
  std::string cpt = "cpt:" + std::to_string(bmin) + ":" + std::to_string(bmax);
  rt::Schedule suggestion;
  if (rt::parseSchedule(cpt, suggestion).isOk() && servable(suggestion, cpt))
    std::printf("Bmin = %d, Bmax = %d (%s): --schedule=%s\n", bmin, bmax,
                baseline.c_str(), cpt.c_str());
  else
    std::printf("Bmin = %d, Bmax = %d (%s): the bundle has no variant for "
                "some bits of %s (recompile it with --bits=%d:%d to train "
                "with it); it serves --schedule=static:%d\n",
                bmin, bmax, baseline.c_str(), cpt.c_str(), bmin, bmax, bmax);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Options o = parseOptions(argc, argv);

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

  Data data = loadData(o, m);
  if (o.rangeTest)
    return rangeTest(o, bundle, data, gradText);

  int64_t batch = m.batch;
  int64_t stepsPerEpoch = data.train.count / batch;
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
      makeTrainer(o, bundle, scheduleText, gradText, total);

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
  int64_t start = 0;
  // The running sum and count of this epoch's training losses (a resumed
  // run continues them from its checkpoint, never from the logs).
  double epochLoss = 0;
  int64_t epochSteps = 0;
  if (!o.resume.empty()) {
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
    if (rt::Status s = rt::restoreCheckpoint(*trainer, c); s.failed())
      die(o.resume + ": " + s.message());
    start = c.step;
    epochLoss = c.epochLossSum;
    epochSteps = c.epochLossCount;
    if (start > total)
      die(o.resume + ": step " + std::to_string(start) + " is past the run's " +
          std::to_string(total) + " steps");
    if (start == total) {
      std::printf("%s: the run is complete (%lld steps); its results are in "
                  "the epochs.csv beside it\n",
                  o.resume.c_str(), (long long)total);
      return 0;
    }
    if (o.stopAt > 0 && o.stopAt <= start)
      die("--stop-at=" + std::to_string(o.stopAt) +
          " is not after the checkpoint's step " + std::to_string(start));
    if (epochSteps != start % stepsPerEpoch)
      die(o.resume + ": the checkpoint at step " + std::to_string(start) +
          " has the training losses of " + std::to_string(epochSteps) +
          " steps of its epoch, but " + std::to_string(start % stepsPerEpoch) +
          " steps of it are done");
  }
  // Where the logs before the checkpoint are: beside it.
  std::string resumeDir;
  if (!o.resume.empty()) {
    size_t slash = o.resume.find_last_of('/');
    resumeDir = slash == std::string::npos ? "." : o.resume.substr(0, slash);
  }

  std::string outDir = o.out;
  if (outDir.empty() && !o.resume.empty()) {
    // A resumed run continues in its checkpoint's folder.
    outDir = resumeDir;
  }
  if (outDir.empty()) {
    std::string name = scheduleText;
    std::replace(name.begin(), name.end(), ':', '-');
    outDir = "qtrain-runs/" + baseName(o.bundle) + "-" + name + "-seed" +
             std::to_string(o.seed);
  }
  makeDirectories(outDir);
  std::string checkpointPath = outDir + "/checkpoint.qck";
  // Logs of another run are never mixed in or overwritten by accident: a
  // new run needs an empty --out, a resumed one its own folder.
  auto sameFile = [](const std::string &a, const std::string &b) {
    struct stat sa, sb;
    return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 &&
           sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  };
  bool ownFolder = !o.resume.empty() && sameFile(o.resume, checkpointPath);
  if (!o.overwrite && !ownFolder)
    for (const char *name : {"checkpoint.qck", "steps.csv", "epochs.csv"})
      if (::access((outDir + "/" + name).c_str(), F_OK) == 0) {
        bool resumable = ::access(checkpointPath.c_str(), F_OK) == 0;
        die(outDir + " holds " +
            (o.resume.empty() ? "an earlier run" : "another run") + " (" +
            name + "); " +
            (resumable && o.resume.empty()
                 ? "continue it with --resume=" + checkpointPath + ", or "
                 : std::string()) +
            "pass --overwrite or another --out");
      }
  Logs logs(outDir);
  std::string logsWarning = logs.open(
      start, stepsPerEpoch, ownFolder || start == 0 ? outDir : resumeDir);
  if (!logsWarning.empty())
    std::fprintf(stderr, "qtrain-run: warning: %s\n", logsWarning.c_str());

  double macs = 0;
  for (const rt::SiteSpec &s : m.sites)
    macs += double(s.macs);
  int64_t values = 0;
  for (const rt::ParameterSpec &p : m.parameters)
    values += p.numel;
  std::printf("qtrain-run: %s: %lld parameter tensors (%lld values), batch "
              "%lld\n",
              o.bundle.c_str(), (long long)m.parameters.size(),
              (long long)values, (long long)batch);
  std::printf("  data %s: %lld training, %lld test samples; %lld steps per "
              "epoch, %lld epochs\n",
              data.dir.c_str(), (long long)data.train.count,
              (long long)data.test.count, (long long)stepsPerEpoch,
              (long long)o.epochs);
  std::printf("  schedule %s, backward %s; evaluation at %s; SGD lr %g "
              "momentum %g weight decay %g; seed %llu\n",
              scheduleText.c_str(), gradText.c_str(),
              learnedEval ? "each layer's learned bits"
              : evalBits == rt::kScheduleBits
                  ? "the current step's bits"
                  : precisionPhrase(evalBits).c_str(),
              double(o.lr), double(o.momentum), double(o.weightDecay),
              (unsigned long long)o.seed);
  if (start > 0)
    std::printf("  resumed from %s at step %lld\n", o.resume.c_str(),
                (long long)start);
  if (start > 0 && !ownFolder && logsWarning.empty())
    std::printf("  logs before step %lld copied from %s\n", (long long)start,
                resumeDir.c_str());
  std::printf("  logs and plots in %s\n", outDir.c_str());
  std::fflush(stdout);

  Progress progress(o.progress, stepsPerEpoch, o.epochs);
  std::vector<float> x(static_cast<size_t>(m.input.numel));
  std::vector<int64_t> labels(static_cast<size_t>(batch));
  std::vector<int64_t> order;
  // Step count and seconds per (forward bits, backward bits): the step's
  // bits, or under LDP each site's bits.
  std::map<std::pair<std::vector<int>, int>, std::pair<int64_t, double>>
      stepTimes;
  // --overflow-profile: per promotable tensor, the sum and max of its
  // overflow ratios over the steps.
  std::vector<double> overflowSum(trainer->getNumPromotable(), 0.0),
      overflowMax(trainer->getNumPromotable(), 0.0);
  int64_t profiledSteps = 0;
  EvalResult last;
  auto runStart = Clock::now();
  auto rateStart = runStart;
  int64_t rateSteps = 0;
  double rate = 0;
  // The end of a session: logs on disk, a checkpoint, the plots.
  auto finish = [&]() {
    progress.clear();
    logs.flush();
    if (rt::Status s = rt::saveCheckpoint(
            checkpointPath, rt::captureCheckpoint(*trainer, config.dump(),
                                                  epochLoss, epochSteps));
        s.failed())
      die(s.message());
    writePlots(outDir);
    if (trainer->isLearned())
      writeLdpPlots(
          outDir, m, schedule.minBits, schedule.maxBits,
          trainer->getStaticBitOps(schedule.maxBits,
                                   trainer->getGradBits(trainer->getStep())));
  };
  for (int64_t step = start; step < total; ++step) {
    int64_t epoch = step / stepsPerEpoch, pos = step % stepsPerEpoch;
    if (order.empty() || pos == 0 || step == start)
      order = rt::shuffleOrder(o.seed, epoch, data.train.count);
    fillBatch(data.train, order, pos, batch, o, x.data(), labels.data());
    float loss = 0;
    float lossScale = trainer->getLossScale();
    // The lambda this step's loss uses (a target cost moves it after).
    float lambda = trainer->getLdpLambda();
    auto t0 = Clock::now();
    if (rt::Status s = trainer->step(x.data(), labels.data(), loss); s.failed())
      die("step " + std::to_string(step) + ": " + s.message());
    if (!o.overflowProfile.empty()) {
      const std::vector<float> &ratios = trainer->getLastOverflowRatios();
      for (size_t k = 0; k < ratios.size() && k < overflowSum.size(); ++k) {
        overflowSum[k] += ratios[k];
        overflowMax[k] = std::max(overflowMax[k], double(ratios[k]));
      }
      ++profiledSteps;
    }
    for (const rt::Promotion &p : trainer->getLastPromotions()) {
      progress.clear();
      std::printf("step %lld: %s overflowed its low format in %.4g of its "
                  "elements; promoted to the high format\n",
                  (long long)step, p.name.c_str(), p.overflowRatio);
      std::fflush(stdout);
    }
    if (trainer->lastStepSkipped()) {
      progress.clear();
      std::printf("step %lld: a gradient overflowed at loss scale %g; step "
                  "skipped, loss scale now %g\n",
                  (long long)step, lossScale, trainer->getLossScale());
      std::fflush(stdout);
    }
    double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (!std::isfinite(loss)) {
      progress.clear();
      logs.flush();
      die("step " + std::to_string(step) + ": the loss is " +
          std::to_string(loss) +
          " (diverged; try a smaller --lr). Logs are "
          "in " +
          outDir);
    }
    int bits = trainer->getLastBits(), gradBits = trainer->getLastGradBits();
    std::vector<int> siteBits;
    if (trainer->isLearned())
      for (size_t i = 0; i < m.sites.size(); ++i)
        siteBits.push_back(trainer->getLastSiteBits(i));
    double meanBits = trainer->getLastMeanBits();
    auto &times = stepTimes[{
        siteBits.empty() ? std::vector<int>{bits} : siteBits, gradBits}];
    ++times.first;
    times.second += seconds;
    logs.step(step, epoch, loss, meanBits, gradBits, trainer->getLastBitOps(),
              trainer->getTotalBitOps(), seconds, lossScale,
              trainer->lastStepSkipped(), trainer->getLastPromotions(),
              siteBits, lambda);
    // A step of this run is logged: its output stays, whatever happens.
    createdOutputs.armed = false;
    epochLoss += loss;
    ++epochSteps;
    ++rateSteps;
    double elapsed =
        std::chrono::duration<double>(Clock::now() - rateStart).count();
    if (elapsed > 0)
      rate = double(rateSteps) / elapsed;
    progress.update(step, loss, forwardBitsName(bits, siteBits, meanBits),
                    gradBits, rate);

    if ((step + 1) % stepsPerEpoch == 0) {
      last = evaluate(*trainer, data.test, o, evalBits);
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
        last.bits = trainer->getBits(trainer->getStep());
      double wall =
          std::chrono::duration<double>(Clock::now() - runStart).count();
      logs.epoch(epoch, step + 1, epochLoss / double(epochSteps), last,
                 trainer->getTotalBitOps(), wall);
      progress.clear();
      std::printf("epoch %lld/%lld: train loss %.4f, test loss %.4f, test "
                  "accuracy %.2f%% (at %s), %s elapsed\n",
                  (long long)epoch + 1, (long long)o.epochs,
                  epochLoss / double(epochSteps), last.loss,
                  100.0 * last.accuracy, precisionPhrase(last.bits).c_str(),
                  hms(wall).c_str());
      std::fflush(stdout);
      epochLoss = 0;
      epochSteps = 0;
      // The rate excludes evaluation.
      rateStart = Clock::now();
      rateSteps = 0;
      // Dynamic loss scaling doubles the scale every epoch (PAPERS.md
      // section 4), up to 2^64.
      if (trainer->hasLossScale() && trainer->getLossScale() < 0x1p64f)
        (void)trainer->setLossScale(2.0f * trainer->getLossScale());
    }
    // After the epoch's evaluation, so that a checkpoint at an epoch's end
    // has that epoch's row in the logs.
    if (o.checkpointEvery > 0 && (step + 1) % o.checkpointEvery == 0 &&
        step + 1 < total) {
      logs.flush();
      if (rt::Status s = rt::saveCheckpoint(
              checkpointPath, rt::captureCheckpoint(*trainer, config.dump(),
                                                    epochLoss, epochSteps));
          s.failed())
        die(s.message());
    }
    if (o.stopAt > 0 && step + 1 == o.stopAt && step + 1 < total) {
      finish();
      std::printf(
          "stopped after step %lld of %lld; continue with --resume=%s\n",
          (long long)o.stopAt, (long long)total, checkpointPath.c_str());
      return 0;
    }
  }
  finish();

  double wall = std::chrono::duration<double>(Clock::now() - runStart).count();
  double totalBitOps = trainer->getTotalBitOps();
  double static8 = double(total) * rt::bitOps(macs, 8, 8);
  double fp32 = double(total) * rt::bitOps(macs, 0, 0);
  std::printf("\nfinal test accuracy: %.2f%% (at %s)\n", 100.0 * last.accuracy,
              precisionPhrase(last.bits).c_str());
  std::printf("wall time: %s (%.1f s) for %lld steps this session\n",
              hms(wall).c_str(), wall, (long long)(total - start));
  if (trainer->isLearned()) {
    // One row per bit assignment the steps ran with, the most used first.
    std::string names;
    for (size_t i = 0; i < m.sites.size() && i < kMaxListedSites; ++i)
      names += (i ? "," : "") + m.sites[i].name;
    std::printf("mean step time per bit assignment (forward bits of %s / "
                "backward):\n",
                m.sites.size() <= kMaxListedSites
                    ? names.c_str()
                    : "the sites: MACs-weighted mean [min-max]");
    std::vector<
        std::pair<std::pair<std::vector<int>, int>, std::pair<int64_t, double>>>
        rows(stepTimes.begin(), stepTimes.end());
    std::sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) {
      return a.second.first != b.second.first ? a.second.first > b.second.first
                                              : a.first < b.first;
    });
    constexpr size_t kMaxRows = 16;
    for (size_t r = 0; r < rows.size() && r < kMaxRows; ++r) {
      const std::vector<int> &sites = rows[r].first.first;
      double weighted = 0, macsSum = 0;
      for (size_t i = 0; i < sites.size(); ++i)
        if (m.sites[i].precisionParameter >= 0) {
          weighted += double(m.sites[i].macs) * sites[i];
          macsSum += double(m.sites[i].macs);
        }
      std::printf("  %s/%s: %.1f ms over %lld steps\n",
                  forwardBitsName(kLearnedBits, sites,
                                  macsSum > 0 ? weighted / macsSum : 0)
                      .c_str(),
                  precisionName(rows[r].first.second).c_str(),
                  1000.0 * rows[r].second.second / rows[r].second.first,
                  (long long)rows[r].second.first);
    }
    if (rows.size() > kMaxRows)
      std::printf("  ... and %zu more assignments\n", rows.size() - kMaxRows);
  } else {
    std::printf("mean step time per precision (forward/backward):\n");
    for (const auto &[p, v] : stepTimes)
      std::printf("  %s/%s: %.1f ms over %lld steps\n",
                  precisionName(p.first.front()).c_str(),
                  precisionName(p.second).c_str(), 1000.0 * v.second / v.first,
                  (long long)v.first);
  }
  if (fp32 > 0)
    std::printf("BitOps: %.4g in %lld steps = %.4f x static 8/8, %.5f x "
                "fp32\n",
                totalBitOps, (long long)total, totalBitOps / static8,
                totalBitOps / fp32);
  else
    std::printf("BitOps: not counted (the bundle has no kernel sites)\n");
  if (trainer->hasLossScale())
    std::printf("loss scale: %g now, %lld steps skipped this session\n",
                trainer->getLossScale(), (long long)trainer->getSkippedSteps());
  if (trainer->hasPromotion())
    std::printf("promoted to the high format: %zu of %zu low P/Y tensors\n",
                trainer->getNumPromoted(), trainer->getNumPromotable());
  if (trainer->getMaxStepPeakBytes() >= 0)
    std::printf("peak memory of the step's buffers: %.2f MiB (%lld bytes)\n",
                double(trainer->getMaxStepPeakBytes()) / (1024.0 * 1024.0),
                (long long)trainer->getMaxStepPeakBytes());
  if (!o.overflowProfile.empty()) {
    json tensors = json::array();
    std::vector<std::string> names = trainer->getPromotableNames();
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
  if (trainer->isLearned() && trainer->getStep() > start) {
    const std::vector<int> &bits = trainer->getLastSiteBits();
    std::printf("learned bits per layer now:");
    for (size_t i = 0; i < bits.size(); ++i)
      std::printf(" %s=%d", m.sites[i].name.c_str(), bits[i]);
    std::printf("; lambda %g\n", double(trainer->getLdpLambda()));
  }
  std::printf("checkpoint: %s\nlogs: %s/{steps,epochs}.{csv,jsonl}; plots: "
              "%s/{precision,loss,accuracy%s}.svg\n",
              checkpointPath.c_str(), outDir.c_str(), outDir.c_str(),
              trainer->isLearned() ? ",bits,cost,lambda" : "");
  return 0;
}
