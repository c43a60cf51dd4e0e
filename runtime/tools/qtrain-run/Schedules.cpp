//===- Schedules.cpp - What qtrain-run's precisions do --------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "Schedules.h"

#include "Fatal.h"
#include "Progress.h"

#include "qtrain/runtime/Cost.h"
#include "qtrain/runtime/RangeTest.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

using namespace qtrain::run;
namespace rt = qtrain::rt;

namespace {

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

} // namespace

void qtrain::run::printSchedules(const rt::Schedule &fw,
                                 const std::string &fwText,
                                 const rt::Schedule &bw,
                                 const std::string &bwText, int64_t total,
                                 int64_t stepsPerEpoch, const rt::Manifest &m) {
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

void qtrain::run::checkScheduleLength(const rt::Schedule &s,
                                      const std::string &text, const char *flag,
                                      int64_t total) {
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

int qtrain::run::rangeTest(const Options &o,
                           std::shared_ptr<const rt::Bundle> bundle,
                           const Data &d, const rt::Schedule &grad,
                           const std::string &gradSchedule) {
  const rt::Manifest &m = bundle->getManifest();
  std::vector<int> candidates = rt::rangeTestCandidates(m, grad, gradSchedule);
  if (candidates.empty())
    die("the bundle has no integer precision to test (compile it with "
        "--bits=2:8)");
  std::printf("precision range test: %lld steps per precision, accuracy of "
              "the first and last %lld batches, threshold %+.3f\n",
              (long long)o.rangeSteps, (long long)o.rangeWindow,
              o.rangeThreshold);
  std::printf("%6s %10s %10s %10s\n", "bits", "first", "last", "gain");
  rt::RangeTestOptions options;
  options.steps = o.rangeSteps;
  options.window = o.rangeWindow;
  options.threshold = o.rangeThreshold;
  options.seed = o.seed;
  options.input = d.input;
  auto report = [](const rt::RangePoint &p, const rt::RangeDecision &sofar) {
    if (p.diverged())
      std::printf("%6d   diverged at step %lld: no gain\n", p.bits,
                  (long long)p.divergedAt);
    else
      std::printf("%6d %9.2f%% %9.2f%% %+9.2f%s\n", p.bits,
                  100 * p.firstAccuracy, 100 * p.lastAccuracy, 100 * p.gain(),
                  sofar.bmin == p.bits ? "  <- Bmin" : "");
    std::fflush(stdout);
  };
  rt::RangeDecision decision;
  if (rt::Status s =
          rt::runRangeTest(std::move(bundle), candidates,
                           trainerOptions(o, "", gradSchedule, o.rangeSteps),
                           d.train, options, report, decision);
      s.failed())
    die(s.message());
  auto servable = [&](const rt::Schedule &schedule, const std::string &text) {
    return rt::validateSchedule(m, schedule, text, grad, gradSchedule).isOk();
  };
  if (!decision.diverged.empty()) {
    std::string list;
    for (int b : decision.diverged)
      list += (list.empty() ? "" : ", ") + std::to_string(b);
    std::printf("training diverged at %s bits (counted as no gain; a smaller "
                "--lr may train there)\n",
                list.c_str());
  }
  int bmin = decision.bmin;
  if (bmin < 0) {
    std::printf("no precision gained more than %.3f: Bmin not found (train "
                "longer with --range-test-steps)\n",
                o.rangeThreshold);
    return 1;
  }
  int bmax = decision.bmax;
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
