//===- CApi.cpp - The qtrain runtime's flat C API ------------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// qtrain.h over Bundle and Trainer. Handles wrap the C++ objects; a bundle
/// handle holds a shared_ptr that its trainers share, so the library stays
/// loaded as long as anything uses it. The last error is a thread-local
/// string, the only state outside the handles.
///
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/qtrain.h"

#include "qtrain/runtime/Bundle.h"
#include "qtrain/runtime/Trainer.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <string>

using namespace qtrain::rt;

struct qtrain_bundle {
  std::shared_ptr<const Bundle> bundle;
};

struct qtrain_trainer {
  std::unique_ptr<Trainer> trainer;
};

namespace {

thread_local std::string lastError;

qtrain_status toStatus(ErrorKind kind) {
  switch (kind) {
  case ErrorKind::None:
    return QTRAIN_OK;
  case ErrorKind::InvalidArgument:
    return QTRAIN_ERROR_INVALID_ARGUMENT;
  case ErrorKind::Io:
    return QTRAIN_ERROR_IO;
  case ErrorKind::Format:
    return QTRAIN_ERROR_FORMAT;
  case ErrorKind::Unsupported:
    return QTRAIN_ERROR_UNSUPPORTED;
  case ErrorKind::MissingVariant:
    return QTRAIN_ERROR_MISSING_VARIANT;
  case ErrorKind::OutOfMemory:
    return QTRAIN_ERROR_OUT_OF_MEMORY;
  case ErrorKind::Diverged:
    return QTRAIN_ERROR_DIVERGED;
  }
  return QTRAIN_ERROR_INVALID_ARGUMENT;
}

qtrain_status fail(qtrain_status status, std::string message) {
  lastError = std::move(message);
  return status;
}

/// Maps a C++ result to a status, recording its message on failure.
qtrain_status finish(const Status &status, ErrorKind kind) {
  if (status.isOk())
    return QTRAIN_OK;
  lastError = status.message();
  // Every failing path sets a kind; be safe if one did not.
  qtrain_status code = toStatus(kind);
  return code == QTRAIN_OK ? QTRAIN_ERROR_INVALID_ARGUMENT : code;
}

qtrain_status nullArgument(const char *function, const char *what) {
  return fail(QTRAIN_ERROR_INVALID_ARGUMENT,
              std::string(function) + ": " + what + " is NULL");
}

/// Checks an out-struct's struct_size: at least this version's size.
template <typename T>
qtrain_status checkOutSize(const char *function, const T *out) {
  if (out->struct_size < sizeof(T))
    return fail(QTRAIN_ERROR_INVALID_ARGUMENT,
                std::string(function) + ": struct_size " +
                    std::to_string(out->struct_size) + " is smaller than " +
                    std::to_string(sizeof(T)));
  return QTRAIN_OK;
}

void fillTensor(const TensorSpec &spec, const float *data,
                qtrain_tensor *tensor) {
  tensor->name = spec.name.c_str();
  tensor->rank = int64_t(spec.shape.size());
  tensor->shape = spec.shape.data();
  tensor->numel = spec.numel;
  tensor->data = data;
}

/// qtrain_trainer_step and _step_ids: `Input` is the element type of `x`.
template <typename Input>
qtrain_status trainStep(const char *fn, qtrain_trainer *trainer, const Input *x,
                        const int64_t *labels, float *loss) {
  if (!trainer)
    return nullArgument(fn, "trainer");
  if (!x)
    return nullArgument(fn, "x");
  if (!labels)
    return nullArgument(fn, "labels");
  float value = 0;
  ErrorKind kind = ErrorKind::None;
  if (Status s = trainer->trainer->step(x, labels, value, &kind); s.failed())
    return finish(s, kind);
  if (loss)
    *loss = value;
  return QTRAIN_OK;
}

template <typename Input>
qtrain_status evalStep(const char *fn, qtrain_trainer *trainer, const Input *x,
                       int32_t bits, float *logits) {
  if (!trainer)
    return nullArgument(fn, "trainer");
  if (!x)
    return nullArgument(fn, "x");
  if (!logits)
    return nullArgument(fn, "logits");
  ErrorKind kind = ErrorKind::None;
  Status s = trainer->trainer->eval(x, logits, int(bits), &kind);
  return finish(s, kind);
}

} // namespace

extern "C" {

int qtrain_api_version(void) { return QTRAIN_API_VERSION; }

const char *qtrain_last_error(void) { return lastError.c_str(); }

const char *qtrain_status_name(qtrain_status status) {
  switch (status) {
  case QTRAIN_OK:
    return "QTRAIN_OK";
  case QTRAIN_ERROR_INVALID_ARGUMENT:
    return "QTRAIN_ERROR_INVALID_ARGUMENT";
  case QTRAIN_ERROR_IO:
    return "QTRAIN_ERROR_IO";
  case QTRAIN_ERROR_FORMAT:
    return "QTRAIN_ERROR_FORMAT";
  case QTRAIN_ERROR_UNSUPPORTED:
    return "QTRAIN_ERROR_UNSUPPORTED";
  case QTRAIN_ERROR_MISSING_VARIANT:
    return "QTRAIN_ERROR_MISSING_VARIANT";
  case QTRAIN_ERROR_OUT_OF_MEMORY:
    return "QTRAIN_ERROR_OUT_OF_MEMORY";
  case QTRAIN_ERROR_DIVERGED:
    return "QTRAIN_ERROR_DIVERGED";
  case QTRAIN_STATUS_MAX_ENUM:
    break;
  }
  return "unknown";
}

qtrain_status qtrain_bundle_open(const char *dir, qtrain_bundle **out) {
  if (!dir)
    return nullArgument("qtrain_bundle_open", "dir");
  if (!out)
    return nullArgument("qtrain_bundle_open", "out");
  std::unique_ptr<Bundle> bundle;
  ErrorKind kind = ErrorKind::None;
  if (Status s = openBundle(dir, bundle, &kind); s.failed())
    return finish(s, kind);
  *out = new qtrain_bundle{std::move(bundle)};
  return QTRAIN_OK;
}

void qtrain_bundle_close(qtrain_bundle *bundle) { delete bundle; }

qtrain_status qtrain_bundle_get_info(const qtrain_bundle *bundle,
                                     qtrain_bundle_info *info) {
  const char *fn = "qtrain_bundle_get_info";
  if (!bundle)
    return nullArgument(fn, "bundle");
  if (!info)
    return nullArgument(fn, "info");
  if (qtrain_status s = checkOutSize(fn, info); s != QTRAIN_OK)
    return s;
  const Manifest &m = bundle->bundle->getManifest();
  info->batch = m.batch;
  info->classes = m.classes;
  info->input_numel = m.input.numel;
  info->labels_numel = m.labels.numel;
  info->num_parameters = int64_t(m.parameters.size());
  info->num_state = int64_t(m.state.size());
  info->num_sites = int64_t(m.sites.size());
  info->schedule = m.schedule.c_str();
  info->grad_schedule = m.gradSchedule.c_str();
  return QTRAIN_OK;
}

void qtrain_trainer_options_init(qtrain_trainer_options *options) {
  if (!options)
    return;
  TrainerOptions defaults;
  std::memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->schedule = nullptr;
  options->grad_schedule = nullptr;
  options->total_steps = defaults.totalSteps;
  options->seed = defaults.seed;
  options->learning_rate = defaults.learningRate;
  options->momentum = defaults.momentum;
  options->weight_decay = defaults.weightDecay;
  options->threads = defaults.threads;
}

qtrain_status qtrain_trainer_create(const qtrain_bundle *bundle,
                                    const qtrain_trainer_options *options,
                                    qtrain_trainer **out) {
  const char *fn = "qtrain_trainer_create";
  if (!bundle)
    return nullArgument(fn, "bundle");
  if (!options)
    return nullArgument(fn, "options");
  if (!out)
    return nullArgument(fn, "out");
  if (options->struct_size < sizeof(qtrain_trainer_options))
    return fail(QTRAIN_ERROR_INVALID_ARGUMENT,
                std::string(fn) + ": options->struct_size " +
                    std::to_string(options->struct_size) + " is smaller than " +
                    std::to_string(sizeof(qtrain_trainer_options)) +
                    " (call qtrain_trainer_options_init)");
  // Fields of a newer qtrain.h are accepted only at their zero defaults.
  const unsigned char *bytes = reinterpret_cast<const unsigned char *>(options);
  for (size_t i = sizeof(qtrain_trainer_options); i < options->struct_size; ++i)
    if (bytes[i] != 0)
      return fail(QTRAIN_ERROR_UNSUPPORTED,
                  std::string(fn) +
                      ": options set fields this runtime does not know "
                      "(built against a newer qtrain.h)");
  TrainerOptions o;
  o.schedule = options->schedule ? options->schedule : "";
  o.gradSchedule = options->grad_schedule ? options->grad_schedule : "";
  o.totalSteps = options->total_steps;
  o.seed = options->seed;
  o.learningRate = options->learning_rate;
  o.momentum = options->momentum;
  o.weightDecay = options->weight_decay;
  o.threads = options->threads;
  std::unique_ptr<Trainer> trainer;
  ErrorKind kind = ErrorKind::None;
  if (Status s = Trainer::create(bundle->bundle, o, trainer, &kind); s.failed())
    return finish(s, kind);
  *out = new qtrain_trainer{std::move(trainer)};
  return QTRAIN_OK;
}

void qtrain_trainer_destroy(qtrain_trainer *trainer) { delete trainer; }

qtrain_status qtrain_bundle_get_input_dtype(const qtrain_bundle *bundle,
                                            const char **dtype,
                                            int64_t *max_value) {
  const char *fn = "qtrain_bundle_get_input_dtype";
  if (!bundle)
    return nullArgument(fn, "bundle");
  if (!dtype)
    return nullArgument(fn, "dtype");
  const Manifest &m = bundle->bundle->getManifest();
  *dtype = m.input.dtype == DType::I64 ? "i64" : "f32";
  if (max_value)
    *max_value = m.inputMaxValue;
  return QTRAIN_OK;
}

qtrain_status qtrain_trainer_step(qtrain_trainer *trainer, const float *x,
                                  const int64_t *labels, float *loss) {
  return trainStep("qtrain_trainer_step", trainer, x, labels, loss);
}

qtrain_status qtrain_trainer_step_ids(qtrain_trainer *trainer, const int64_t *x,
                                      const int64_t *labels, float *loss) {
  return trainStep("qtrain_trainer_step_ids", trainer, x, labels, loss);
}

qtrain_status qtrain_trainer_eval(qtrain_trainer *trainer, const float *x,
                                  int32_t bits, float *logits) {
  return evalStep("qtrain_trainer_eval", trainer, x, bits, logits);
}

qtrain_status qtrain_trainer_eval_ids(qtrain_trainer *trainer, const int64_t *x,
                                      int32_t bits, float *logits) {
  return evalStep("qtrain_trainer_eval_ids", trainer, x, bits, logits);
}

qtrain_status qtrain_trainer_get_step(const qtrain_trainer *trainer,
                                      int64_t *step) {
  const char *fn = "qtrain_trainer_get_step";
  if (!trainer)
    return nullArgument(fn, "trainer");
  if (!step)
    return nullArgument(fn, "step");
  *step = trainer->trainer->getStep();
  return QTRAIN_OK;
}

qtrain_status qtrain_trainer_get_bits(const qtrain_trainer *trainer,
                                      int32_t *bits, int32_t *grad_bits) {
  if (!trainer)
    return nullArgument("qtrain_trainer_get_bits", "trainer");
  const Trainer &t = *trainer->trainer;
  if (bits)
    *bits = !t.isLearned() ? t.getLastBits()
            : t.getLastMeanBits() < 0
                ? -1
                : int32_t(std::nearbyint(t.getLastMeanBits()));
  if (grad_bits)
    *grad_bits = t.getLastGradBits();
  return QTRAIN_OK;
}

qtrain_status qtrain_trainer_get_mean_bits(const qtrain_trainer *trainer,
                                           double *mean) {
  const char *fn = "qtrain_trainer_get_mean_bits";
  if (!trainer)
    return nullArgument(fn, "trainer");
  if (!mean)
    return nullArgument(fn, "mean");
  *mean = trainer->trainer->getLastMeanBits();
  return QTRAIN_OK;
}

qtrain_status qtrain_trainer_get_site_bits(const qtrain_trainer *trainer,
                                           int64_t site, int32_t *bits) {
  const char *fn = "qtrain_trainer_get_site_bits";
  if (!trainer)
    return nullArgument(fn, "trainer");
  if (!bits)
    return nullArgument(fn, "bits");
  int64_t sites =
      int64_t(trainer->trainer->getBundle().getManifest().sites.size());
  if (site < 0 || site >= sites)
    return fail(QTRAIN_ERROR_INVALID_ARGUMENT,
                std::string(fn) + ": site " + std::to_string(site) +
                    " is outside [0, " + std::to_string(sites) + ")");
  *bits = trainer->trainer->getLastSiteBits(size_t(site));
  return QTRAIN_OK;
}

qtrain_status qtrain_trainer_get_bitops(const qtrain_trainer *trainer,
                                        double *last, double *total) {
  if (!trainer)
    return nullArgument("qtrain_trainer_get_bitops", "trainer");
  if (last)
    *last = trainer->trainer->getLastBitOps();
  if (total)
    *total = trainer->trainer->getTotalBitOps();
  return QTRAIN_OK;
}

qtrain_status qtrain_trainer_num_parameters(const qtrain_trainer *trainer,
                                            int64_t *count) {
  const char *fn = "qtrain_trainer_num_parameters";
  if (!trainer)
    return nullArgument(fn, "trainer");
  if (!count)
    return nullArgument(fn, "count");
  *count = int64_t(trainer->trainer->getNumParameters());
  return QTRAIN_OK;
}

namespace {

/// qtrain_trainer_get_parameter and _get_momentum: a view of parameter
/// `index`'s value or momentum buffer.
qtrain_status getParameterView(const char *fn, const qtrain_trainer *trainer,
                               int64_t index, bool momentum,
                               qtrain_tensor *tensor) {
  if (!trainer)
    return nullArgument(fn, "trainer");
  if (!tensor)
    return nullArgument(fn, "tensor");
  if (qtrain_status s = checkOutSize(fn, tensor); s != QTRAIN_OK)
    return s;
  const Trainer &t = *trainer->trainer;
  if (index < 0 || uint64_t(index) >= t.getNumParameters())
    return fail(QTRAIN_ERROR_INVALID_ARGUMENT,
                std::string(fn) + ": index " + std::to_string(index) +
                    " is outside [0, " + std::to_string(t.getNumParameters()) +
                    ")");
  fillTensor(t.getParameterSpec(size_t(index)),
             momentum ? t.getMomentumData(size_t(index))
                      : t.getParameterData(size_t(index)),
             tensor);
  return QTRAIN_OK;
}

} // namespace

qtrain_status qtrain_trainer_get_parameter(const qtrain_trainer *trainer,
                                           int64_t index,
                                           qtrain_tensor *tensor) {
  return getParameterView("qtrain_trainer_get_parameter", trainer, index,
                          /*momentum=*/false, tensor);
}

qtrain_status qtrain_trainer_get_momentum(const qtrain_trainer *trainer,
                                          int64_t index,
                                          qtrain_tensor *tensor) {
  return getParameterView("qtrain_trainer_get_momentum", trainer, index,
                          /*momentum=*/true, tensor);
}

qtrain_status qtrain_trainer_find_parameter(const qtrain_trainer *trainer,
                                            const char *name, int64_t *index) {
  const char *fn = "qtrain_trainer_find_parameter";
  if (!trainer)
    return nullArgument(fn, "trainer");
  if (!name)
    return nullArgument(fn, "name");
  if (!index)
    return nullArgument(fn, "index");
  int64_t found = trainer->trainer->findParameter(name);
  if (found < 0)
    return fail(QTRAIN_ERROR_INVALID_ARGUMENT,
                std::string(fn) + ": no parameter named '" + name + "'");
  *index = found;
  return QTRAIN_OK;
}

qtrain_status qtrain_trainer_num_state(const qtrain_trainer *trainer,
                                       int64_t *count) {
  const char *fn = "qtrain_trainer_num_state";
  if (!trainer)
    return nullArgument(fn, "trainer");
  if (!count)
    return nullArgument(fn, "count");
  *count = int64_t(trainer->trainer->getNumState());
  return QTRAIN_OK;
}

qtrain_status qtrain_trainer_get_state(const qtrain_trainer *trainer,
                                       int64_t index, qtrain_tensor *tensor) {
  const char *fn = "qtrain_trainer_get_state";
  if (!trainer)
    return nullArgument(fn, "trainer");
  if (!tensor)
    return nullArgument(fn, "tensor");
  if (qtrain_status s = checkOutSize(fn, tensor); s != QTRAIN_OK)
    return s;
  const Trainer &t = *trainer->trainer;
  if (index < 0 || uint64_t(index) >= t.getNumState())
    return fail(QTRAIN_ERROR_INVALID_ARGUMENT,
                std::string(fn) + ": index " + std::to_string(index) +
                    " is outside [0, " + std::to_string(t.getNumState()) + ")");
  fillTensor(t.getStateSpec(size_t(index)), t.getStateData(size_t(index)),
             tensor);
  return QTRAIN_OK;
}

} // extern "C"
