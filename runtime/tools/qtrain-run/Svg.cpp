//===- Svg.cpp - Line charts as standalone SVG files ----------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "Svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

using namespace qtrain::run;

namespace {

constexpr double kWidth = 720, kHeight = 360;
constexpr double kLeft = 70, kRight = 20, kTop = 40, kBottom = 50;
/// An upper bound of the width of a character at font-size 12 (sans-serif
/// digits and lower case are about 6.7 px), for sizing margins to labels.
constexpr double kCharWidth = 7.5;
/// The radius of a point's marker.
constexpr double kMarkerRadius = 3;

} // namespace

std::vector<double> qtrain::run::chartTicks(double lo, double hi) {
  double span = hi - lo;
  if (!(span > 0) || !std::isfinite(span))
    return {lo};
  double raw = span / 5;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  // Ticks by index, so that a step below the values' resolution (a range
  // of a few ulps around a large value) cannot stall; such a range gets
  // its ends.
  // The indices must be exact integers (below 2^52), else counting them
  // stalls as the step does.
  double first = std::ceil(lo / step), last = std::floor(hi / step + 1e-9);
  if (!(last - first >= 0 && last - first <= 20) || lo + step == lo ||
      hi - step == hi || !(std::fabs(first) < 0x1p52) ||
      !(std::fabs(last) < 0x1p52))
    return {lo, hi};
  std::vector<double> out;
  for (int64_t i = int64_t(first), end = int64_t(last); i <= end; ++i) {
    double v = double(i) * step;
    out.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  }
  return out;
}

namespace {

std::string number(double v) {
  char buf[32];
  if (std::fabs(v) >= 1e5 || (std::fabs(v) < 1e-3 && v != 0))
    std::snprintf(buf, sizeof(buf), "%.2g", v);
  else
    std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

std::string escape(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

/// The opening of every plot: the canvas `width` wide, a white
/// background, the title.
void writeHeader(std::ostringstream &o, const std::string &title,
                 double width = kWidth) {
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width
    << "\" height=\"" << kHeight << "\" viewBox=\"0 0 " << width << " "
    << kHeight << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << width / 2 << "\" y=\"22\" text-anchor=\"middle\" "
    << "font-size=\"15\">" << escape(title) << "</text>\n";
}

/// Closes the plot and writes it to `path`.
bool writeFile(const std::string &path, std::ostringstream &o) {
  o << "</svg>\n";
  std::ofstream file(path);
  file << o.str();
  file.close();
  return bool(file);
}

} // namespace

bool qtrain::run::writeSvg(const std::string &path, const Chart &chart) {
  double xMin = INFINITY, xMax = -INFINITY, yMin = INFINITY, yMax = -INFINITY;
  for (const Series &s : chart.series)
    for (auto [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y))
        continue;
      xMin = std::min(xMin, x);
      xMax = std::max(xMax, x);
      yMin = std::min(yMin, y);
      yMax = std::max(yMax, y);
    }
  if (!(xMin <= xMax)) {
    xMin = 0;
    xMax = 1;
    yMin = 0;
    yMax = 1;
  }
  if (chart.yMin < chart.yMax) {
    yMin = chart.yMin;
    yMax = chart.yMax;
  }
  // A point range gets a width its values resolve (0.5 beside 1e17 is
  // nothing).
  if (xMax == xMin)
    xMax = xMin + std::max(1.0, std::fabs(xMin) * 1e-6);
  if (yMax == yMin) {
    double pad = std::max(0.5, std::fabs(yMin) * 1e-6);
    yMin -= pad;
    yMax += pad;
  }
  double plotW = kWidth - kLeft - kRight, plotH = kHeight - kTop - kBottom;
  auto px = [&](double x) {
    return kLeft + (x - xMin) / (xMax - xMin) * plotW;
  };
  auto py = [&](double y) {
    return kTop + plotH - (y - yMin) / (yMax - yMin) * plotH;
  };

  std::ostringstream o;
  writeHeader(o, chart.title);
  for (double t : chartTicks(xMin, xMax))
    o << "<line x1=\"" << px(t) << "\" y1=\"" << kTop << "\" x2=\"" << px(t)
      << "\" y2=\"" << kTop + plotH << "\" stroke=\"#eee\"/>\n"
      << "<text x=\"" << px(t) << "\" y=\"" << kTop + plotH + 16
      << "\" text-anchor=\"middle\">" << number(t) << "</text>\n";
  for (double t : chartTicks(yMin, yMax))
    o << "<line x1=\"" << kLeft << "\" y1=\"" << py(t) << "\" x2=\""
      << kLeft + plotW << "\" y2=\"" << py(t) << "\" stroke=\"#eee\"/>\n"
      << "<text x=\"" << kLeft - 6 << "\" y=\"" << py(t) + 4
      << "\" text-anchor=\"end\">" << number(t) << "</text>\n";
  o << "<rect x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\"" << plotW
    << "\" height=\"" << plotH << "\" fill=\"none\" stroke=\"#333\"/>\n"
    << "<text x=\"" << kLeft + plotW / 2 << "\" y=\"" << kHeight - 12
    << "\" text-anchor=\"middle\">" << escape(chart.xLabel) << "</text>\n"
    << "<text transform=\"translate(16," << kTop + plotH / 2
    << ") rotate(-90)\" text-anchor=\"middle\">" << escape(chart.yLabel)
    << "</text>\n";
  double legendY = kTop + 14;
  for (const Series &s : chart.series) {
    o << "<polyline fill=\"none\" stroke=\"" << s.color << "\" stroke-width=\""
      << s.width << "\" stroke-opacity=\"" << s.opacity << "\" points=\"";
    bool first = true;
    double lastY = 0;
    for (auto [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y))
        continue;
      y = std::clamp(y, yMin, yMax);
      if (s.steps && !first)
        o << px(x) << "," << py(lastY) << " ";
      o << px(x) << "," << py(y) << " ";
      lastY = y;
      first = false;
    }
    o << "\"/>\n";
    // A marker on every point when asked, and always on a lone point (a
    // polyline of one point draws nothing).
    size_t finite = 0;
    for (auto [x, y] : s.points)
      finite += std::isfinite(x) && std::isfinite(y);
    if (s.markers || finite == 1)
      for (auto [x, y] : s.points) {
        if (!std::isfinite(x) || !std::isfinite(y))
          continue;
        o << "<circle cx=\"" << px(x) << "\" cy=\""
          << py(std::clamp(y, yMin, yMax)) << "\" r=\"" << kMarkerRadius
          << "\" fill=\"" << s.color << "\" fill-opacity=\"" << s.opacity
          << "\"/>\n";
      }
    if (!s.name.empty()) {
      o << "<line x1=\"" << kLeft + plotW - 150 << "\" y1=\"" << legendY - 4
        << "\" x2=\"" << kLeft + plotW - 130 << "\" y2=\"" << legendY - 4
        << "\" stroke=\"" << s.color << "\" stroke-width=\"2\"/>\n"
        << "<text x=\"" << kLeft + plotW - 125 << "\" y=\"" << legendY << "\">"
        << escape(s.name) << "</text>\n";
      legendY += 16;
    }
  }
  return writeFile(path, o);
}

bool qtrain::run::writeHeatmapSvg(const std::string &path, const Heatmap &map) {
  size_t columns = map.xs.size(), rows = map.rows.size();
  double xMin = columns ? map.xs.front() : 0;
  double xMax = columns ? map.xs.back() + 1 : 1;
  // The left margin holds the longest row label (right-aligned 6 px left
  // of the plot), the canvas widens by what it adds.
  size_t longest = 0;
  for (const std::string &name : map.rows)
    longest = std::max(longest, name.size());
  double left = std::max(kLeft, 6 + double(longest) * kCharWidth + 6);
  double width = kWidth - kLeft + left;
  double plotW = kWidth - kLeft - kRight - 60, plotH = kHeight - kTop - kBottom;
  double rowH = rows ? plotH / double(rows) : plotH;
  auto px = [&](double x) { return left + (x - xMin) / (xMax - xMin) * plotW; };
  // Light yellow (lo) to dark blue (hi).
  auto color = [&](double v) {
    double t = map.hi > map.lo
                   ? std::clamp((v - map.lo) / (map.hi - map.lo), 0.0, 1.0)
                   : 1.0;
    int r = int(255 + t * (8 - 255)), g = int(247 + t * (48 - 247)),
        b = int(188 + t * (107 - 188));
    char buf[16];
    std::snprintf(buf, sizeof(buf), "#%02x%02x%02x", r, g, b);
    return std::string(buf);
  };
  std::ostringstream o;
  writeHeader(o, map.title, width);
  // Runs of equal values in a row become one rectangle.
  for (size_t r = 0; r < rows; ++r) {
    const std::vector<double> &row = map.values[r];
    double y = kTop + double(r) * rowH;
    for (size_t c = 0; c < columns && c < row.size();) {
      size_t end = c + 1;
      while (end < columns && end < row.size() && row[end] == row[c])
        ++end;
      double x0 = px(map.xs[c]);
      double x1 = end < columns ? px(map.xs[end]) : px(xMax);
      o << "<rect x=\"" << x0 << "\" y=\"" << y << "\" width=\""
        << std::max(x1 - x0, 0.5) << "\" height=\"" << rowH << "\" fill=\""
        << color(row[c]) << "\"/>\n";
      c = end;
    }
    o << "<text x=\"" << left - 6 << "\" y=\"" << y + rowH / 2 + 4
      << "\" text-anchor=\"end\">" << escape(map.rows[r]) << "</text>\n";
  }
  for (double t : chartTicks(xMin, xMax))
    o << "<text x=\"" << px(t) << "\" y=\"" << kTop + plotH + 16
      << "\" text-anchor=\"middle\">" << number(t) << "</text>\n";
  o << "<rect x=\"" << left << "\" y=\"" << kTop << "\" width=\"" << plotW
    << "\" height=\"" << plotH << "\" fill=\"none\" stroke=\"#333\"/>\n"
    << "<text x=\"" << left + plotW / 2 << "\" y=\"" << kHeight - 12
    << "\" text-anchor=\"middle\">" << escape(map.xLabel) << "</text>\n";
  // Legend: one swatch per integer value.
  double legendX = left + plotW + 15, legendY = kTop;
  int lo = int(std::ceil(map.lo)), hi = int(std::floor(map.hi));
  for (int v = hi; v >= lo; --v) {
    o << "<rect x=\"" << legendX << "\" y=\"" << legendY
      << "\" width=\"14\" height=\"14\" fill=\"" << color(v)
      << "\" stroke=\"#333\" stroke-width=\"0.5\"/>\n"
      << "<text x=\"" << legendX + 20 << "\" y=\"" << legendY + 11 << "\">" << v
      << "</text>\n";
    legendY += 18;
  }
  return writeFile(path, o);
}
