//===- main.cpp - qtrain-bench-selection: cost of per-step selection -----===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Measures what the runtime's variant selection costs per step, for
/// bundles of 5, 50 and 500 sites, next to a whole step of the toy model:
///
///   qtrain-bench-selection [BUNDLE] [--schedule=S]
///
/// BUNDLE (default: the toy fixture of the unit tests) is rewritten into
/// temporary bundles whose sites repeat its own, N in all; the toy library
/// reads the slots of the first two only, so every step stays valid. For
/// each N it times Trainer::selectVariants() (schedule evaluation, the
/// class lookup and the O(sites) row copy), the schedule evaluation alone
/// (two scheduleBits() calls, the part independent of N), a naive per-site
/// search of the variant lists (after the same schedule evaluation) for
/// comparison, and Trainer::step() (which includes the selection). Figures
/// are the best of several repetitions, in nanoseconds per step.
///
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Trainer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace qtrain::rt;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr int64_t kTotalSteps = int64_t(1) << 20;
constexpr int kRepetitions = 5;

double nowNs() {
  return double(std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::steady_clock::now().time_since_epoch())
                    .count());
}

/// Best-of-kRepetitions nanoseconds per call of `body(i)` over `calls`.
template <typename Body>
double timePerCall(int64_t calls, Body body) {
  double best = 1e300;
  for (int r = 0; r < kRepetitions; ++r) {
    double start = nowNs();
    for (int64_t i = 0; i < calls; ++i)
      body(i);
    best = std::min(best, (nowNs() - start) / double(calls));
  }
  return best;
}

/// Writes a copy of `base` with `numSites` sites into a new temporary
/// directory that links the base bundle's other files.
fs::path makeBundle(const fs::path &base, const json &manifest,
                    size_t numSites) {
  std::string pattern =
      (fs::temp_directory_path() / "qtrain-bench-XXXXXX").string();
  if (!mkdtemp(pattern.data())) {
    std::perror("mkdtemp");
    std::exit(1);
  }
  fs::path dir = pattern;
  for (const fs::directory_entry &entry : fs::directory_iterator(base))
    if (entry.path().filename() != "manifest.json")
      fs::create_symlink(fs::absolute(entry.path()),
                         dir / entry.path().filename());
  json out = manifest;
  const json &sites = manifest["sites"];
  out["sites"] = json::array();
  for (size_t i = 0; i < numSites; ++i) {
    json site = sites[i % sites.size()];
    site["name"] = "site" + std::to_string(i);
    out["sites"].push_back(site);
  }
  std::ofstream(dir / "manifest.json") << out.dump(1);
  return dir;
}

/// What a runtime without the class table would do: search every site's
/// variant list each step.
void naiveSelect(const Manifest &m, int bits, int gradBits, int32_t *slots) {
  for (size_t i = 0; i < m.sites.size(); ++i) {
    const std::vector<VariantSpec> &variants = m.sites[i].variants;
    for (size_t j = 0; j < variants.size(); ++j)
      if (variants[j].bits == bits && variants[j].gradBits == gradBits) {
        slots[i] = int32_t(j);
        break;
      }
  }
}

} // namespace

int main(int argc, char **argv) {
  fs::path base = QTRAIN_TOY_BUNDLE;
  std::string schedule = "cpt:3:8";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--schedule=", 0) == 0)
      schedule = arg.substr(11);
    else if (arg[0] != '-')
      base = arg;
    else {
      std::fprintf(stderr,
                   "usage: qtrain-bench-selection [BUNDLE] [--schedule=S]\n");
      return 2;
    }
  }
  std::ifstream manifestFile(base / "manifest.json");
  if (!manifestFile) {
    std::fprintf(stderr,
                 "qtrain-bench-selection: cannot read %s/manifest.json "
                 "(build QTrainRuntimeTests for the toy bundle, or pass one)\n",
                 base.c_str());
    return 1;
  }
  json manifest = json::parse(manifestFile);

  std::printf("selection per step, schedule %s over %lld steps, bundle %s\n",
              schedule.c_str(), (long long)kTotalSteps, base.c_str());
  std::printf("%6s %10s %12s %14s %13s %12s\n", "sites", "select ns",
              "of it sched", "naive scan ns", "toy step ns", "select/step");
  for (size_t numSites : {size_t(5), size_t(50), size_t(500)}) {
    fs::path dir = makeBundle(base, manifest, numSites);
    std::unique_ptr<Bundle> opened;
    if (Status s = openBundle(dir.string(), opened); s.failed()) {
      std::fprintf(stderr, "qtrain-bench-selection: %s\n", s.message().c_str());
      return 1;
    }
    std::shared_ptr<const Bundle> bundle = std::move(opened);
    TrainerOptions options;
    options.schedule = schedule;
    options.totalSteps = kTotalSteps;
    options.learningRate = 1e-3f;
    std::unique_ptr<Trainer> trainer;
    if (Status s = Trainer::create(bundle, options, trainer); s.failed()) {
      std::fprintf(stderr, "qtrain-bench-selection: %s\n", s.message().c_str());
      return 1;
    }
    const Manifest &m = bundle->getManifest();

    // Walk the whole schedule so every class is visited.
    const int64_t calls = 1 << 20;
    int64_t stride = 7919; // prime: visits steps all over the run
    double selectNs = timePerCall(calls, [&](int64_t i) {
      (void)trainer->selectVariants((i * stride) % kTotalSteps);
    });
    // The part of selection that does not depend on the sites.
    volatile int sinkBits = 0;
    double scheduleNs = timePerCall(calls, [&](int64_t i) {
      int64_t step = (i * stride) % kTotalSteps;
      sinkBits = trainer->getBits(step) + trainer->getGradBits(step);
    });
    std::vector<int32_t> slots(numSites);
    double naiveNs = timePerCall(calls, [&](int64_t i) {
      int64_t step = (i * stride) % kTotalSteps;
      naiveSelect(m, trainer->getBits(step), trainer->getGradBits(step),
                  slots.data());
    });
    volatile int32_t sink = slots[numSites - 1];
    (void)sink;

    std::vector<float> x(size_t(m.input.numel));
    std::vector<int64_t> labels(size_t(m.labels.numel));
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = float(int(i % 7) - 3) * 0.25f;
    for (size_t i = 0; i < labels.size(); ++i)
      labels[i] = int64_t(i % size_t(m.classes));
    float loss = 0;
    double stepNs = timePerCall(1 << 16, [&](int64_t) {
      (void)trainer->step(x.data(), labels.data(), loss);
    });
    std::printf("%6zu %10.1f %12.1f %14.1f %13.1f %11.1f%%\n", numSites,
                selectNs, scheduleNs, naiveNs, stepNs,
                100.0 * selectNs / stepNs);
    trainer.reset();
    bundle.reset();
    fs::remove_all(dir);
  }
  return 0;
}
