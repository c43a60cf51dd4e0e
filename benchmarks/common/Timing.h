//===- Timing.h - What qtrain's benchmark programs share --------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The median of repeated runs and the nominal clock, as the GEMM and
/// convolution benchmarks report them.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_BENCHMARKS_COMMON_TIMING_H
#define QTRAIN_BENCHMARKS_COMMON_TIMING_H

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace qtrain::bench {

/// Median milliseconds of 9 runs of `run` after 2 warm-ups.
inline double medianMs(const std::function<void()> &run) {
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < 2; ++i)
    run();
  std::vector<double> times;
  for (int i = 0; i < 9; ++i) {
    auto t0 = Clock::now();
    run();
    times.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

/// The nominal clock in GHz from /proc/cpuinfo (0 when unknown).
inline double clockGHz() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("cpu MHz", 0) == 0)
      return std::atof(line.substr(line.find(':') + 1).c_str()) / 1000.0;
  return 0;
}

} // namespace qtrain::bench

#endif // QTRAIN_BENCHMARKS_COMMON_TIMING_H
