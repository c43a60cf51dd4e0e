//===- Options.cpp - qtrain-run's command line ----------------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include "Fatal.h"

#include "qtrain/runtime/Batch.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace qtrain::run;

namespace {

const char *const kUsage = R"(usage: qtrain-run BUNDLE [options]

Trains a bundle made by qtrain-compile on an image classification dataset
and evaluates it on the test set after every epoch (docs/run.md).

data:
  --data=FORMAT             the dataset's format (default fashion-mnist):
      fashion-mnist           IDX files; the Debian package
                              dataset-fashion-mnist, or --data-dir
      mnist-format            IDX files in --data-dir
                              (train-images-idx3-ubyte[.gz], ...)
      cifar10                 CIFAR-10 binary version in --data-dir:
                              data_batch_1.bin .. data_batch_5.bin,
                              test_batch.bin
      cifar100                CIFAR-100 binary version in --data-dir:
                              train.bin, test.bin
      npy                     --data-dir holding train_x.npy, train_y.npy,
                              test_x.npy, test_y.npy: x is N x C x H x W
                              (or N x H x W) |u1 or <f4, y is |u1, <i4 or
                              <i8 labels
  --data-dir=DIR            the dataset's directory
  --cifar100-labels=fine|coarse  CIFAR-100's 100 fine (default) or 20
                            coarse classes
  --normalize=M0,M1,M2/S0,S1,S2|none   per-channel x = (v - mean) / std,
                            v = pixel / 255 for u8 data (default: CIFAR's
                            usual statistics, Fashion-MNIST's for IDX, none
                            for npy)
  --mean=F --std=F          one mean and std for every channel (default
                            for IDX: Fashion-MNIST's 0.2860, 0.3530)
  --augment=crop-flip|none  training batches: random crop with 4-pixel zero
                            padding and horizontal flip, seeded by --seed
                            (default crop-flip for cifar10/cifar100, none
                            otherwise)
  --shuffle=seeded|none|FILE.npy  the order training samples are visited
                            in: a permutation per epoch drawn from --seed
                            (default), the data's own order every epoch,
                            or the permutations of an integer .npy file
                            (one row of N indices, or one row per epoch,
                            repeating)
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
  --threads=N               threads of the compiled step (default 0: one
                            per core); results are the same at every count
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
data parallel (mpirun -np P qtrain-run ...; docs/scale-out.md):
  --allreduce=fp32|bf16|int8  how the ranks exchange gradients (default
                            fp32 under mpirun; in one process, giving it
                            runs the exchange path alone)
  --allreduce-bucket=N      elements per gradient bucket, int8's scale
                            granularity (default 4096)
  --check-every=N           check every N steps that all ranks hold the
                            same parameters (default 100; 0: only at the
                            end)
device:
  --device=cpu|cuda         where the step runs (default cpu); cuda needs a
                            bundle compiled with --target=cuda:sm_XY, an
                            NVIDIA GPU and its driver (docs/cuda.md)
  --cuda-gemm=auto|cublaslt|generated
                            the GPU step's products on cuBLASLt where it has
                            an algorithm, else the generated kernels (auto,
                            the default; cublaslt: cuBLASLt must load), or
                            on the generated kernels only
  --cuda-graphs=on|off      run each GPU step's launches as one CUDA graph,
                            captured once per precision combination (on,
                            the default) or launch its kernels one by one
range test:
  --range-test              CPT's precision range test: report Bmin, exit
  --range-test-steps=N      steps per precision (default 300)
  --range-test-window=N     steps averaged at each end (default 50)
  --range-test-threshold=F  accuracy gain that counts (default 0.10)
)";

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

} // namespace

Options qtrain::run::parseOptions(int argc, char **argv) {
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
    else if (flag == "--mean") {
      o.mean = float(parseFloat(flag, need()));
      o.meanGiven = true;
    } else if (flag == "--std") {
      o.std = float(parseFloat(flag, need()));
      o.stdGiven = true;
    } else if (flag == "--normalize")
      o.normalize = need();
    else if (flag == "--augment")
      o.augment = need();
    else if (flag == "--shuffle")
      o.shuffle = need();
    else if (flag == "--cifar100-labels")
      o.cifar100Labels = need();
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
      o.threads = parseInt(flag, need(), 0, 1024);
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
    else if (flag == "--allreduce") {
      o.allreduce = need();
      qtrain::rt::ExchangeMode mode;
      if (!qtrain::rt::parseExchangeMode(o.allreduce, mode))
        die("--allreduce: expected fp32, bf16 or int8, got '" + o.allreduce +
                "'",
            2);
    } else if (flag == "--allreduce-bucket")
      o.allreduceBucket = parseInt(flag, need(), 1, kMax);
    else if (flag == "--check-every")
      o.checkEvery = parseInt(flag, need(), 0, kMax);
    else if (flag == "--device")
      o.device = need();
    else if (flag == "--cuda-gemm")
      o.cudaGemm = need();
    else if (flag == "--cuda-graphs")
      o.cudaGraphs = need();
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
  if (o.progress != "auto" && o.progress != "bar" && o.progress != "lines" &&
      o.progress != "none")
    die("--progress: expected auto, bar, lines or none, got '" + o.progress +
            "'",
        2);
  if (o.evalBits != "max" && o.evalBits != "current")
    (void)parseInt("--eval-bits", o.evalBits, 0, 16);
  if (!(o.std > 0))
    die("--std must be positive", 2);
  if (o.data != "fashion-mnist" && o.data != "mnist-format" &&
      o.data != "cifar10" && o.data != "cifar100" && o.data != "npy")
    die("--data: unknown dataset format '" + o.data +
            "' (expected fashion-mnist, mnist-format, cifar10, cifar100 or "
            "npy)",
        2);
  if (o.data != "fashion-mnist" && o.dataDir.empty())
    die("--data=" + o.data + " needs --data-dir=DIR, the dataset's directory",
        2);
  // Fashion-MNIST's default for the other would be wrong for any other
  // dataset.
  if (o.data != "fashion-mnist" && o.data != "mnist-format" &&
      o.meanGiven != o.stdGiven)
    die("--data=" + o.data + ": give both --mean and --std (or --normalize)",
        2);
  if (!o.normalize.empty()) {
    if (o.meanGiven || o.stdGiven)
      die("--normalize and --mean/--std both set the normalization; give one",
          2);
    qtrain::rt::Normalization n;
    if (qtrain::rt::Status s = qtrain::rt::parseNormalization(o.normalize, n);
        s.failed())
      die("--normalize: " + s.message(), 2);
  }
  if (o.shuffle.empty())
    die("--shuffle: expected seeded, none or a .npy file", 2);
  if (!o.augment.empty() && o.augment != "crop-flip" && o.augment != "none")
    die("--augment: expected crop-flip or none, got '" + o.augment + "'", 2);
  if (o.cifar100Labels != "fine" && o.cifar100Labels != "coarse")
    die("--cifar100-labels: expected fine or coarse, got '" + o.cifar100Labels +
            "'",
        2);
  if (o.device != "cpu" && o.device != "cuda")
    die("--device: expected cpu or cuda, got '" + o.device + "'", 2);
  if (o.cudaGemm != "auto" && o.cudaGemm != "cublaslt" &&
      o.cudaGemm != "generated")
    die("--cuda-gemm: expected auto, cublaslt or generated, got '" +
            o.cudaGemm + "'",
        2);
  if (o.cudaGraphs != "on" && o.cudaGraphs != "off")
    die("--cuda-graphs: expected on or off, got '" + o.cudaGraphs + "'", 2);
  if (o.rangeWindow * 2 > o.rangeSteps)
    die("--range-test-window must be at most half of --range-test-steps", 2);
  return o;
}
