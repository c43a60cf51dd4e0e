//===- Schedules.h - What qtrain-run's precisions do ------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The precisions of a run before it trains: --print-schedule, the check
/// that a cyclic schedule fits the run's length, and --range-test's report
/// (the test itself is rt::runRangeTest, RangeTest.h).
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUN_SCHEDULES_H
#define QTRAIN_RUN_SCHEDULES_H

#include "Options.h"
#include "RunData.h"

#include "qtrain/runtime/Bundle.h"
#include "qtrain/runtime/Schedule.h"

#include <cstdint>
#include <memory>
#include <string>

namespace qtrain::run {

/// Prints the schedules over the run: the precision changes and the
/// histogram of (bits, grad_bits) steps with their share of BitOps.
void printSchedules(const rt::Schedule &fw, const std::string &fwText,
                    const rt::Schedule &bw, const std::string &bwText,
                    int64_t total, int64_t stepsPerEpoch,
                    const rt::Manifest &m);

/// A cyclic schedule needs at least one step per cycle (refused otherwise,
/// with what to give instead), and periods long enough to rise from its
/// min to its max bits (a warning otherwise: with CPT's 32 cycles, 32 to 63
/// steps make every period one step long, at min bits).
/// `flag` names the schedule's flag, `text` its value.
void checkScheduleLength(const rt::Schedule &s, const std::string &text,
                         const char *flag, int64_t total);

/// --range-test on `d`'s training set with backward schedule `grad`
/// (spelled `gradSchedule`): prints each precision's gain and the
/// schedule it suggests; returns the exit code (1: Bmin not found).
int rangeTest(const Options &o, std::shared_ptr<const rt::Bundle> bundle,
              const Data &d, const rt::Schedule &grad,
              const std::string &gradSchedule);

} // namespace qtrain::run

#endif // QTRAIN_RUN_SCHEDULES_H
