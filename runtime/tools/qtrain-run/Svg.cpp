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

/// About five round tick values covering [lo, hi].
std::vector<double> ticks(double lo, double hi) {
  double span = hi - lo;
  if (!(span > 0))
    return {lo};
  double raw = span / 5;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  std::vector<double> out;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    out.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  return out;
}

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
  if (xMax == xMin)
    xMax = xMin + 1;
  if (yMax == yMin) {
    yMin -= 0.5;
    yMax += 0.5;
  }
  double plotW = kWidth - kLeft - kRight, plotH = kHeight - kTop - kBottom;
  auto px = [&](double x) {
    return kLeft + (x - xMin) / (xMax - xMin) * plotW;
  };
  auto py = [&](double y) {
    return kTop + plotH - (y - yMin) / (yMax - yMin) * plotH;
  };

  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth
    << "\" height=\"" << kHeight << "\" font-family=\"sans-serif\" "
    << "font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << kWidth / 2 << "\" y=\"22\" text-anchor=\"middle\" "
    << "font-size=\"15\">" << escape(chart.title) << "</text>\n";
  for (double t : ticks(xMin, xMax))
    o << "<line x1=\"" << px(t) << "\" y1=\"" << kTop << "\" x2=\"" << px(t)
      << "\" y2=\"" << kTop + plotH << "\" stroke=\"#eee\"/>\n"
      << "<text x=\"" << px(t) << "\" y=\"" << kTop + plotH + 16
      << "\" text-anchor=\"middle\">" << number(t) << "</text>\n";
  for (double t : ticks(yMin, yMax))
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
    if (!s.name.empty()) {
      o << "<line x1=\"" << kLeft + plotW - 150 << "\" y1=\"" << legendY - 4
        << "\" x2=\"" << kLeft + plotW - 130 << "\" y2=\"" << legendY - 4
        << "\" stroke=\"" << s.color << "\" stroke-width=\"2\"/>\n"
        << "<text x=\"" << kLeft + plotW - 125 << "\" y=\"" << legendY << "\">"
        << escape(s.name) << "</text>\n";
      legendY += 16;
    }
  }
  o << "</svg>\n";
  std::ofstream file(path);
  file << o.str();
  file.close();
  return bool(file);
}
