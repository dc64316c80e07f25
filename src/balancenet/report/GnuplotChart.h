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
  bool logX = false;  // x on a log2 scale (node counts 8 ... 4,096)
};

// Writes <pngPath> (and the data and script beside it, for anyone who wants to restyle the chart).
// Returns false, with a warning logged, when gnuplot is missing or fails: pictures are optional.
bool renderChart(const Chart& chart, const std::string& pngPath);

// The pieces every chart's script shares (the pipeline chart draws boxes, not series):
std::string gnuplotString(const std::string& s);  // a double-quoted gnuplot string literal
// "set terminal pngcairo ... / set output": the first lines of a script drawing a width x height PNG.
std::string gnuplotPngTerminal(const std::string& pngPath, int width, int height);
// Runs gnuplot on the script; false, with a warning naming pngPath and where its data stays, when it fails.
bool runGnuplot(const std::string& scriptPath, const std::string& pngPath, const std::string& dataPath);

// Mean of each consecutive window of `window` values, at the window's middle x (1-based steps).
std::vector<std::pair<double, double>> movingBlocks(const std::vector<double>& values, int window);

}  // namespace balancenet::report
