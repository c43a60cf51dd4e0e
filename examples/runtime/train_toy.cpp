//===- train_toy.cpp - Train a bundle through the qtrain C API -----------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Loads a compiled bundle and runs training steps through the flat C API
/// (qtrain.h), printing the loss and the precision of every step:
///
///   qtrain-train-toy BUNDLE [--steps=N] [--schedule=S] [--grad-schedule=S]
///                    [--seed=N] [--lr=F] [--threads=N]
///
/// The data is one synthetic batch: inputs uniform in [-1, 1), labels the
/// argmax of a fixed random linear "teacher", so that any classifier the
/// bundle holds can fit it and the loss should fall. At the end it
/// evaluates the batch at fp32 and prints the accuracy and the BitOps.
///
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/qtrain.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: qtrain-train-toy BUNDLE [--steps=N] [--schedule=S] "
               "[--grad-schedule=S] [--seed=N] [--lr=F] [--threads=N]\n");
  return 2;
}

/// Prints the failing call's status and qtrain_last_error().
int fail(const char *what, qtrain_status status) {
  std::fprintf(stderr, "qtrain-train-toy: %s: %s: %s\n", what,
               qtrain_status_name(status), qtrain_last_error());
  return 1;
}

std::string bitsName(int32_t bits) {
  return bits == 0 ? "fp32" : std::to_string(bits);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argv[1][0] == '-')
    return usage();
  const char *bundlePath = argv[1];
  long long steps = 64;
  unsigned long long seed = 1;
  std::string schedule, gradSchedule;
  float lr = 0.5f;
  int threads = 0; // one per core
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *prefix) -> const char * {
      size_t n = std::strlen(prefix);
      return arg.compare(0, n, prefix) == 0 ? argv[i] + n : nullptr;
    };
    if (const char *v = value("--steps="))
      steps = std::atoll(v);
    else if (const char *v = value("--schedule="))
      schedule = v;
    else if (const char *v = value("--grad-schedule="))
      gradSchedule = v;
    else if (const char *v = value("--seed="))
      seed = std::strtoull(v, nullptr, 10);
    else if (const char *v = value("--lr="))
      lr = std::strtof(v, nullptr);
    else if (const char *v = value("--threads="))
      threads = std::atoi(v);
    else
      return usage();
  }
  if (steps < 1)
    return usage();

  qtrain_bundle *bundle = nullptr;
  if (qtrain_status s = qtrain_bundle_open(bundlePath, &bundle); s != QTRAIN_OK)
    return fail("opening the bundle", s);
  qtrain_bundle_info info;
  info.struct_size = sizeof(info);
  if (qtrain_status s = qtrain_bundle_get_info(bundle, &info); s != QTRAIN_OK)
    return fail("reading the bundle", s);

  qtrain_trainer_options options;
  qtrain_trainer_options_init(&options);
  options.total_steps = steps;
  options.seed = seed;
  options.learning_rate = lr;
  options.threads = threads;
  options.schedule = schedule.empty() ? nullptr : schedule.c_str();
  options.grad_schedule = gradSchedule.empty() ? nullptr : gradSchedule.c_str();
  qtrain_trainer *trainer = nullptr;
  if (qtrain_status s = qtrain_trainer_create(bundle, &options, &trainer);
      s != QTRAIN_OK)
    return fail("creating the trainer", s);
  // A learned (LDP) schedule, whose sites each have their own bits (read
  // before closing: info's strings belong to the bundle).
  const char *used = schedule.empty() ? info.schedule : schedule.c_str();
  bool learned = std::strncmp(used, "ldp", 3) == 0;
  // The trainer keeps the library loaded.
  qtrain_bundle_close(bundle);

  // One synthetic batch labelled by a random linear teacher.
  int64_t features = info.input_numel / info.batch;
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> x(size_t(info.input_numel));
  std::vector<float> teacher(size_t(info.classes * features));
  std::vector<int64_t> labels(size_t(info.labels_numel));
  for (float &v : x)
    v = uniform(rng);
  for (float &v : teacher)
    v = uniform(rng);
  int64_t perSample = info.labels_numel / info.batch;
  for (int64_t n = 0; n < info.batch; ++n) {
    int64_t best = 0;
    float bestScore = -1e30f;
    for (int64_t c = 0; c < info.classes; ++c) {
      float score = 0;
      for (int64_t k = 0; k < features; ++k)
        score +=
            teacher[size_t(c * features + k)] * x[size_t(n * features + k)];
      if (score > bestScore) {
        bestScore = score;
        best = c;
      }
    }
    for (int64_t j = 0; j < perSample; ++j)
      labels[size_t(n * perSample + j)] = best;
  }

  for (long long t = 0; t < steps; ++t) {
    float loss = 0;
    if (qtrain_status s =
            qtrain_trainer_step(trainer, x.data(), labels.data(), &loss);
        s != QTRAIN_OK)
      return fail("training", s);
    int32_t bits = -1, gradBits = -1;
    qtrain_trainer_get_bits(trainer, &bits, &gradBits);
    // Under a learned (LDP) schedule every site has its own bits: `bits` is
    // their MACs-weighted mean, rounded; print each site's too.
    std::string sites;
    if (learned) {
      double mean = 0;
      qtrain_trainer_get_mean_bits(trainer, &mean);
      char buf[32];
      std::snprintf(buf, sizeof(buf), " (mean %.3f, sites", mean);
      sites = buf;
      for (int64_t i = 0; i < info.num_sites; ++i) {
        int32_t b = -1;
        qtrain_trainer_get_site_bits(trainer, i, &b);
        sites += " " + bitsName(b);
      }
      sites += ")";
    }
    std::printf("step %lld bits %s/%s%s loss %.6f\n", t, bitsName(bits).c_str(),
                bitsName(gradBits).c_str(), sites.c_str(), double(loss));
  }

  std::vector<float> logits(size_t(info.batch * info.classes));
  if (qtrain_status s =
          qtrain_trainer_eval(trainer, x.data(), /*bits=*/0, logits.data());
      s != QTRAIN_OK)
    return fail("evaluating", s);
  int64_t correct = 0;
  for (int64_t n = 0; n < info.batch; ++n) {
    int64_t best = 0;
    for (int64_t c = 1; c < info.classes; ++c)
      if (logits[size_t(n * info.classes + c)] >
          logits[size_t(n * info.classes + best)])
        best = c;
    correct += best == labels[size_t(n * perSample)];
  }
  double totalBitOps = 0;
  qtrain_trainer_get_bitops(trainer, nullptr, &totalBitOps);
  std::printf("eval fp32 accuracy %lld/%lld bitops %.0f\n", (long long)correct,
              (long long)info.batch, totalBitOps);
  qtrain_trainer_destroy(trainer);
  return 0;
}
