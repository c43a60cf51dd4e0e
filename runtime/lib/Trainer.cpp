//===- Trainer.cpp - Training a bundle: buffers, selection, steps --------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Trainer.h"

#include "qtrain/runtime/Cost.h"
#include "qtrain/runtime/Philox.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#if defined(__GLIBC__)
#include <malloc.h>
#include <sched.h>
#endif

using namespace qtrain::rt;

namespace {

/// Buffers are aligned for the widest vector loads compiled code may use.
constexpr size_t kBufferAlignment = 64;
/// The Philox "step" word of parameter init: the int32 ABI step counter
/// never reaches it, so init never shares a counter with training noise.
constexpr uint32_t kInitPhiloxStep = 0xFFFFFFFFu;
constexpr int64_t kMaxStep = std::numeric_limits<int32_t>::max();

std::string bitsName(int bits) {
  return bits == 0 ? "fp32" : std::to_string(bits);
}

std::string bitsPhrase(int bits) {
  return bits == 0 ? "fp32" : std::to_string(bits) + "-bit";
}

/// FNV-1a, 32 bits: the init stream id of a parameter name.
uint32_t initStreamId(std::string_view name) {
  uint32_t hash = 2166136261u;
  for (char c : name) {
    hash ^= uint8_t(c);
    hash *= 16777619u;
  }
  return hash;
}

Status parseOne(std::string_view text, const char *what, bool fromOptions,
                Schedule &out, ErrorKind *kind) {
  if (Status s = parseSchedule(text, out); s.failed())
    return failWith(
        kind, fromOptions ? ErrorKind::InvalidArgument : ErrorKind::Format,
        std::string(what) + ": " + s.message());
  if (out.kind == ScheduleKind::Learned && std::string_view(what) != "schedule")
    return failWith(kind, ErrorKind::Unsupported,
                    std::string(what) + " '" + std::string(text) +
                        "': backward precisions are not learned (LDP "
                        "learns the forward bits per layer)");
  return Status::success();
}

/// Most threads a step may be asked to use.
constexpr int kMaxThreads = 1024;

/// The cores this process may run on (its affinity mask, which a container
/// or taskset narrows), at least 1.
int availableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    return std::max(1, CPU_COUNT(&set));
  return 1;
}

} // namespace

Trainer::~Trainer() {
  for (std::vector<Buffer> &set : buffers)
    for (Buffer &b : set) {
      if (options.device)
        options.device->release(b.data);
      else
        std::free(b.data);
    }
}

/// A compiled step allocates its temporaries (activation-sized buffers) on
/// every call and frees them at the end. With glibc's defaults each one
/// above the mmap threshold is a fresh mapping whose pages fault in and are
/// zeroed on every step (a third of a small GEMM's time); serving them from
/// the heap and not trimming it reuses the same pages from step to step.
static void keepStepBuffersMapped() {
#if defined(__GLIBC__)
  static const bool once = [] {
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    return true;
  }();
  (void)once;
#endif
}

Status Trainer::create(std::shared_ptr<const Bundle> bundle,
                       const TrainerOptions &options,
                       std::unique_ptr<Trainer> &out, ErrorKind *kind) {
  keepStepBuffersMapped();
  if (!bundle)
    return failWith(kind, ErrorKind::InvalidArgument, "trainer: no bundle");
  const Manifest &m = bundle->getManifest();

  std::unique_ptr<Trainer> t(new Trainer());
  t->bundle = bundle;
  t->options = options;
  if (t->options.schedule.empty())
    t->options.schedule = m.schedule;
  if (t->options.gradSchedule.empty())
    t->options.gradSchedule = m.gradSchedule;
  const TrainerOptions &o = t->options;

  if (Status s = parseOne(o.schedule, "schedule", !options.schedule.empty(),
                          t->schedule, kind);
      s.failed())
    return s;
  if (Status s = parseOne(o.gradSchedule, "grad schedule",
                          !options.gradSchedule.empty(), t->gradSchedule, kind);
      s.failed())
    return s;
  if (o.totalSteps < 1 || o.totalSteps > kMaxStep)
    return failWith(kind, ErrorKind::InvalidArgument,
                    "total steps must be in [1, 2^31 - 1], got " +
                        std::to_string(o.totalSteps));
  std::pair<const Schedule *, const std::string *> schedules[] = {
      {&t->schedule, &o.schedule}, {&t->gradSchedule, &o.gradSchedule}};
  for (auto [parsed, text] : schedules)
    if (Status s = verifySchedule(*parsed, o.totalSteps); s.failed())
      return failWith(kind, ErrorKind::InvalidArgument,
                      "schedule '" + *text + "' over " +
                          std::to_string(o.totalSteps) +
                          " steps: " + s.message());
  std::pair<const char *, float> hyper[] = {{"learning rate", o.learningRate},
                                            {"momentum", o.momentum},
                                            {"weight decay", o.weightDecay}};
  for (auto [name, value] : hyper)
    if (!std::isfinite(value))
      return failWith(kind, ErrorKind::InvalidArgument,
                      std::string(name) + " must be finite");
  if (!std::isnan(o.ldpLambda) &&
      !(std::isfinite(o.ldpLambda) && o.ldpLambda >= 0.0f))
    return failWith(kind, ErrorKind::InvalidArgument,
                    "LDP lambda must be finite and non-negative");
  if (!(o.ldpTargetCost >= 0.0 && o.ldpTargetCost <= 1.0) ||
      !(std::isfinite(o.ldpLambdaRate) && o.ldpLambdaRate > 0.0))
    return failWith(kind, ErrorKind::InvalidArgument,
                    "LDP target cost must be in (0, 1] (0: off) and the "
                    "lambda rate positive");
  if (!(o.promotionThreshold > 0.0))
    return failWith(kind, ErrorKind::InvalidArgument,
                    "promotion threshold must be positive (above 1 never "
                    "promotes)");
  if (int exponent; !(o.initialLossScale >= 1.0f) ||
                    !std::isfinite(o.initialLossScale) ||
                    std::frexp(o.initialLossScale, &exponent) != 0.5f)
    return failWith(kind, ErrorKind::InvalidArgument,
                    "initial loss scale " + std::to_string(o.initialLossScale) +
                        " is not a power of two of at least 1");

  if (o.maxStepMemory < 0)
    return failWith(kind, ErrorKind::InvalidArgument,
                    "step memory limit must not be negative");
  if (o.threads < 0 || o.threads > kMaxThreads)
    return failWith(kind, ErrorKind::InvalidArgument,
                    "threads must be in [0, " + std::to_string(kMaxThreads) +
                        "] (0: one per core), got " +
                        std::to_string(o.threads));
  t->threads = o.threads > 0 ? o.threads : availableCores();
  if (o.communicator && o.exchange.bucketElements < 1)
    return failWith(kind, ErrorKind::InvalidArgument,
                    "gradient buckets must hold at least one element, got " +
                        std::to_string(o.exchange.bucketElements));
  if (o.maxStepMemory > 0 && !bundle->hasStepMemoryControl())
    return failWith(kind, ErrorKind::InvalidArgument,
                    bundle->getDirectory() +
                        ": the library has no step memory limit");

  if (Status s = validateSchedule(m, t->schedule, o.schedule, t->gradSchedule,
                                  o.gradSchedule, kind);
      s.failed())
    return s;
  if (Status s = t->initialize(kind); s.failed())
    return s;
  if (o.maxStepMemory > 0)
    if (Status s = bundle->setStepMemoryLimit(o.maxStepMemory, kind);
        s.failed())
      return s;
  out = std::move(t);
  return succeed(kind);
}

Status Trainer::initialize(ErrorKind *kind) {
  const Manifest &m = bundle->getManifest();
  numParameters = m.parameters.size();
  numState = m.state.size();
  numSites = m.sites.size();

  learned = schedule.kind == ScheduleKind::Learned;
  selection = Selection(m.sites, /*perSite=*/learned);
  lastSiteBits.assign(numSites, -1);
  slots.assign(std::max<size_t>(numSites, 1), 0);
  evalSlots.assign(std::max<size_t>(numSites, 1), 0);

  // Buffers: parameters, momentum, state; two sets.
  std::vector<const TensorSpec *> specs;
  for (const ParameterSpec &p : m.parameters)
    specs.push_back(&p);
  for (const ParameterSpec &p : m.parameters)
    specs.push_back(&p);
  for (const StateSpec &s : m.state)
    specs.push_back(&s);
  for (std::vector<Buffer> &set : buffers) {
    for (const TensorSpec *spec : specs) {
      size_t bytes = size_t(spec->numel) * sizeof(float);
      bytes =
          (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
      Buffer b;
      b.data = static_cast<float *>(
          options.device ? options.device->allocate(bytes)
                         : std::aligned_alloc(kBufferAlignment, bytes));
      if (!b.data)
        return failWith(kind, ErrorKind::OutOfMemory,
                        "out of memory allocating " + std::to_string(bytes) +
                            " bytes for '" + spec->name + "'");
      b.count = size_t(spec->numel);
      std::memset(b.data, 0, bytes);
      set.push_back(b);
    }
  }

  // The dynamic loss scale starts at its initial value in both sets;
  // promotion flags and overflow ratios come in pairs of one size.
  for (size_t i = 0; i < numState; ++i) {
    if (m.state[i].kind == "promotion")
      promotionState = int64_t(i);
    if (m.state[i].kind == "overflow")
      overflowState = int64_t(i);
  }
  if ((promotionState < 0) != (overflowState < 0) ||
      (promotionState >= 0 && m.state[size_t(promotionState)].numel !=
                                  m.state[size_t(overflowState)].numel))
    return failWith(kind, ErrorKind::InvalidArgument,
                    "the bundle's \"promotion\" and \"overflow\" state "
                    "tensors must come together, with one element per "
                    "promotable tensor each");
  // State with initial values in the manifest (LDP's lambda) starts there.
  for (size_t i = 0; i < numState; ++i)
    if (!m.state[i].init.empty())
      for (std::vector<Buffer> &set : buffers)
        std::copy(m.state[i].init.begin(), m.state[i].init.end(),
                  set[2 * numParameters + i].data);
  // Scalar state the runtime owns: finds it, checks its size and, unless
  // `value` is NaN, starts it there in both sets.
  auto scalarState = [&](const char *stateKind, const char *what, float value,
                         int64_t &index) {
    for (size_t i = 0; i < numState; ++i) {
      if (m.state[i].kind != stateKind)
        continue;
      if (m.state[i].numel != 1)
        return failWith(kind, ErrorKind::InvalidArgument,
                        "state '" + m.state[i].name + "': " + what +
                            " has one element, not " +
                            std::to_string(m.state[i].numel));
      index = int64_t(i);
      if (!std::isnan(value))
        for (std::vector<Buffer> &set : buffers)
          set[2 * numParameters + i].data[0] = value;
    }
    return Status::success();
  };
  if (Status s = scalarState("ldp_lambda", "LDP's lambda", options.ldpLambda,
                             lambdaState);
      s.failed())
    return s;
  if (lambdaState >= 0) {
    float lambda =
        buffers[current][2 * numParameters + size_t(lambdaState)].data[0];
    if (!(std::isfinite(lambda) && lambda >= 0.0f))
      return failWith(kind, ErrorKind::InvalidArgument,
                      "the bundle's LDP lambda " + std::to_string(lambda) +
                          " is not finite and non-negative");
  }
  if ((options.ldpTargetCost > 0 || !std::isnan(options.ldpLambda)) &&
      lambdaState < 0)
    return failWith(kind, ErrorKind::InvalidArgument,
                    "--ldp-lambda and --ldp-target-cost need an LDP bundle "
                    "(an \"ldp_lambda\" state; compile with --policy=ldp)");
  if (Status s = scalarState("loss_scale", "a loss scale",
                             options.initialLossScale, lossScaleState);
      s.failed())
    return s;

  // Parameter init into the current set (momentum and other state stay
  // zero).
  for (size_t i = 0; i < numParameters; ++i) {
    const ParameterSpec &p = m.parameters[i];
    float *data = buffers[current][i].data;
    switch (p.init.kind) {
    case InitKind::KaimingUniform:
    case InitKind::BiasUniform: {
      float bound = float(1.0 / std::sqrt(double(p.init.fanIn)));
      PhiloxStream stream(options.seed, initStreamId(p.name), kInitPhiloxStep);
      stream.fillNoise(0, data, size_t(p.numel));
      for (int64_t e = 0; e < p.numel; ++e)
        data[e] = (2.0f * data[e]) * bound;
      break;
    }
    case InitKind::Zeros:
      break;
    case InitKind::Ones:
      std::fill(data, data + p.numel, 1.0f);
      break;
    case InitKind::Normal: {
      // Box-Muller on two uniform draws per element (words 2e and 2e+1):
      // u1 = 0.5 - noise in (0, 1], u2 = noise + 0.5 in [0, 1).
      PhiloxStream stream(options.seed, initStreamId(p.name), kInitPhiloxStep);
      std::vector<float> noise(2 * size_t(p.numel));
      stream.fillNoise(0, noise.data(), noise.size());
      constexpr double kTwoPi = 6.283185307179586;
      for (int64_t e = 0; e < p.numel; ++e) {
        double u1 = 0.5 - double(noise[2 * e]);
        double u2 = double(noise[2 * e + 1]) + 0.5;
        data[e] = float(std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2));
      }
      break;
    }
    case InitKind::File:
      std::memcpy(data, bundle->getFileInit(i).data(),
                  size_t(p.numel) * sizeof(float));
      break;
    }
  }

  // The packed argument arrays (docs/bundle.md, "The step ABI").
  seedArg = int64_t(options.seed);
  learningRateArg = options.learningRate;
  momentumArg = options.momentum;
  weightDecayArg = options.weightDecay;
  if (options.communicator) {
    // The compiled step computes this rank's gradient (new momentum =
    // 0 * buf + (grad + 0 * p)) and leaves the update to exchangeAndUpdate.
    learningRateArg = momentumArg = weightDecayArg = 0.0f;
    std::vector<size_t> sizes;
    for (size_t k = numParameters; k-- > 0;)
      sizes.push_back(size_t(m.parameters[k].numel));
    exchange = std::make_unique<GradientExchange>(
        *options.communicator, options.exchange, sizes, options.seed);
    // LDP's learnable precisions take no weight decay (Autodiff.cpp).
    decays.assign(numParameters, true);
    for (const SiteSpec &site : m.sites)
      if (site.precisionParameter >= 0)
        decays[size_t(site.precisionParameter)] = false;
    // The state the runtime sets itself is the same on every rank.
    size_t values = 1;
    for (size_t i = 0; i < numState; ++i) {
      const std::string &k = m.state[i].kind;
      if (k == "loss_scale" || k == "ldp_lambda" || k == "promotion")
        continue;
      averagedState.push_back(i);
      values += size_t(m.state[i].numel);
    }
    shared.assign(values, 0.0f);
  }
  for (int parity = 0; parity < 2; ++parity) {
    std::vector<Buffer> &in = buffers[parity], &outs = buffers[1 - parity];
    std::vector<void *> &a = trainArgs[parity];
    for (size_t i = 0; i < 2 * numParameters; ++i)
      a.push_back(in[i].data);
    trainInputIndex = a.size();
    a.push_back(nullptr);
    a.push_back(&bitsArg);
    a.push_back(&gradBitsArg);
    a.push_back(&seedArg);
    a.push_back(&stepArg);
    for (size_t i = 0; i < numState; ++i)
      a.push_back(in[2 * numParameters + i].data);
    a.push_back(slots.data());
    trainLabelsIndex = a.size();
    a.push_back(nullptr);
    a.push_back(&learningRateArg);
    a.push_back(&momentumArg);
    a.push_back(&weightDecayArg);
    for (Buffer &b : outs)
      a.push_back(b.data);
    a.push_back(&lossArg);

    std::vector<void *> &e = evalArgs[parity];
    for (size_t i = 0; i < numParameters; ++i)
      e.push_back(in[i].data);
    evalInputIndex = e.size();
    e.push_back(nullptr);
    e.push_back(&evalBitsArg);
    e.push_back(&evalGradBitsArg);
    e.push_back(&seedArg);
    e.push_back(&evalStepArg);
    for (size_t i = 0; i < numState; ++i)
      e.push_back(in[2 * numParameters + i].data);
    e.push_back(evalSlots.data());
    evalLogitsIndex = e.size();
    e.push_back(nullptr);
  }
  return Status::success();
}

Status Trainer::selectVariants(int64_t step, ErrorKind *kind) {
  if (step < 0 || step > kMaxStep)
    return failWith(kind, ErrorKind::InvalidArgument,
                    "step " + std::to_string(step) +
                        " is outside the ABI's int32 step range");
  if (learned)
    return selectLearnedVariants(step, kind);
  int bits = scheduleBits(schedule, step, options.totalSteps);
  int gradBits = scheduleBits(gradSchedule, step, options.totalSteps);
  int32_t row = selection.findRow(bits, gradBits);
  if (row < 0) // validateSchedule() makes this unreachable.
    return failWith(kind, ErrorKind::MissingVariant,
                    "step " + std::to_string(step) + ": no variant row for " +
                        bitsName(bits) + "/" + bitsName(gradBits));
  selection.copyRow(row, slots.data());
  bitsArg = bits;
  gradBitsArg = gradBits;
  stepArg = int32_t(step);
  selectedRow = row;
  return succeed(kind);
}

Status Trainer::selectLearnedVariants(int64_t step, ErrorKind *kind) {
  const Manifest &m = bundle->getManifest();
  int gradBits = scheduleBits(gradSchedule, step, options.totalSteps);
  double sum = 0;
  for (size_t i = 0; i < numSites; ++i) {
    const SiteSpec &site = m.sites[i];
    if (site.precisionParameter < 0) {
      // A placeholder site nothing reads (a layer kept in fp32).
      slots[i] = 0;
      lastSiteBits[i] = 0;
      continue;
    }
    float p = buffers[current][size_t(site.precisionParameter)].data[0];
    int bits = ldpBits(p, schedule.minBits, schedule.maxBits);
    int32_t index = selection.getSiteVariant(i, bits, gradBits);
    if (index < 0) // validateSchedule() makes this unreachable.
      return failWith(kind, ErrorKind::MissingVariant,
                      "step " + std::to_string(step) + ": site '" + site.name +
                          "' has no " + bitsName(bits) + "/" +
                          bitsName(gradBits) + " variant");
    slots[i] = index;
    lastSiteBits[i] = bits;
    sum += bitOps(double(site.macs), bits, gradBits);
  }
  // The step computes every layer's bits itself; the control is unused.
  bitsArg = schedule.maxBits;
  gradBitsArg = gradBits;
  stepArg = int32_t(step);
  selectedRow = -1;
  selectedBitOps = sum;
  return succeed(kind);
}

double Trainer::getStaticBitOps(int bits, int gradBits) const {
  double sum = 0;
  for (const SiteSpec &site : bundle->getManifest().sites)
    sum += bitOps(double(site.macs), bits, gradBits);
  return sum;
}

int Trainer::getLastSiteBits(size_t index) const {
  if (index >= numSites)
    return -1;
  if (!learned)
    return lastBits;
  return index < stepSiteBits.size() ? stepSiteBits[index] : -1;
}

float Trainer::getLdpLambda() const {
  return lambdaState < 0
             ? 0.0f
             : buffers[current][2 * numParameters + size_t(lambdaState)]
                   .data[0];
}

Status Trainer::checkInput(const char *function, DType dtype,
                           const int64_t *ids, ErrorKind *kind) const {
  const Manifest &m = bundle->getManifest();
  if (m.input.dtype != dtype)
    return failWith(kind, ErrorKind::InvalidArgument,
                    std::string(function) + ": the bundle's input is " +
                        std::string(toString(m.input.dtype)) +
                        (m.input.dtype == DType::I64 ? " (token ids)" : "") +
                        ", not " + std::string(toString(dtype)));
  if (!ids)
    return succeed(kind);
  // The step reads its tables at these rows: an id past them would read
  // outside the table.
  for (int64_t i = 0; i < m.input.numel; ++i) {
    std::string at = std::string(function) + ": x[" + std::to_string(i) +
                     "] = " + std::to_string(ids[i]);
    if (ids[i] < 0)
      return failWith(kind, ErrorKind::InvalidArgument,
                      at + " is negative (token ids are table rows from 0)");
    if (m.inputMaxValue >= 0 && ids[i] > m.inputMaxValue)
      return failWith(kind, ErrorKind::InvalidArgument,
                      at + " is outside [0, " +
                          std::to_string(m.inputMaxValue) +
                          "] (the token ids the bundle's tables have)");
  }
  return succeed(kind);
}

Status Trainer::step(const float *x, const int64_t *labels, float &loss,
                     ErrorKind *kind) {
  if (!x || !labels)
    return failWith(kind, ErrorKind::InvalidArgument,
                    std::string("step: ") + (x ? "labels" : "x") + " is null");
  if (Status s = checkInput("step", DType::F32, nullptr, kind); s.failed())
    return s;
  return runTrain(x, labels, loss, kind);
}

Status Trainer::step(const int64_t *x, const int64_t *labels, float &loss,
                     ErrorKind *kind) {
  if (!x || !labels)
    return failWith(kind, ErrorKind::InvalidArgument,
                    std::string("step: ") + (x ? "labels" : "x") + " is null");
  if (Status s = checkInput("step", DType::I64, x, kind); s.failed())
    return s;
  return runTrain(x, labels, loss, kind);
}

size_t Trainer::inputBytes() const {
  const TensorSpec &input = bundle->getManifest().input;
  return size_t(input.numel) *
         (input.dtype == DType::I64 ? sizeof(int64_t) : sizeof(float));
}

Status Trainer::runTrain(const void *x, const int64_t *labels, float &loss,
                         ErrorKind *kind) {
  const Manifest &m = bundle->getManifest();
  for (int64_t i = 0; i < m.labels.numel; ++i)
    if (labels[i] < 0 || labels[i] >= m.classes)
      return failWith(kind, ErrorKind::InvalidArgument,
                      "step: labels[" + std::to_string(i) +
                          "] = " + std::to_string(labels[i]) +
                          " is outside [0, " + std::to_string(m.classes) + ")");
  if (Status s = selectVariants(stepIndex, kind); s.failed())
    return s;

  std::vector<void *> &args = trainArgs[current];
  args[trainInputIndex] = const_cast<void *>(x);
  args[trainLabelsIndex] = const_cast<int64_t *>(labels);
  lossArg = 0;
  // The CPU library's allocator: a device holds the step's buffers itself.
  Bundle::MemoryStatsFunction stats =
      options.device ? nullptr : bundle->getMemoryStats();
  int64_t before = 0;
  if (stats) {
    bundle->getMemoryResetPeak()();
    stats(&before, nullptr);
  }
  if (Status s =
          options.device
              ? options.device->run(
                    /*train=*/true, args.data(), trainInputIndex, inputBytes(),
                    trainLabelsIndex, size_t(m.batch) * sizeof(int64_t), kind)
              : bundle->runStep(bundle->getTrainStep(), args.data(), threads,
                                kind);
      s.failed())
    return s;
  loss = lossArg;
  if (exchange)
    if (Status s = exchangeAndUpdate(loss, kind); s.failed())
      return s;
  if (stats) {
    int64_t peak = 0;
    stats(nullptr, &peak);
    lastPeakBytes = peak - before;
    maxPeakBytes = std::max(maxPeakBytes, lastPeakBytes);
  }

  // A gradient that is not finite leaves inf or NaN in the new parameters
  // or momentum. With loss scaling (a scaled gradient overflowed), keep the
  // current buffers and halve the scale. Without it, nothing can recover the
  // step: fail it and keep the current buffers, so that no later step or
  // checkpoint ever holds the non-finite values.
  lastSkipped = false;
  const std::vector<Buffer> &next = buffers[1 - current];
  // A device checks its buffers where they live (on a GPU, reading them on
  // the host would move every page); the host reads them only to say where
  // a non-finite value is.
  bool deviceChecked = false, deviceFinite = true;
  if (options.device) {
    std::vector<const float *> data;
    std::vector<size_t> counts;
    for (size_t i = 0; i < 2 * numParameters; ++i) {
      data.push_back(next[i].data);
      counts.push_back(next[i].count);
    }
    if (Status s =
            options.device->checkFinite(data.data(), counts.data(), data.size(),
                                        deviceFinite, deviceChecked);
        s.failed())
      return failWith(kind, ErrorKind::Unsupported, s.message());
  }
  for (size_t i = 0; !lastSkipped && !(deviceChecked && deviceFinite) &&
                     i < 2 * numParameters;
       ++i)
    for (size_t e = 0; e < next[i].count; ++e)
      if (!std::isfinite(next[i].data[e])) {
        if (lossScaleState < 0) {
          // The Trainer stays as it was before the step.
          const std::string &name = m.parameters[i % numParameters].name;
          std::string what = i < numParameters ? "parameter " + name
                                               : "the momentum of " + name;
          return failWith(
              kind, ErrorKind::Diverged,
              (std::isfinite(loss)
                   ? std::string()
                   : "the loss is " + std::to_string(loss) + " and ") +
                  "the gradients are not finite: the update of " + what +
                  " has " +
                  (std::isnan(next[i].data[e]) ? "NaN" : "an infinity") +
                  " at element " + std::to_string(e) +
                  "; training diverged, the parameters stay as they were "
                  "before this step (try a smaller learning rate)");
        }
        lastSkipped = true;
        break;
      }
  if (deviceChecked && !deviceFinite && !lastSkipped) {
    // The device saw a value the host does not: trust the device, keep the
    // current buffers.
    if (lossScaleState < 0)
      return failWith(kind, ErrorKind::Diverged,
                      "the gradients are not finite (found on the device): "
                      "training diverged, the parameters stay as they were "
                      "before this step (try a smaller learning rate)");
    lastSkipped = true;
  }
  // Promotion: a low tensor whose overflow ratio reached the threshold
  // switches to its high format from the next step on.
  lastPromotions.clear();
  if (promotionState >= 0) {
    const float *ratios =
        buffers[1 - current][2 * numParameters + size_t(overflowState)].data;
    const StateSpec &spec = m.state[size_t(promotionState)];
    lastOverflowRatios.assign(ratios, ratios + spec.numel);
    // Flags are set in both sets at once, so the current set has them all.
    size_t flags = 2 * numParameters + size_t(promotionState);
    for (size_t k = 0; k < size_t(spec.numel); ++k) {
      if (buffers[current][flags].data[k] != 0.0f ||
          !(double(ratios[k]) >= options.promotionThreshold))
        continue;
      for (int parity = 0; parity < 2; ++parity)
        buffers[parity][flags].data[k] = 1.0f;
      lastPromotions.push_back({k, promotableName(k), double(ratios[k])});
    }
  }
  if (lastSkipped) {
    ++skippedSteps;
    float &scale = buffers[current][2 * numParameters + lossScaleState].data[0];
    // A gradient that overflows at scale 1 overflows without scaling:
    // halving cannot help, the run diverged. The buffers stay as they were.
    if (scale <= 1.0f) {
      ++stepIndex;
      return failWith(kind, ErrorKind::Diverged,
                      "the gradients are not finite even at loss scale 1: "
                      "training diverged (try a smaller learning rate)");
    }
    scale *= 0.5f;
  } else {
    current = 1 - current;
  }
  ++stepIndex;
  lastBits = learned ? -1 : bitsArg;
  lastGradBits = gradBitsArg;
  lastMeanBits = bitsArg;
  if (learned) {
    // Kept apart from lastSiteBits, which an eval at the learned bits
    // reselects.
    stepSiteBits = lastSiteBits;
    double weighted = 0, macs = 0, sum = 0;
    int64_t sites = 0;
    for (size_t i = 0; i < numSites; ++i) {
      const SiteSpec &site = m.sites[i];
      if (site.precisionParameter < 0)
        continue;
      weighted += double(site.macs) * lastSiteBits[i];
      macs += double(site.macs);
      sum += lastSiteBits[i];
      ++sites;
    }
    lastMeanBits = macs > 0 ? weighted / macs : sites ? sum / double(sites) : 0;
  }
  lastBitOps = learned ? selectedBitOps : selection.getRowBitOps(selectedRow);
  totalBitOps += lastBitOps;
  // A target cost steers lambda (dual ascent on cost <= target): it grows
  // while the step's BitOps exceed the target share of static max/grad
  // bits, and shrinks, down to 0, while they are below it.
  if (lambdaState >= 0 && options.ldpTargetCost > 0 && !lastSkipped) {
    double ratio = lastBitOps / getStaticBitOps(schedule.maxBits, lastGradBits);
    float &lambda =
        buffers[current][2 * numParameters + size_t(lambdaState)].data[0];
    lambda = float(
        std::max(0.0, double(lambda) + options.ldpLambdaRate *
                                           (ratio - options.ldpTargetCost)));
  }
  return succeed(kind);
}

Status Trainer::exchangeAndUpdate(float &loss, ErrorKind *kind) {
  auto start = std::chrono::steady_clock::now();
  std::vector<Buffer> &now = buffers[current], &next = buffers[1 - current];
  float *gradients = exchange->getData();
  for (size_t i = 0; i < numParameters; ++i)
    std::memcpy(gradients + exchange->getOffset(numParameters - 1 - i),
                next[numParameters + i].data, next[i].count * sizeof(float));
  Communicator &ranks = *options.communicator;
  auto failed = [&](const Status &s) {
    return failWith(
        kind, ErrorKind::Io,
        "step " + std::to_string(stepIndex) +
            ": the exchange with the other ranks failed: " + s.message());
  };
  if (Status s = exchange->average(uint32_t(stepIndex)); s.failed())
    return failed(s);

  // The loss and the state the step updated: their mean over the ranks.
  size_t at = 0;
  shared[at++] = loss;
  for (size_t i : averagedState) {
    const Buffer &b = next[2 * numParameters + i];
    std::copy(b.data, b.data + b.count, shared.begin() + ptrdiff_t(at));
    at += b.count;
  }
  if (Status s = ranks.allReduce(shared.data(), shared.size(), CommType::F32,
                                 CommOp::Sum);
      s.failed())
    return failed(s);
  float count = float(ranks.getSize());
  for (float &v : shared)
    v /= count;
  lastExchangeSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  totalExchangeSeconds += lastExchangeSeconds;
  at = 0;
  loss = shared[at++];
  for (size_t i : averagedState) {
    Buffer &b = next[2 * numParameters + i];
    std::copy(shared.begin() + ptrdiff_t(at),
              shared.begin() + ptrdiff_t(at + b.count), b.data);
    at += b.count;
  }

  // The compiled step's update (TrainingStep.cpp, buildSgdUpdate), in the
  // same operations and order: g = grad + wd * p; buf = momentum * buf + g;
  // p = p - lr * buf.
  const float lr = options.learningRate, momentum = options.momentum;
  for (size_t i = 0; i < numParameters; ++i) {
    const float wd = decays[i] ? options.weightDecay : 0.0f;
    const float *g = gradients + exchange->getOffset(numParameters - 1 - i);
    const float *p = now[i].data, *buf = now[numParameters + i].data;
    float *newP = next[i].data, *newBuf = next[numParameters + i].data;
    for (size_t e = 0, n = now[i].count; e < n; ++e) {
      float decayed = wd * p[e];
      float full = g[e] + decayed;
      float kept = momentum * buf[e];
      float updated = kept + full;
      float delta = lr * updated;
      newBuf[e] = updated;
      newP[e] = p[e] - delta;
    }
  }
  return succeed(kind);
}

Status Trainer::eval(const float *x, float *logits, int bits, ErrorKind *kind) {
  if (!x || !logits)
    return failWith(kind, ErrorKind::InvalidArgument,
                    std::string("eval: ") + (x ? "logits" : "x") + " is null");
  if (Status s = checkInput("eval", DType::F32, nullptr, kind); s.failed())
    return s;
  return selectEval(x, logits, bits, kind);
}

Status Trainer::eval(const int64_t *x, float *logits, int bits,
                     ErrorKind *kind) {
  if (!x || !logits)
    return failWith(kind, ErrorKind::InvalidArgument,
                    std::string("eval: ") + (x ? "logits" : "x") + " is null");
  if (Status s = checkInput("eval", DType::I64, x, kind); s.failed())
    return s;
  return selectEval(x, logits, bits, kind);
}

Status Trainer::selectEval(const void *x, float *logits, int bits,
                           ErrorKind *kind) {
  if (stepIndex > kMaxStep)
    return failWith(kind, ErrorKind::InvalidArgument,
                    "eval: step " + std::to_string(stepIndex) +
                        " is outside the ABI's int32 step range");
  if (bits == kScheduleBits && learned) {
    // Each site at its learned bits, as the next training step would run.
    if (Status s = selectLearnedVariants(stepIndex, kind); s.failed())
      return s;
    std::memcpy(evalSlots.data(), slots.data(), numSites * sizeof(int32_t));
    return runEval(x, logits, schedule.maxBits, gradBitsArg, kind);
  }
  if (bits == kScheduleBits)
    bits = scheduleBits(schedule, stepIndex, options.totalSteps);
  if (bits < 0 || bits > kMaxScheduleBits)
    return failWith(kind, ErrorKind::InvalidArgument,
                    "eval: bits must be in [0, " +
                        std::to_string(kMaxScheduleBits) + "] or " +
                        std::to_string(kScheduleBits) + ", got " +
                        std::to_string(bits));
  int gradBits = scheduleBits(gradSchedule, stepIndex, options.totalSteps);
  const Manifest &m = bundle->getManifest();
  int32_t row = selection.findRow(bits, gradBits);
  if (row >= 0) {
    selection.copyRow(row, evalSlots.data());
  } else {
    for (size_t i = 0; i < numSites; ++i) {
      const SiteSpec &site = m.sites[i];
      int32_t index = findVariant(site, bits, gradBits);
      for (size_t j = 0; index < 0 && j < site.variants.size(); ++j)
        if (site.variants[j].bits == bits)
          index = int32_t(j);
      if (index < 0)
        return failWith(kind, ErrorKind::MissingVariant,
                        "eval at " + bitsPhrase(bits) + " forward: site '" +
                            site.name + "' has no " + bitsPhrase(bits) +
                            " variant (it has " + listVariants(site) + ")");
      evalSlots[i] = index;
    }
  }
  return runEval(x, logits, bits, gradBits, kind);
}

Status Trainer::runEval(const void *x, float *logits, int bits, int gradBits,
                        ErrorKind *kind) {
  evalBitsArg = bits;
  evalGradBitsArg = gradBits;
  evalStepArg = int32_t(stepIndex);
  std::vector<void *> &args = evalArgs[current];
  args[evalInputIndex] = const_cast<void *>(x);
  args[evalLogitsIndex] = logits;
  const Manifest &m = bundle->getManifest();
  if (Status s = options.device
                     ? options.device->run(
                           /*train=*/false, args.data(), evalInputIndex,
                           inputBytes(), evalLogitsIndex,
                           size_t(m.batch * m.classes) * sizeof(float), kind)
                     : bundle->runStep(bundle->getEvalStep(), args.data(),
                                       threads, kind);
      s.failed())
    return Status::error("evaluation: " + s.message());
  return succeed(kind);
}

int Trainer::getBits(int64_t step) const {
  return scheduleBits(schedule, step, options.totalSteps);
}

int Trainer::getGradBits(int64_t step) const {
  return scheduleBits(gradSchedule, step, options.totalSteps);
}

size_t Trainer::getNumParameters() const { return numParameters; }

const ParameterSpec &Trainer::getParameterSpec(size_t index) const {
  return bundle->getManifest().parameters[index];
}

const float *Trainer::getParameterData(size_t index) const {
  return buffers[current][index].data;
}

int64_t Trainer::findParameter(std::string_view name) const {
  const Manifest &m = bundle->getManifest();
  for (size_t i = 0; i < m.parameters.size(); ++i)
    if (m.parameters[i].name == name)
      return int64_t(i);
  return -1;
}

size_t Trainer::getNumState() const { return numState; }

std::string Trainer::promotableName(size_t k) const {
  const StateSpec &spec = bundle->getManifest().state[size_t(promotionState)];
  return k < spec.tensors.size() ? spec.tensors[k]
                                 : "tensor " + std::to_string(k);
}

std::vector<std::string> Trainer::getPromotableNames() const {
  std::vector<std::string> names;
  for (size_t k = 0; k < getNumPromotable(); ++k)
    names.push_back(promotableName(k));
  return names;
}

size_t Trainer::getNumPromotable() const {
  if (promotionState < 0)
    return 0;
  return size_t(bundle->getManifest().state[size_t(promotionState)].numel);
}

size_t Trainer::getNumPromoted() const {
  if (promotionState < 0)
    return 0;
  const Buffer &flags =
      buffers[current][2 * numParameters + size_t(promotionState)];
  return size_t(std::count_if(flags.data, flags.data + flags.count,
                              [](float f) { return f != 0.0f; }));
}

float Trainer::getLossScale() const {
  if (lossScaleState < 0)
    return 1.0f;
  return buffers[current][2 * numParameters + lossScaleState].data[0];
}

Status Trainer::setLossScale(float scale) {
  if (lossScaleState < 0)
    return Status::error("the bundle has no dynamic loss scale");
  int exponent;
  if (!(scale >= 1.0f) || !std::isfinite(scale) ||
      std::frexp(scale, &exponent) != 0.5f)
    return Status::error("loss scale " + std::to_string(scale) +
                         " is not a power of two of at least 1");
  buffers[current][2 * numParameters + lossScaleState].data[0] = scale;
  return Status::success();
}

const StateSpec &Trainer::getStateSpec(size_t index) const {
  return bundle->getManifest().state[index];
}

const float *Trainer::getStateData(size_t index) const {
  return buffers[current][2 * numParameters + index].data;
}

const float *Trainer::getMomentumData(size_t index) const {
  return buffers[current][numParameters + index].data;
}

size_t Trainer::getBufferSize(size_t index) const {
  return buffers[current][index].count;
}

const float *Trainer::getBuffer(size_t index) const {
  return buffers[current][index].data;
}

Status Trainer::restore(const std::vector<const float *> &data, int64_t step,
                        double bitOps) {
  if (data.size() != getNumBuffers())
    return Status::error("restore: expected " +
                         std::to_string(getNumBuffers()) + " buffers, got " +
                         std::to_string(data.size()));
  if (step < 0 || step > kMaxStep)
    return Status::error("restore: step " + std::to_string(step) +
                         " out of range [0, " + std::to_string(kMaxStep) + "]");
  if (!(bitOps >= 0.0))
    return Status::error("restore: BitOps must be non-negative");
  if (lambdaState >= 0) {
    float lambda = data[2 * numParameters + size_t(lambdaState)][0];
    if (!(std::isfinite(lambda) && lambda >= 0.0f))
      return Status::error("restore: LDP lambda " + std::to_string(lambda) +
                           " is not finite and non-negative");
  }
  for (size_t i = 0; i < data.size(); ++i) {
    Buffer &b = buffers[current][i];
    std::copy(data[i], data[i] + b.count, b.data);
  }
  stepIndex = step;
  totalBitOps = bitOps;
  return Status::success();
}
