// SimulationReport: CSV, terminal table and gnuplot chart of a simulation sweep.
#include "balancenet/simulate/SimulationReport.h"

#include <map>

#include <fmt/format.h>

#include "balancenet/core/AtomicFile.h"
#include "balancenet/report/GnuplotChart.h"

namespace balancenet::simulate {
namespace {

const char* kColumns[] = {"policy",
                          "nodes",
                          "samples_per_s",
                          "ideal_samples_per_s",
                          "efficiency",
                          "mean_step_ms",
                          "slowest_1pct_batch",
                          "equal_share",
                          "min_batch",
                          "max_batch",
                          "final_total",
                          "decide_ms_mean",
                          "decide_ms_max",
                          "report_bytes_per_node",
                          "rebalance_comm_ms",
                          "final_rebalance_every",
                          "decisions"};

std::vector<std::string> fields(const SimulationResult& r) {
  return {r.policy,
          std::to_string(r.nodes),
          fmt::format("{:.1f}", r.samplesPerSecond),
          fmt::format("{:.1f}", r.idealSamplesPerSecond),
          fmt::format("{:.4f}", r.efficiency),
          fmt::format("{:.3f}", r.meanStepMs),
          fmt::format("{:.2f}", r.slowestPercentBatch),
          fmt::format("{:.2f}", r.equalShare),
          std::to_string(r.minBatch),
          std::to_string(r.maxBatch),
          std::to_string(r.finalTotal),
          fmt::format("{:.4f}", r.meanDecideMs),
          fmt::format("{:.4f}", r.maxDecideMs),
          std::to_string(r.reportBytesPerNode),
          fmt::format("{:.3f}", r.rebalanceCommMs),
          std::to_string(r.finalRebalanceEvery),
          std::to_string(r.decisions)};
}

}  // namespace

std::string resultsCsv(const std::vector<SimulationResult>& results) {
  std::string out = fmt::format("{}\n", fmt::join(std::begin(kColumns), std::end(kColumns), ","));
  for (const auto& r : results) out += fmt::format("{}\n", fmt::join(fields(r), ","));
  return out;
}

std::string resultsTable(const std::vector<SimulationResult>& results) {
  std::vector<std::vector<std::string>> rows{{std::begin(kColumns), std::end(kColumns)}};
  for (const auto& r : results) rows.push_back(fields(r));
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::string out;
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i)
      out += fmt::format("{:>{}}{}", row[i], width[i], i + 1 < row.size() ? " " : "\n");
  }
  return out;
}

void writeSimulationReport(const std::string& dir, const std::vector<SimulationResult>& results) {
  ensureDirectory(dir);
  writeFileAtomically(dir + "/simulation.csv", resultsCsv(results));
  std::map<std::string, report::Series> byPolicy;
  for (const auto& r : results) {
    auto& series = byPolicy[r.policy];
    series.title = r.policy;
    series.points.emplace_back(r.nodes, r.efficiency);
  }
  report::Chart chart{"Simulated efficiency (samples/s against ideal)", "nodes", "efficiency", {}, true};
  for (auto& [name, series] : byPolicy) chart.series.push_back(series);
  report::renderChart(chart, dir + "/efficiency.png");
}

}  // namespace balancenet::simulate
