//===- Progress.cpp - qtrain-run's terminal output ------------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "Progress.h"

#include "qtrain/runtime/Cost.h"

#include <algorithm>
#include <cstdio>
#include <unistd.h>

using namespace qtrain::run;
namespace rt = qtrain::rt;

std::string qtrain::run::hms(double seconds) {
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

std::string qtrain::run::precisionName(int bits) {
  return bits == kLearnedBits ? "ldp"
         : bits == 0          ? "fp32"
                              : std::to_string(bits);
}

/// "8 bits", or "fp32".
std::string qtrain::run::precisionPhrase(int bits) {
  return bits == kLearnedBits ? "the learned bits"
         : bits == 0          ? "fp32"
                              : std::to_string(bits) + " bits";
}

/// The forward bits of a step: "8" or "fp32"; for an LDP step
/// (`siteBits`, each site's bits) the bits of every site, ','-separated
/// ("3,5,8"), or with more than kMaxListedSites sites their MACs-weighted
/// `mean` and range ("5.42 [3-8]").
std::string qtrain::run::forwardBitsName(int bits,
                                         const std::vector<int> &siteBits,
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

Progress::Progress(const std::string &mode, int64_t stepsPerEpoch,
                   int64_t epochs)
    : stepsPerEpoch(stepsPerEpoch), epochs(epochs) {
  bar = mode == "bar" || (mode == "auto" && ::isatty(STDERR_FILENO));
  none = mode == "none";
}

void Progress::update(int64_t step, float loss, const std::string &bits,
                      int gradBits, double stepsPerSecond) {
  if (none)
    return;
  int64_t epoch = step / stepsPerEpoch, pos = step % stepsPerEpoch + 1;
  double eta = stepsPerSecond > 0
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

void Progress::clear() {
  if (dirty)
    std::fputs("\r\033[K", stderr);
  dirty = false;
}

void qtrain::run::printSummary(const rt::Trainer &trainer,
                               const StepTimes &stepTimes, double accuracy,
                               int evalBits, double wall, int64_t start,
                               int64_t total) {
  const rt::Manifest &m = trainer.getBundle().getManifest();
  double macs = 0;
  for (const rt::SiteSpec &s : m.sites)
    macs += double(s.macs);
  double totalBitOps = trainer.getTotalBitOps();
  double static8 = double(total) * rt::bitOps(macs, 8, 8);
  double fp32 = double(total) * rt::bitOps(macs, 0, 0);
  std::printf("\nfinal test accuracy: %.2f%% (at %s)\n", 100.0 * accuracy,
              precisionPhrase(evalBits).c_str());
  std::printf("wall time: %s (%.1f s) for %lld steps this session\n",
              hms(wall).c_str(), wall, (long long)(total - start));
  if (trainer.isLearned()) {
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
  if (trainer.hasLossScale())
    std::printf("loss scale: %g now, %lld steps skipped this session\n",
                trainer.getLossScale(), (long long)trainer.getSkippedSteps());
  if (trainer.hasPromotion())
    std::printf("promoted to the high format: %zu of %zu low P/Y tensors\n",
                trainer.getNumPromoted(), trainer.getNumPromotable());
  if (trainer.getMaxStepPeakBytes() >= 0)
    std::printf("peak memory of the step's buffers: %.2f MiB (%lld bytes)\n",
                double(trainer.getMaxStepPeakBytes()) / (1024.0 * 1024.0),
                (long long)trainer.getMaxStepPeakBytes());
}
