// Charts of one run.
#include "balancenet/report/RunCharts.h"

#include <fmt/format.h>

namespace balancenet::report {

Chart splitChart(const RunResults& run, const std::string& title) {
  Chart chart{title, "step", "samples in the global batch", {}};
  const size_t world = run.splits.empty() ? 0 : run.splits.front().batches.size();
  for (size_t r = 0; r < world; ++r) {
    Series s{fmt::format("node {}", r), {}, true};
    for (const auto& change : run.splits) s.points.emplace_back(change.step, change.batches.at(r));
    s.points.emplace_back(static_cast<double>(run.updateMsPerStep.size()), s.points.back().second);
    chart.series.push_back(s);
  }
  return chart;
}

}  // namespace balancenet::report
