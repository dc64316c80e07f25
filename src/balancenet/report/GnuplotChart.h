// GnuplotChart: line charts as PNG through gnuplot (Debian's gnuplot), from in-memory series.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace balancenet::report {

struct Series {
  std::string title;
  std::vector<std::pair<double, double>> points;  // (x, y)
  bool steps = false;                             // draw as a step function (splits change at decision steps)
};

struct Chart {
  std::string title, xLabel, yLabel;
  std::vector<Series> series;
};

// Writes <pngPath> (and the data and script beside it, for anyone who wants to restyle the chart).
// Returns false, with a warning logged, when gnuplot is missing or fails: pictures are optional.
bool renderChart(const Chart& chart, const std::string& pngPath);

// Mean of each consecutive window of `window` values, at the window's middle x (1-based steps).
std::vector<std::pair<double, double>> movingBlocks(const std::vector<double>& values, int window);

}  // namespace balancenet::report
