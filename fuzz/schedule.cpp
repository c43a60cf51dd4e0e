//===- schedule.cpp - Fuzz the schedule strings of the CLIs -----*- C++ -*-===//
//
// Part of the qtrain project.
//
// The input is a schedule string (qtrain-run --schedule, qtrain-compile
// --schedule, qtrain-schedule) or a bit list (--bits). A parsed schedule is
// printed, reparsed (the canonical form must round-trip) and evaluated at
// steps across its range: bits must stay within [0, 16].
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/Schedule.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

using namespace qtrain::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  std::vector<int> bits;
  (void)parseBitList(text, bits);
  Schedule s;
  if (parseSchedule(text, s).failed())
    return 0;
  std::string printed = printSchedule(s);
  Schedule again;
  if (parseSchedule(printed, again).failed() || printSchedule(again) != printed)
    std::abort();
  for (int64_t total : {int64_t(1), int64_t(7), int64_t(1000), int64_t(64000),
                        int64_t(2147483647)}) {
    if (verifySchedule(s, total).failed())
      continue;
    for (int64_t step : {int64_t(0), int64_t(1), total / 3, total - 1, total,
                         int64_t(2147483647)}) {
      int b = scheduleBits(s, step, total);
      if (b < 0 || b > kMaxScheduleBits)
        std::abort();
    }
  }
  (void)ldpBits(float(size) / 7.0f, 1, 16);
  return 0;
}
