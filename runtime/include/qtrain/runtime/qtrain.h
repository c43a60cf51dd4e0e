/*===- qtrain.h - The qtrain runtime's flat C API -----------------*- C -*-===*\
|*                                                                            *|
|* Part of the qtrain project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * A C ABI over qtrain::rt::Bundle and qtrain::rt::Trainer (Bundle.h,
 * Trainer.h): open a compiled bundle (docs/bundle.md), create a trainer with
 * a precision schedule, run training and eval steps.
 *
 * Conventions:
 *   - Every function that can fail returns a qtrain_status; on failure the
 *     message is available from qtrain_last_error() on the same thread
 *     until the next failure there (a successful call leaves it alone).
 *   - Handles are opaque. NULL handles and NULL out-pointers are
 *     QTRAIN_ERROR_INVALID_ARGUMENT, never a crash. On failure out-params
 *     are left unchanged.
 *   - Structs passed in or out start with `struct_size`, which the caller
 *     sets to sizeof(the struct) as it knows it (qtrain_*_init() does so),
 *     so that later versions can append fields without breaking callers.
 *   - A trainer keeps its bundle's library loaded: qtrain_bundle_close()
 *     may be called while trainers created from it are alive.
 *   - A trainer is used by one thread at a time; distinct trainers are
 *     independent.
 *
 *   qtrain_bundle *bundle;
 *   if (qtrain_bundle_open("lenet.qtb", &bundle) != QTRAIN_OK)
 *     fprintf(stderr, "%s\n", qtrain_last_error());
 *   qtrain_trainer_options options;
 *   qtrain_trainer_options_init(&options);
 *   options.total_steps = 1000;
 *   options.schedule = "cpt:3:8";
 *   qtrain_trainer *trainer;
 *   qtrain_trainer_create(bundle, &options, &trainer);
 *   qtrain_trainer_step(trainer, x, labels, &loss);
 */

#ifndef QTRAIN_RUNTIME_QTRAIN_H
#define QTRAIN_RUNTIME_QTRAIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this C API; qtrain_api_version() returns the runtime's. */
#define QTRAIN_API_VERSION 1
/* eval's `bits` for "the schedule's bits at the current step". */
#define QTRAIN_SCHEDULE_BITS (-1)

typedef enum qtrain_status {
  QTRAIN_OK = 0,
  /* A NULL handle or pointer, an out-of-range index or value, a bad
     option (an invalid schedule string, total_steps < 1, ...). */
  QTRAIN_ERROR_INVALID_ARGUMENT = 1,
  /* A file could not be read or the library could not be loaded. */
  QTRAIN_ERROR_IO = 2,
  /* A malformed bundle: bad JSON, a missing or ill-typed field, a missing
     symbol, a parameter file of the wrong size. */
  QTRAIN_ERROR_FORMAT = 3,
  /* Well-formed but unsupported: another bundle version, ldp schedules. */
  QTRAIN_ERROR_UNSUPPORTED = 4,
  /* The schedule needs a (bits, grad_bits) some site has no variant for. */
  QTRAIN_ERROR_MISSING_VARIANT = 5,
  QTRAIN_ERROR_OUT_OF_MEMORY = 6,
  /* A training step's update is not finite (NaN or inf gradients) and no
     loss scale can absorb it: training diverged; the trainer stays as it
     was before the step. */
  QTRAIN_ERROR_DIVERGED = 7,
  /* Not a status: keeps the enum 32-bit and any future code in range. */
  QTRAIN_STATUS_MAX_ENUM = 0x7FFFFFFF
} qtrain_status;

typedef struct qtrain_bundle qtrain_bundle;
typedef struct qtrain_trainer qtrain_trainer;

/* What a bundle expects; the strings belong to the bundle. */
typedef struct qtrain_bundle_info {
  uint32_t struct_size;
  int64_t batch;
  int64_t classes;
  int64_t input_numel;  /* floats (or token ids) per step() / eval() input */
  int64_t labels_numel; /* int64 labels per step() */
  int64_t num_parameters;
  int64_t num_state;
  int64_t num_sites;
  const char *schedule;      /* the bundle's default schedule */
  const char *grad_schedule; /* and gradient schedule */
} qtrain_bundle_info;

typedef struct qtrain_trainer_options {
  uint32_t struct_size;
  const char *schedule;      /* NULL or "": the bundle's */
  const char *grad_schedule; /* NULL or "": the bundle's */
  int64_t total_steps;       /* required, >= 1 */
  uint64_t seed;
  float learning_rate;
  float momentum;
  float weight_decay;
  int32_t threads; /* threads of the compiled step; 0 (the default): one per
                      core. Results are the same at every count. */
} qtrain_trainer_options;

/* A view of a tensor; the pointers belong to the trainer (data is valid
   until the next step). */
typedef struct qtrain_tensor {
  uint32_t struct_size;
  const char *name;
  int64_t rank;
  const int64_t *shape;
  int64_t numel;
  const float *data;
} qtrain_tensor;

/* QTRAIN_API_VERSION of the runtime library. */
int qtrain_api_version(void);
/* The message of this thread's most recent failure; "" if none. */
const char *qtrain_last_error(void);
/* "QTRAIN_OK", "QTRAIN_ERROR_IO", ...; "unknown" for other values. */
const char *qtrain_status_name(qtrain_status status);

/* Opens the bundle directory `dir` (validates the manifest, loads the
   library and parameter files). */
qtrain_status qtrain_bundle_open(const char *dir, qtrain_bundle **out);
/* Releases the bundle; NULL is a no-op. */
void qtrain_bundle_close(qtrain_bundle *bundle);
/* Fills `info` (info->struct_size must be set). */
qtrain_status qtrain_bundle_get_info(const qtrain_bundle *bundle,
                                     qtrain_bundle_info *info);

/* Default options: the bundle's schedules, total_steps 0 (to be set),
   seed 0, learning_rate 0.01, momentum 0.9, weight_decay 0. */
void qtrain_trainer_options_init(qtrain_trainer_options *options);
/* Creates a trainer; checks the schedules against the bundle's variants,
   allocates and initializes parameters. */
qtrain_status qtrain_trainer_create(const qtrain_bundle *bundle,
                                    const qtrain_trainer_options *options,
                                    qtrain_trainer **out);
/* NULL is a no-op. */
void qtrain_trainer_destroy(qtrain_trainer *trainer);

/* The element type of the bundle's input: "f32" (features, for
   qtrain_trainer_step and _eval) or "i64" (token ids, for
   qtrain_trainer_step_ids and _eval_ids), a string of the bundle; and, for
   ids, the largest id its tables take (-1 when the bundle does not say).
   `max_value` may be NULL. */
qtrain_status qtrain_bundle_get_input_dtype(const qtrain_bundle *bundle,
                                            const char **dtype,
                                            int64_t *max_value);

/* One training step on `x` (input_numel floats) and `labels`
   (labels_numel class indices in [0, classes)); `loss` may be NULL. A
   bundle whose input is token ids refuses it (INVALID_ARGUMENT). */
qtrain_status qtrain_trainer_step(qtrain_trainer *trainer, const float *x,
                                  const int64_t *labels, float *loss);
/* Logits (batch x classes) of `x` at forward `bits` (0 = fp32) or
   QTRAIN_SCHEDULE_BITS. */
qtrain_status qtrain_trainer_eval(qtrain_trainer *trainer, const float *x,
                                  int32_t bits, float *logits);
/* The same on token ids (input_numel int64 ids, each in [0, max_value] of
   qtrain_bundle_get_input_dtype, non-negative when it gives none), for a
   bundle whose input is "i64"; an id out of range is INVALID_ARGUMENT and
   runs nothing. */
qtrain_status qtrain_trainer_step_ids(qtrain_trainer *trainer, const int64_t *x,
                                      const int64_t *labels, float *loss);
qtrain_status qtrain_trainer_eval_ids(qtrain_trainer *trainer, const int64_t *x,
                                      int32_t bits, float *logits);

/* Steps taken so far (the index of the next step). */
qtrain_status qtrain_trainer_get_step(const qtrain_trainer *trainer,
                                      int64_t *step);
/* Forward and backward bits of the last step (-1 before the first; 0 is
   fp32); either pointer may be NULL. Under a learned (LDP) schedule each
   site has its own forward bits: `bits` is then their MACs-weighted mean
   rounded to the nearest integer (ties to even), the one bitwidth whose
   static run costs the same forward BitOps to within rounding.
   qtrain_trainer_get_mean_bits() gives the mean unrounded and
   qtrain_trainer_get_site_bits() each site's bits. */
qtrain_status qtrain_trainer_get_bits(const qtrain_trainer *trainer,
                                      int32_t *bits, int32_t *grad_bits);
/* The forward bits of the last step as one number (-1 before the first):
   under a learned (LDP) schedule the MACs-weighted mean of the bits of the
   sites with a learned precision (fp32 placeholder sites left out), else
   the step's bits. */
qtrain_status qtrain_trainer_get_mean_bits(const qtrain_trainer *trainer,
                                           double *mean);
/* The forward bits site `site` (in [0, num_sites), the manifest's order)
   ran at in the last step: -1 before the first, 0 for fp32. Under a
   uniform schedule every site has the step's bits. */
qtrain_status qtrain_trainer_get_site_bits(const qtrain_trainer *trainer,
                                           int64_t site, int32_t *bits);
/* BitOps of the last step and of all steps so far; either may be NULL. */
qtrain_status qtrain_trainer_get_bitops(const qtrain_trainer *trainer,
                                        double *last, double *total);

qtrain_status qtrain_trainer_num_parameters(const qtrain_trainer *trainer,
                                            int64_t *count);
/* A view of parameter `index` (tensor->struct_size must be set). */
qtrain_status qtrain_trainer_get_parameter(const qtrain_trainer *trainer,
                                           int64_t index,
                                           qtrain_tensor *tensor);
/* A view of parameter `index`'s SGD momentum buffer (zero before the
   first step). After one step with momentum 0 and weight decay 0 it is
   exactly that step's gradient of the loss (what qtrain-import-torch
   --check compares with PyTorch's). */
qtrain_status qtrain_trainer_get_momentum(const qtrain_trainer *trainer,
                                          int64_t index, qtrain_tensor *tensor);
/* The index of the parameter named `name`. */
qtrain_status qtrain_trainer_find_parameter(const qtrain_trainer *trainer,
                                            const char *name, int64_t *index);
qtrain_status qtrain_trainer_num_state(const qtrain_trainer *trainer,
                                       int64_t *count);
/* A view of state tensor `index`. */
qtrain_status qtrain_trainer_get_state(const qtrain_trainer *trainer,
                                       int64_t index, qtrain_tensor *tensor);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* QTRAIN_RUNTIME_QTRAIN_H */
