// Charts of one run.
#include "balancenet/report/RunCharts.h"

#include <algorithm>

#include <fmt/format.h>

namespace balancenet::report {

Chart splitChart(const RunResults& run, const std::string& title) {
  Chart chart{title, "step", "samples in the global batch", {}};
  // An elastic job's group may shrink or grow (splits.csv's membership change rows): a rank missing
  // from a split trains no sample there.
  size_t world = 0;
  for (const auto& change : run.splits) world = std::max(world, change.batches.size());
  for (size_t r = 0; r < world; ++r) {
    Series s{fmt::format("rank {}", r), {}, true};
    for (const auto& change : run.splits)
      s.points.emplace_back(change.step, r < change.batches.size() ? change.batches[r] : 0);
    s.points.emplace_back(static_cast<double>(run.updateMsPerStep.size()), s.points.back().second);
    chart.series.push_back(s);
  }
  return chart;
}

Chart batchChart(const RunResults& run, const std::string& title) {
  Chart chart{title, "step", "samples", {}};
  if (run.noiseScalePerStep.empty()) return chart;
  Series batch{"global batch B", {}, true}, noise{"gradient noise scale B_noise (smoothed)", {}};
  for (size_t i = 0; i < run.samplesPerStep.size(); ++i) batch.points.emplace_back(i, run.samplesPerStep[i]);
  for (size_t i = 0; i < run.noiseScalePerStep.size(); ++i)
    if (run.noiseScalePerStep[i] >= 0) noise.points.emplace_back(i, run.noiseScalePerStep[i]);
  chart.series.push_back(batch);
  if (!noise.points.empty()) chart.series.push_back(noise);
  return chart;
}

}  // namespace balancenet::report
