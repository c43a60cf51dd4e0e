//===- Plots.h - qtrain-run's plots -----------------------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The plots of a run, drawn from its logged figures in memory
/// (LogHistory, Logs.h): precision.svg, loss.svg and accuracy.svg, and for
/// LDP runs bits.svg, cost.svg and lambda.svg. A resumed run's history
/// starts with the rows its logs kept, so the plots show the whole run. A
/// plot that cannot be written is a warning, not an error.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUN_PLOTS_H
#define QTRAIN_RUN_PLOTS_H

#include "Logs.h"

#include "qtrain/runtime/Bundle.h"

#include <string>

namespace qtrain::run {

/// precision.svg (forward and backward bits per step), loss.svg (the
/// training loss and its mean over 50 steps) and accuracy.svg (the test
/// accuracy per epoch) in `dir`.
void writePlots(const std::string &dir, const LogHistory &history);

void writeLdpPlots(const std::string &dir, const LogHistory &history,
                   const rt::Manifest &m, int minBits, int maxBits,
                   double staticBitOps);

} // namespace qtrain::run

#endif // QTRAIN_RUN_PLOTS_H
