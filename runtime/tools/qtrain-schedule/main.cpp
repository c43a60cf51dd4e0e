//===- main.cpp - qtrain-schedule: print a precision schedule as CSV -----===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Prints any schedule string (Schedule.h's grammar) as CSV, one row per
/// printed step:
///   step,bits_fw,bits_bw,relative_cost_vs_fp32
/// and a summary on stderr: mean bits, the histogram of forward bits and the
/// savings against a static run at the schedule's maximum bits.
///
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Cost.h"
#include "qtrain/runtime/Schedule.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

using namespace qtrain::rt;

namespace {
const char *const kUsage =
    "usage: qtrain-schedule <schedule> --steps=N [--grad-bits=B] "
    "[--every=K]\n"
    "\n"
    "Prints the precision schedule as CSV on stdout, one row every K steps\n"
    "(step,bits_fw,bits_bw,relative_cost_vs_fp32), and a summary on stderr.\n"
    "\n"
    "options:\n"
    "  --steps=N       total training steps (required, N >= 1)\n"
    "  --grad-bits=B   backward (error) bits, 0 = fp32 (default 8)\n"
    "  --every=K       print every K-th step (default 1)\n"
    "  --help          show this text\n"
    "\n"
    "schedules (bits 0 = fp32; MIN, MAX in [1, 16]):\n"
    "  fp32 | static:B | cpt:MIN:MAX[:cycles=N] | ldp[:MIN:MAX]\n"
    "  cyclic:SHAPE:MIN:MAX[:mode=repeated|triangular]"
    "[:flip=vertical|horizontal]\n"
    "         [:cycles=N][:period=floor|floor_plus_one]\n"
    "         SHAPE = cosine | linear | exponential | exp | rex\n"
    "  NAME:MIN:MAX[:cycles=N] with NAME one of cosine-repeated,\n"
    "         cosine-triangular, linear-repeated, linear-triangular,\n"
    "         exp-repeated, exp-triangular-vertical, "
    "exp-triangular-horizontal,\n"
    "         rex-repeated, rex-triangular-vertical, "
    "rex-triangular-horizontal\n";

int fail(const std::string &message) {
  std::fprintf(stderr, "qtrain-schedule: error: %s\n", message.c_str());
  return 1;
}

/// Parses a decimal integer in [lo, hi]; false on anything else.
bool parseInt(std::string_view text, int64_t lo, int64_t hi, int64_t &value) {
  if (text.empty() || text.size() > 18)
    return false;
  int64_t result = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    result = result * 10 + (c - '0');
  }
  if (result < lo || result > hi)
    return false;
  value = result;
  return true;
}
} // namespace

int main(int argc, char **argv) {
  std::string scheduleText;
  bool haveSchedule = false;
  int64_t steps = -1, gradBits = 8, every = 1;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg.size() >= 2 && arg.substr(0, 2) == "--") {
      size_t eq = arg.find('=');
      std::string_view name = arg.substr(0, eq);
      std::string_view value;
      if (eq != std::string_view::npos) {
        value = arg.substr(eq + 1);
      } else if (name == "--steps" || name == "--grad-bits" ||
                 name == "--every") {
        if (i + 1 >= argc)
          return fail("missing value for " + std::string(name));
        value = argv[++i];
      }
      if (name == "--steps") {
        if (!parseInt(value, 1, INT64_C(1000000000000), steps))
          return fail("invalid --steps '" + std::string(value) +
                      "' (expected an integer >= 1)");
      } else if (name == "--grad-bits") {
        if (!parseInt(value, 0, kMaxScheduleBits, gradBits))
          return fail("invalid --grad-bits '" + std::string(value) +
                      "' (expected an integer in [0, 16], 0 = fp32)");
      } else if (name == "--every") {
        if (!parseInt(value, 1, INT64_C(1000000000000), every))
          return fail("invalid --every '" + std::string(value) +
                      "' (expected an integer >= 1)");
      } else {
        return fail("unknown option '" + std::string(arg) + "' (see --help)");
      }
      continue;
    }
    if (haveSchedule)
      return fail("more than one schedule given ('" + scheduleText + "' and '" +
                  std::string(arg) + "')");
    scheduleText = std::string(arg);
    haveSchedule = true;
  }
  if (!haveSchedule)
    return fail("no schedule given (see --help)");
  if (steps < 0)
    return fail("missing --steps=N");

  Schedule schedule;
  Status status = parseSchedule(scheduleText, schedule);
  if (status.failed())
    return fail(status.message());
  ScheduleCostSummary summary;
  status = summarizeScheduleCost(schedule, int(gradBits), steps, summary);
  if (status.failed())
    return fail(status.message());

  std::printf("step,bits_fw,bits_bw,relative_cost_vs_fp32\n");
  for (int64_t step = 0; step < steps; step += every) {
    int bits = scheduleBits(schedule, step, steps);
    std::printf("%lld,%d,%d,%.6f\n", static_cast<long long>(step), bits,
                int(gradBits), relativeCostVsFp32(bits, int(gradBits)));
  }

  std::string canonical = printSchedule(schedule);
  std::fprintf(stderr, "schedule: %s, %lld steps, grad bits %d",
               canonical.c_str(), static_cast<long long>(steps), int(gradBits));
  if (int64_t period = schedulePeriod(schedule, steps))
    std::fprintf(stderr, ", period %lld", static_cast<long long>(period));
  std::fprintf(stderr, "\n");
  if (schedule.kind == ScheduleKind::Learned)
    std::fprintf(stderr, "note: ldp bits are learned per layer during "
                         "training; shown are the bits at p = 0\n");
  std::fprintf(stderr, "mean bits: %.4f (fp32 counted as 32)\n",
               summary.meanBits);
  std::fprintf(stderr, "histogram:");
  for (int bits = 0; bits <= kMaxScheduleBits; ++bits) {
    if (summary.histogram[bits] == 0)
      continue;
    std::fprintf(stderr, " %s:%lld",
                 bits == 0 ? "fp32" : std::to_string(bits).c_str(),
                 static_cast<long long>(summary.histogram[bits]));
  }
  std::fprintf(stderr, "\n");
  std::string baseline = summary.staticMaxBits == 0
                             ? std::string("fp32")
                             : std::to_string(summary.staticMaxBits);
  std::string gradText =
      gradBits == 0 ? std::string("fp32") : std::to_string(gradBits);
  std::fprintf(stderr, "relative cost vs fp32: %.6f\n",
               summary.relativeCostVsFp32);
  std::fprintf(stderr, "savings vs static %s/%s: %.2f%% (relative cost %.6f)\n",
               baseline.c_str(), gradText.c_str(),
               100.0 * summary.savingsVsStaticMax,
               summary.relativeCostVsStaticMax);
  return 0;
}
