// Charts of federated runs.
#include "balancenet/report/FederatedCharts.h"

#include <map>

#include <fmt/format.h>

namespace balancenet::report {

Chart accuracyOverWallTime(const std::vector<FederatedResults>& runs, const std::vector<std::string>& labels) {
  Chart chart{"test accuracy against wall time", "wall time (s)", "test accuracy (%)", {}};
  for (size_t i = 0; i < runs.size(); ++i) {
    Series s{labels.at(i), {}};
    for (const auto& round : runs[i].rounds)
      if (round.testAccuracy) s.points.emplace_back(round.wallSeconds, 100 * *round.testAccuracy);
    if (!s.points.empty()) chart.series.push_back(s);  // gnuplot fails on an empty data block
  }
  return chart;
}

Chart clientStepsPerRound(const FederatedResults& run, const std::string& title) {
  Chart chart{title, "round", "local steps done", {}};
  std::map<int, Series> perClient;  // ordered by client id
  for (const auto& round : run.rounds)
    for (const auto& c : round.clients) {
      auto& s = perClient[c.client];
      s.title = fmt::format("client {}", c.client);
      s.steps = true;
      s.points.emplace_back(round.round, c.doneSteps);
    }
  for (auto& [client, s] : perClient) chart.series.push_back(std::move(s));
  return chart;
}

}  // namespace balancenet::report
