//===- Plots.cpp - qtrain-run's plots -------------------------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "Plots.h"

#include "Svg.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

using namespace qtrain::run;
namespace rt = qtrain::rt;

void qtrain::run::writeLdpPlots(const std::string &dir,
                                const LogHistory &history,
                                const rt::Manifest &m, int minBits, int maxBits,
                                double staticBitOps) {
  qtrain::run::Heatmap map{"Bits per layer (LDP)", "step",         {}, {}, {},
                           double(minBits),        double(maxBits)};
  for (const rt::SiteSpec &site : m.sites)
    map.rows.push_back(site.name + " (" + site.op + ")");
  map.values.resize(m.sites.size());
  std::vector<std::pair<double, double>> cost, lambda;
  for (const LoggedStep &s : history.steps) {
    if (s.siteBits.empty() || s.siteBits.size() != m.sites.size())
      continue;
    map.xs.push_back(s.step);
    for (size_t i = 0; i < s.siteBits.size(); ++i)
      map.values[i].push_back(s.siteBits[i]);
    cost.push_back({s.step, s.bitOps / staticBitOps});
    lambda.push_back({s.step, s.lambda});
  }
  if (map.xs.empty())
    return;
  using qtrain::run::Chart;
  Chart costChart{"BitOps per step relative to static " +
                      std::to_string(maxBits) + "-bit forward",
                  "step",
                  "relative cost",
                  {{"cost", "#1f77b4", cost, true}}};
  Chart lambdaChart{"Weight of the cost term",
                    "step",
                    "lambda",
                    {{"lambda", "#d62728", lambda, false}}};
  if (!qtrain::run::writeHeatmapSvg(dir + "/bits.svg", map))
    std::fprintf(stderr, "qtrain-run: warning: cannot write %s/bits.svg\n",
                 dir.c_str());
  for (auto [name, chart] : {std::pair("cost.svg", &costChart),
                             std::pair("lambda.svg", &lambdaChart)})
    if (!qtrain::run::writeSvg(dir + "/" + name, *chart))
      std::fprintf(stderr, "qtrain-run: warning: cannot write %s/%s\n",
                   dir.c_str(), name);
}

void qtrain::run::writePlots(const std::string &dir,
                             const LogHistory &history) {
  std::vector<std::pair<double, double>> bits, gradBits, loss, smooth, acc;
  std::vector<double> window;
  double windowSum = 0;
  for (const LoggedStep &s : history.steps) {
    if (!s.complete)
      continue;
    bits.push_back({s.step, s.bits == 0 ? 32 : s.bits});
    gradBits.push_back({s.step, s.gradBits == 0 ? 32 : s.gradBits});
    loss.push_back({s.step, s.loss});
    window.push_back(s.loss);
    windowSum += s.loss;
    if (window.size() > 50) {
      windowSum -= window[window.size() - 51];
    }
    smooth.push_back(
        {s.step, windowSum / double(std::min<size_t>(window.size(), 50))});
  }
  for (const LoggedEpoch &e : history.epochs)
    acc.push_back({e.epoch + 1, 100.0 * e.accuracy});
  using qtrain::run::Chart;
  Chart precision{"Precision per step",
                  "step",
                  "bits (fp32 shown as 32)",
                  {{"forward", "#1f77b4", bits, true},
                   {"backward", "#d62728", gradBits, true, 1.0, 0.6}}};
  Chart lossChart{"Training loss",
                  "step",
                  "cross-entropy",
                  {{"per step", "#999999", loss, false, 0.7, 0.5},
                   {"mean of 50 steps", "#1f77b4", smooth, false, 2.0}}};
  Chart accChart{"Test accuracy",
                 "epoch",
                 "accuracy (%)",
                 {{"test", "#2ca02c", acc, false, 2.0, 1.0, true}}};
  for (auto [name, chart] : {std::pair("precision.svg", &precision),
                             std::pair("loss.svg", &lossChart),
                             std::pair("accuracy.svg", &accChart)})
    if (!qtrain::run::writeSvg(dir + "/" + name, *chart))
      std::fprintf(stderr, "qtrain-run: warning: cannot write %s/%s\n",
                   dir.c_str(), name);
}
