// The pipeline picture in gnuplot: boxxyerror boxes on lanes, labels for the wide ones.
#include "balancenet/report/PipelineChart.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "balancenet/report/GnuplotChart.h"

namespace balancenet::report {
namespace {

constexpr int kWidthPx = 1100;
constexpr int kPlotWidthPx = 900;   // about what is left of kWidthPx beside the lane labels and the key
constexpr double kHalfLane = 0.35;  // a box's half height, in lanes
constexpr double kPxPerDigit = 8;   // at the 11-point sans font, with a margin

std::string laneName(int stage, int replica, bool replicated) {
  return replicated ? fmt::format("stage {} / replica {}", stage, replica) : fmt::format("stage {}", stage);
}

}  // namespace

bool renderPipelineChart(const std::vector<PipelineAction>& actions, const std::string& pngPath,
                         const PipelineChartOptions& options) {
  const auto step = actionsOfStep(actions, options.step);
  const auto idle = pipelineIdle(step);              // its ranks are the lanes, in order
  std::map<std::tuple<int, int, int>, size_t> lane;  // (stage, replica, rank) -> lane, 0 on top
  bool replicated = false;
  for (const auto& r : idle.ranks) {
    lane[{r.stage, r.replica, r.rank}] = lane.size();
    replicated = replicated || r.replica > 0;
  }
  double origin = step.front().startMs;
  for (const auto& a : step) origin = std::min(origin, a.startMs);
  const double span = std::max(idle.spanMs, 1e-9);

  // Data blocks: 0 forwards, 1 backwards (x y half-width half-height), 2 labels (x y text).
  std::string blocks[3];
  for (const auto& a : step) {
    const double x = (a.startMs + a.endMs) / 2 - origin, halfWidth = (a.endMs - a.startMs) / 2;
    const size_t y = lane.at({a.stage, a.replica, a.rank});
    blocks[a.backward ? 1 : 0] += fmt::format("{} {} {} {}\n", x, y, halfWidth, kHalfLane);
    const std::string text = std::to_string(a.micro);
    if (2 * halfWidth / span * kPlotWidthPx >= kPxPerDigit * (text.size() + 1))
      blocks[2] += fmt::format("{} {} {}\n", x, y, text);
  }
  const std::string dataPath = pngPath + ".dat", scriptPath = pngPath + ".gp";
  {
    std::ofstream data(dataPath);
    for (const auto& b : blocks)
      if (!b.empty()) data << b << "\n\n";  // gnuplot does not count a block without rows: none is written
  }
  std::string title = fmt::format("pipeline, step {}", idle.step);
  if (!options.schedule.empty()) title += ", " + options.schedule;
  std::string ytics;
  for (const auto& r : idle.ranks)
    ytics += fmt::format("{}{} {}", ytics.empty() ? "" : ", ", gnuplotString(laneName(r.stage, r.replica, replicated)),
                         lane.at({r.stage, r.replica, r.rank}));
  const int lanes = static_cast<int>(idle.ranks.size());
  std::ofstream script(scriptPath);
  script << gnuplotPngTerminal(pngPath, kWidthPx, std::max(260, 110 + 45 * lanes)) << "set title "
         << gnuplotString(title) << "\n"
         << "set xlabel " << gnuplotString("ms from the step's first action") << "\n"
         << "set yrange [" << lanes - 0.5 << ":-0.5]\n"  // reversed: lane 0 (stage 0) on top
         << "set ytics (" << ytics << ")\n"
         << "set xrange [0:" << span << "]\n"
         << "set grid xtics\nset key outside right\nset style fill solid 0.9 border rgb 'black'\n";
  // An empty data block is an error to gnuplot: only those with rows are written and plotted.
  const char* styles[3] = {"with boxxyerror lc rgb '#4c72b0' title 'forward'",
                           "with boxxyerror lc rgb '#dd8452' title 'backward'", "with labels tc rgb 'white' notitle"};
  std::string plot;
  for (int i = 0, written = 0; i < 3; ++i)
    if (!blocks[i].empty())
      plot += fmt::format("{}{} index {} using 1:2:{} {}", plot.empty() ? "plot " : ", ", gnuplotString(dataPath),
                          written++, i < 2 ? "3:4" : "3", styles[i]);
  script << plot << "\n";
  script.close();
  return runGnuplot(scriptPath, pngPath, dataPath);
}

}  // namespace balancenet::report
