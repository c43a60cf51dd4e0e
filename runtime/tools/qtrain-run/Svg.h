//===- Svg.h - Line charts as standalone SVG files --------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// qtrain-run's plots: line charts and heatmaps written as plain SVG (no
/// dependencies), with axes, ticks, labels and a legend.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUN_SVG_H
#define QTRAIN_RUN_SVG_H

#include <string>
#include <utility>
#include <vector>

namespace qtrain::run {

struct Series {
  std::string name;
  std::string color;
  std::vector<std::pair<double, double>> points;
  /// Draw as steps (value held until the next x), for precisions.
  bool steps = false;
  double width = 1.5;
  double opacity = 1.0;
  /// Draw a marker (a dot) on every point; a series of one point always
  /// gets one.
  bool markers = false;
};

struct Chart {
  std::string title, xLabel, yLabel;
  std::vector<Series> series;
  /// Fixed y range when yMin < yMax; else from the data.
  double yMin = 0, yMax = 0;
};

/// About five round tick values covering [lo, hi] (steps of 1, 2 or 5
/// times a power of ten); [lo] for an empty or infinite range, and just
/// the ends for a range too narrow for its values' resolution.
std::vector<double> chartTicks(double lo, double hi);

/// Writes `chart` to `path`; returns false (with errno set) on failure.
bool writeSvg(const std::string &path, const Chart &chart);

/// A heatmap: one row per name, one column per x (ascending), each cell
/// colored by its value on a scale from `lo` (light) to `hi` (dark), with
/// a legend of the integer values in [lo, hi].
struct Heatmap {
  std::string title, xLabel;
  std::vector<std::string> rows;
  std::vector<double> xs;
  /// values[row][column].
  std::vector<std::vector<double>> values;
  double lo = 0, hi = 1;
};

/// Writes `map` to `path`; returns false on failure.
bool writeHeatmapSvg(const std::string &path, const Heatmap &map);

} // namespace qtrain::run

#endif // QTRAIN_RUN_SVG_H
