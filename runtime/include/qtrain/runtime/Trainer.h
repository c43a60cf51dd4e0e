//===- Trainer.h - Buffers, selection and steps -----------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A Trainer runs the compiled steps of a Bundle (docs/bundle.md): it owns
/// the parameters, momentum and state, evaluates the precision schedule
/// every step, selects each site's kernel variant and calls the library.
/// It is the C++ API; qtrain.h is a flat C API over it.
///
/// Selection (Selection.h): create() builds the selection tables once;
/// a step then costs two scheduleBits() calls, one table load and an
/// O(sites) copy of the row into the slot array. The schedules are checked
/// before the first step (validateSchedule()).
///
/// Buffers. Parameters, momentum and state are double-buffered: step()
/// passes the current set as inputs and the other set as outputs (the ABI
/// forbids aliasing), then flips which set is current. The two packed
/// argument arrays (one per parity) are built once in create(); a step
/// only stores x, labels and the control scalars. Buffers are 64-byte
/// aligned.
///
/// Initialization (deterministic, independent of parameter order):
/// parameter P of a run with seed S takes its random words from the
/// Philox4x32-10 stream of Philox.h with
///   key = S,  streamId = FNV-1a-32(P's name),  step = 0xFFFFFFFF
/// (a step the int32 ABI step counter never reaches, so init never shares
/// a counter with training noise). Element i gets
///   u_i = uniformNoise(word(i))       in [-0.5, 0.5), exact
///   w_i = (2 * u_i) * b               in [-b, b), b = float(1 / sqrt(fan_in))
/// for kaiming_uniform and bias_uniform alike (both U(-b, b) with the same
/// b, docs/bundle.md). zeros gives 0; file copies the bundle's file.
/// Momentum and state start at zero.
///
/// Data parallel (TrainerOptions::communicator, docs/scale-out.md): each
/// rank's step runs the compiled step with lr, momentum and weight decay 0,
/// which leaves the parameters as they were and this rank's gradient, exactly,
/// in the new momentum buffers; a GradientExchange averages the gradients
/// over the ranks (the last layer first), the step's loss and the state the
/// step updates (running ranges, batch norm statistics, overflow ratios) are
/// averaged too, and the runtime applies the SGD update of the compiled step
/// (docs/training-step.md), operation for operation, to the averaged
/// gradient. The ranks then hold the same bits. With one rank and fp32
/// exchange, the parameters and losses are those of the compiled update, bit
/// for bit.
///
/// Trainers share nothing but their (read-only) Bundle: several may run in
/// one process, each on one thread at a time.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_TRAINER_H
#define QTRAIN_RUNTIME_TRAINER_H

#include "qtrain/runtime/Bundle.h"
#include "qtrain/runtime/Communicator.h"
#include "qtrain/runtime/GradientExchange.h"
#include "qtrain/runtime/Schedule.h"
#include "qtrain/runtime/Selection.h"
#include "qtrain/runtime/Status.h"
#include "qtrain/runtime/StepDevice.h"

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace qtrain::rt {

/// What a training run uses besides the bundle.
struct TrainerOptions {
  /// Forward schedule (Schedule.h's grammar); empty: the bundle's
  /// `schedule`.
  std::string schedule;
  /// Backward (error) bits schedule; empty: the bundle's `grad_schedule`.
  std::string gradSchedule;
  /// Total steps T the schedules are laid out over: in [1, 2^31 - 1] and,
  /// for cyclic schedules, at least the number of cycles. Steps past T
  /// continue the periodic pattern.
  int64_t totalSteps = 0;
  /// Seeds parameter init and is passed to every step.
  uint64_t seed = 0;
  /// SGD hyper-parameters, passed to every step; finite.
  float learningRate = 0.01f;
  float momentum = 0.9f;
  float weightDecay = 0.0f;
  /// Initial dynamic loss scale, for bundles with a "loss_scale" state
  /// (PAPERS.md section 4: 65536); a power of two, at least 1.
  float initialLossScale = 65536.0f;
  /// Run-time promotion (bundles with "promotion"/"overflow" state): a low
  /// P or Y tensor whose overflow ratio in a step reaches this is switched
  /// to the high format for the rest of training (PAPERS.md section 4:
  /// 0.01). In (0, 1] promotes; above 1 never.
  double promotionThreshold = 0.01;
  /// LDP bundles (an "ldp_lambda" state): the weight of the cost term; NaN
  /// keeps the bundle's default (the state's "init").
  float ldpLambda = std::numeric_limits<float>::quiet_NaN();
  /// LDP: when positive, lambda is steered after every step so that the
  /// step's BitOps approach this share of static max-bits BitOps:
  /// lambda <- max(0, lambda + ldpLambdaRate * (ratio - target)).
  double ldpTargetCost = 0;
  double ldpLambdaRate = 1.0;
  /// When positive, the most bytes the compiled step's buffers may hold at
  /// once (Bundle::setStepMemoryLimit); a step that would pass it fails
  /// with OutOfMemory and leaves the training state unchanged. The limit
  /// belongs to the bundle's loaded library, so it applies to every
  /// Trainer of the bundle; 0 leaves the library's limit as it is. It is
  /// set once create() has succeeded.
  int64_t maxStepMemory = 0;
  /// Threads the compiled step runs on (its library's OpenMP pool, shared
  /// by the microkernels and the generated loops); 0: one per core this
  /// process may run on. Losses, parameters and checkpoints are the same
  /// at every count.
  int threads = 0;
  /// Data parallel: the ranks this trainer trains with, each on its own
  /// batch; null trains alone with the compiled update (see the file
  /// comment). Every rank must create its trainer with the same bundle and
  /// options, and call step() in lockstep.
  std::shared_ptr<Communicator> communicator;
  /// How the gradients travel (with a communicator).
  ExchangeOptions exchange;
  /// Where the compiled steps run (StepDevice.h): null runs them on the
  /// CPU (model.so); a device holds the buffers and runs its own steps,
  /// e.g. openCudaStepDevice(). `threads` and `maxStepMemory` are the CPU
  /// library's and do not apply to it.
  std::shared_ptr<StepDevice> device;
};

/// A tensor switched to its high format after a step.
struct Promotion {
  /// Index among the bundle's promotable tensors.
  size_t index = 0;
  /// Its name (the manifest's "tensors"), or "tensor <index>".
  std::string name;
  /// The ratio of its elements that overflowed the low format.
  double overflowRatio = 0;
};

/// eval()'s `bits` for "the schedule's bits at the current step".
constexpr int kScheduleBits = -1;

/// A training run of one bundle. Create with create(); not copyable or
/// movable (the packed argument arrays point into it).
class Trainer {
public:
  /// Validates `options` against the bundle (schedules parse, fit
  /// totalSteps and are servable), allocates and initializes the buffers.
  /// On failure `out` is unchanged.
  static Status create(std::shared_ptr<const Bundle> bundle,
                       const TrainerOptions &options,
                       std::unique_ptr<Trainer> &out,
                       ErrorKind *kind = nullptr);

  ~Trainer();
  Trainer(const Trainer &) = delete;
  Trainer &operator=(const Trainer &) = delete;

  /// Runs training step getStep(): selects the variants, calls the
  /// library's train step on `x` (input numel floats) and `labels` (labels
  /// numel class indices, each in [0, classes)), stores the loss, makes the
  /// new buffers current and advances the step. With a dynamic loss scale
  /// (a state tensor of kind "loss_scale"), a step whose new parameters or
  /// momentum are not all finite (a scaled gradient overflowed) is skipped:
  /// the current buffers stay, the loss scale halves, and the step still
  /// advances (lastStepSkipped() says so). At loss scale 1 such a step is
  /// an error (Diverged): the run diverged. Without a loss scale, such a
  /// step is an error (Diverged) too, and the training state stays as it
  /// was before it
  /// (parameters, momentum, state tensors, step counter: what a checkpoint
  /// holds); `loss` is still the step's loss. A step whose compiled code
  /// cannot allocate its buffers (out of memory, or past
  /// TrainerOptions::maxStepMemory) fails with OutOfMemory and leaves the
  /// training state unchanged too. Diagnostics (getLastSiteBits, the peak
  /// memory figures) may reflect the failed step.
  /// `x` must match the bundle's input dtype: this overload takes an f32
  /// input, the next an i64 one (token ids); the other is InvalidArgument.
  Status step(const float *x, const int64_t *labels, float &loss,
              ErrorKind *kind = nullptr);
  /// step() on token ids: input numel ids, each in [0, the manifest's
  /// input.max_value] (non-negative when it gives none), checked before
  /// the step runs since the step indexes its tables with them.
  Status step(const int64_t *x, const int64_t *labels, float &loss,
              ErrorKind *kind = nullptr);

  /// Runs the eval step on `x` with the current parameters and state,
  /// writing batch x classes logits. `bits` is the forward precision, 0
  /// for fp32, or kScheduleBits. Each site runs its variant with (bits,
  /// the grad schedule's bits now) if it has one, else its first variant
  /// with those forward bits (eval runs no backward); a site with neither
  /// is an error (MissingVariant). Does not advance the step.
  Status eval(const float *x, float *logits, int bits = kScheduleBits,
              ErrorKind *kind = nullptr);
  /// eval() on token ids, checked as step() checks them.
  Status eval(const int64_t *x, float *logits, int bits = kScheduleBits,
              ErrorKind *kind = nullptr);

  /// What step() does first: evaluates the schedules at `step` and writes
  /// every site's variant index into the slot array. Exposed for
  /// benchmarks and tests; step() calls it itself.
  Status selectVariants(int64_t step, ErrorKind *kind = nullptr);

  /// Whether the schedule is learned (LDP): each site runs at the bits of
  /// its own parameter p, ldpBits(p, min, max), read before every step.
  bool isLearned() const { return learned; }
  /// LDP: each site's forward bits in the last selection (0 for a
  /// placeholder site); -1 before the first.
  const std::vector<int> &getLastSiteBits() const { return lastSiteBits; }
  /// LDP: the current weight of the cost term; 0 without one.
  float getLdpLambda() const;
  /// BitOps of a step with every site at (bits, gradBits).
  double getStaticBitOps(int bits, int gradBits) const;

  /// Steps taken so far, i.e. the index of the next step.
  int64_t getStep() const { return stepIndex; }
  /// The schedules' bits at `step` (0 = fp32).
  int getBits(int64_t step) const;
  int getGradBits(int64_t step) const;
  /// Forward and backward bits of the last step taken; -1 before the first
  /// (forward: also -1 under a learned schedule, see getLastSiteBits() and
  /// getLastMeanBits()).
  int getLastBits() const { return lastBits; }
  /// The forward bits of the last step taken as one number: under a
  /// learned (LDP) schedule the MACs-weighted mean of the bits of the sites
  /// with a learned precision (fp32 placeholder sites left out; the plain
  /// mean if they have no MACs), else getLastBits(); -1 before the first.
  double getLastMeanBits() const { return lastMeanBits; }
  /// The forward bits site `index` ran at in the last step taken (0 for
  /// fp32); -1 before the first or for an index outside [0, sites).
  int getLastSiteBits(size_t index) const;
  int getLastGradBits() const { return lastGradBits; }
  /// BitOps of the last step taken: the sum over sites of
  /// bitOps(macs, bits, grad_bits) (Cost.h; fp32 counts as 32); 0 before
  /// the first step.
  double getLastBitOps() const { return lastBitOps; }
  /// Whether the bundle has a dynamic loss scale.
  bool hasLossScale() const { return lossScaleState >= 0; }
  /// The current loss scale; 1 without one.
  float getLossScale() const;
  /// Sets the loss scale for the next steps (the paper doubles it every
  /// epoch); fails without a loss scale or for a value that is not a
  /// finite power of two of at least 1.
  Status setLossScale(float scale);
  /// The most bytes the step's own buffers (the generated code's
  /// allocations, not the parameters, optimizer state or data the runtime
  /// holds) took at once during the last training step, and over all steps
  /// of this process; -1 when the bundle's library does not count them.
  int64_t getLastStepPeakBytes() const { return lastPeakBytes; }
  int64_t getMaxStepPeakBytes() const { return maxPeakBytes; }
  /// Whether the bundle's low P and Y tensors can be promoted.
  bool hasPromotion() const { return promotionState >= 0; }
  /// The tensors promoted after the last step.
  const std::vector<Promotion> &getLastPromotions() const {
    return lastPromotions;
  }
  /// The overflow ratio of each promotable tensor in the last step (in the
  /// order of the manifest's "overflow" state; empty before a step).
  const std::vector<float> &getLastOverflowRatios() const {
    return lastOverflowRatios;
  }
  /// The names of the promotable tensors ("tensor <k>" where the manifest
  /// gives none).
  std::vector<std::string> getPromotableNames() const;
  /// How many tensors are promoted now, and how many could be.
  size_t getNumPromoted() const;
  size_t getNumPromotable() const;
  /// The gradient exchange of a data-parallel trainer; null otherwise.
  const GradientExchange *getGradientExchange() const { return exchange.get(); }
  /// Data parallel: the seconds the last step spent exchanging (gradients,
  /// loss and state), and over all steps of this process; 0 otherwise.
  double getLastExchangeSeconds() const { return lastExchangeSeconds; }
  double getTotalExchangeSeconds() const { return totalExchangeSeconds; }
  /// Whether the last step was skipped for non-finite gradients.
  bool lastStepSkipped() const { return lastSkipped; }
  /// Steps skipped so far in this process.
  int64_t getSkippedSteps() const { return skippedSteps; }
  /// Sum of getLastBitOps() over all steps taken.
  double getTotalBitOps() const { return totalBitOps; }
  /// The slot array (one variant index per site) as selectVariants() last
  /// wrote it.
  const int32_t *getSlots() const { return slots.data(); }

  const Bundle &getBundle() const { return *bundle; }
  const Schedule &getSchedule() const { return schedule; }
  const Schedule &getGradSchedule() const { return gradSchedule; }
  const TrainerOptions &getOptions() const { return options; }

  size_t getNumParameters() const;
  const ParameterSpec &getParameterSpec(size_t index) const;
  /// The current values of parameter `index` (numel floats); valid until
  /// the next step().
  const float *getParameterData(size_t index) const;
  /// The index of the parameter named `name`, or -1.
  int64_t findParameter(std::string_view name) const;
  size_t getNumState() const;
  const StateSpec &getStateSpec(size_t index) const;
  /// The current values of state tensor `index`; valid until the next
  /// step().
  const float *getStateData(size_t index) const;
  /// The current momentum buffer of parameter `index`.
  const float *getMomentumData(size_t index) const;

  /// Everything a run's future depends on besides the bundle, the options
  /// and the data: the current buffers, in the order parameters, momentum,
  /// state (getNumBuffers() of them, getBufferSize(i) floats each), the
  /// step index and the cumulative BitOps. Checkpoints save and restore
  /// exactly this.
  size_t getNumBuffers() const { return 2 * numParameters + numState; }
  size_t getBufferSize(size_t index) const;
  const float *getBuffer(size_t index) const;
  /// Restores a run: copies `data[i]` (getBufferSize(i) floats) into every
  /// current buffer and sets the step index and cumulative BitOps. Fails,
  /// changing nothing, on a step outside [0, 2^31 - 1] or a negative BitOps
  /// count. The values are not checked (a test may set any); a checkpoint
  /// is restored with restoreCheckpoint(), which refuses non-finite
  /// parameters and momentum.
  Status restore(const std::vector<const float *> &data, int64_t step,
                 double totalBitOps);

private:
  Trainer() = default;
  Status initialize(ErrorKind *kind);
  /// selectVariants() under a learned schedule.
  Status selectLearnedVariants(int64_t step, ErrorKind *kind);
  /// Checks that the bundle's input has `dtype` and, for ids, that each
  /// is in range; `function` ("step", "eval") starts the messages.
  Status checkInput(const char *function, DType dtype, const int64_t *ids,
                    ErrorKind *kind) const;
  /// The bytes of one batch of the bundle's input.
  size_t inputBytes() const;
  /// step() and eval() once `x` is known to be the bundle's input.
  Status runTrain(const void *x, const int64_t *labels, float &loss,
                  ErrorKind *kind);
  Status selectEval(const void *x, float *logits, int bits, ErrorKind *kind);
  /// Runs the eval step with evalSlots as selected and these controls.
  Status runEval(const void *x, float *logits, int bits, int gradBits,
                 ErrorKind *kind);
  /// Data parallel, after the compiled step: averages the gradients (in
  /// the new momentum buffers), the loss and the state over the ranks and
  /// writes the SGD update into the new buffers.
  Status exchangeAndUpdate(float &loss, ErrorKind *kind);
  /// The name of promotable tensor `k` (needs a "promotion" state).
  std::string promotableName(size_t k) const;

  /// 64-byte aligned float storage.
  struct Buffer {
    float *data = nullptr;
    size_t count = 0;
  };
  std::shared_ptr<const Bundle> bundle;
  TrainerOptions options;
  /// options.threads, with 0 resolved to the cores available.
  int threads = 1;
  Schedule schedule;
  Schedule gradSchedule;
  size_t numParameters = 0;
  size_t numState = 0;
  size_t numSites = 0;

  /// buffers[parity]: parameters, then momentum, then state.
  std::array<std::vector<Buffer>, 2> buffers;
  /// Which of the two buffer sets is current.
  int current = 0;

  Selection selection;
  /// The slot arrays of train and eval steps (at least one element, so
  /// that the pointers are never null).
  std::vector<int32_t> slots;
  std::vector<int32_t> evalSlots;

  /// The packed argument arrays, per parity; see docs/bundle.md.
  std::array<std::vector<void *>, 2> trainArgs;
  std::array<std::vector<void *>, 2> evalArgs;
  size_t trainInputIndex = 0, trainLabelsIndex = 0;
  size_t evalInputIndex = 0, evalLogitsIndex = 0;

  /// The scalars the argument arrays point to.
  int32_t bitsArg = 0, gradBitsArg = 0, stepArg = 0;
  int32_t evalBitsArg = 0, evalGradBitsArg = 0, evalStepArg = 0;
  int64_t seedArg = 0;
  float learningRateArg = 0, momentumArg = 0, weightDecayArg = 0;
  float lossArg = 0;

  int64_t stepIndex = 0;
  int32_t selectedRow = -1;
  int lastBits = -1, lastGradBits = -1;
  double lastMeanBits = -1;
  double lastBitOps = 0, totalBitOps = 0;
  /// Index of the "loss_scale" state tensor, or -1.
  int64_t lossScaleState = -1;
  bool lastSkipped = false;
  int64_t skippedSteps = 0;
  /// Indices of the "promotion" and "overflow" state tensors, or -1.
  int64_t promotionState = -1, overflowState = -1;
  std::vector<Promotion> lastPromotions;
  std::vector<float> lastOverflowRatios;
  int64_t lastPeakBytes = -1, maxPeakBytes = -1;
  /// LDP: each site runs at its own bits (Selection::getSiteVariant).
  bool learned = false;
  std::vector<int> lastSiteBits;
  /// LDP: each site's bits in the last step taken.
  std::vector<int> stepSiteBits;
  double selectedBitOps = 0;
  /// Index of the "ldp_lambda" state tensor, or -1.
  int64_t lambdaState = -1;
  /// Data parallel: the exchange (its buffer holds the gradients, the last
  /// parameter first), whether each parameter takes weight decay, the
  /// state tensors averaged over the ranks, and the loss and those states
  /// as they travel.
  std::unique_ptr<GradientExchange> exchange;
  std::vector<bool> decays;
  std::vector<size_t> averagedState;
  std::vector<float> shared;
  double lastExchangeSeconds = 0, totalExchangeSeconds = 0;
};

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_TRAINER_H
