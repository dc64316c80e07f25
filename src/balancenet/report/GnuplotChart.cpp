// gnuplot scripting: one data block per series, pngcairo terminal.
#include "balancenet/report/GnuplotChart.h"

#include <cstdlib>
#include <fstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace balancenet::report {

std::string gnuplotString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

std::string gnuplotPngTerminal(const std::string& pngPath, int width, int height) {
  // noenhanced: run names hold '_', which gnuplot's enhanced text would take for a subscript.
  return fmt::format("set terminal pngcairo size {},{} font 'sans,11' noenhanced\nset output {}\n", width, height,
                     gnuplotString(pngPath));
}

bool runGnuplot(const std::string& scriptPath, const std::string& pngPath, const std::string& dataPath) {
  const int rc = std::system(fmt::format("gnuplot {} 2>/dev/null", gnuplotString(scriptPath)).c_str());
  if (rc != 0) {
    spdlog::warn("gnuplot could not draw {} (is it installed? apt-get install gnuplot-nox); data kept in {}", pngPath,
                 dataPath);
    return false;
  }
  return true;
}

std::vector<std::pair<double, double>> movingBlocks(const std::vector<double>& values, int window) {
  std::vector<std::pair<double, double>> out;
  for (size_t begin = 0; begin < values.size(); begin += window) {
    const size_t end = std::min(values.size(), begin + window);
    double sum = 0;
    for (size_t i = begin; i < end; ++i) sum += values[i];
    out.emplace_back((begin + end + 1) / 2.0, sum / (end - begin));
  }
  return out;
}

bool renderChart(const Chart& chart, const std::string& pngPath) {
  const std::string dataPath = pngPath + ".dat", scriptPath = pngPath + ".gp";
  {
    std::ofstream data(dataPath);
    for (const auto& s : chart.series) {
      data << "# " << s.title << "\n";
      for (const auto& [x, y] : s.points) data << x << " " << y << "\n";
      data << "\n\n";
    }
  }
  std::ofstream script(scriptPath);
  script << gnuplotPngTerminal(pngPath, 1000, 560) << "set title " << gnuplotString(chart.title) << "\n"
         << "set xlabel " << gnuplotString(chart.xLabel) << "\n"
         << "set ylabel " << gnuplotString(chart.yLabel) << "\n"
         << "set key outside right\nset grid\nset yrange [0:*]\nset offsets 0, 0, graph 0.08, 0\n"
         << (chart.logX ? "set logscale x 2\n" : "") << "plot ";
  for (size_t i = 0; i < chart.series.size(); ++i)
    script << (i ? ", " : "") << gnuplotString(dataPath) << " index " << i << " with "
           << (chart.series[i].steps ? "steps" : "linespoints pt 7 ps 0.5") << " lw 2 title "
           << gnuplotString(chart.series[i].title);
  script << "\n";
  script.close();
  return runGnuplot(scriptPath, pngPath, dataPath);
}

}  // namespace balancenet::report
