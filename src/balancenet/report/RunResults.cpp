// Reading run directories back (for compare and reports).
#include "balancenet/report/RunResults.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/metrics/TimeToAccuracy.h"

namespace balancenet::report {

std::vector<std::vector<std::string>> readCsv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("{}: cannot be read", path));
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream ls(line);
    std::string f;
    while (std::getline(ls, f, ',')) fields.push_back(f);
    rows.push_back(fields);
  }
  if (rows.empty()) throw UsageError(fmt::format("{}: empty", path));
  return rows;
}

int optionalColumn(const std::vector<std::string>& header, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  return it == header.end() ? -1 : static_cast<int>(it - header.begin());
}

int column(const std::vector<std::string>& header, const std::string& name, const std::string& path) {
  const int i = optionalColumn(header, name);
  if (i < 0) throw UsageError(fmt::format("{}: no column '{}'", path, name));
  return i;
}

double RunResults::meanSyncMs() const {
  if (syncMsPerStep.size() < 2) return syncMsPerStep.empty() ? 0 : syncMsPerStep[0];
  double sum = 0;
  for (size_t i = 1; i < syncMsPerStep.size(); ++i) sum += syncMsPerStep[i];
  return sum / static_cast<double>(syncMsPerStep.size() - 1);
}

double RunResults::secondsToAccuracy(double target) const {
  // The run's own time_to_accuracy where it has this target (null: never reached), else its evaluations.
  const auto key = metrics::accuracyKey(target);
  if (summary.contains("time_to_accuracy") && summary["time_to_accuracy"].contains(key)) {
    const auto& reached = summary["time_to_accuracy"][key];
    return reached.is_object() ? reached.value("seconds", -1.0) : -1;
  }
  if (!summary.contains("evaluations")) return -1;
  for (const auto& e : summary["evaluations"])
    if (e["accuracy"].get<double>() >= target) return e.value("train_seconds", -1.0);
  return -1;
}

std::string runName(const std::string& dir) {
  std::filesystem::path path(dir);
  if (path.filename().empty()) path = path.parent_path();
  return path.filename().string();
}

nlohmann::json readSummaryJson(const std::string& dir) {
  const std::string path = dir + "/summary.json";
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("{}: cannot be read", path));
  try {
    return nlohmann::json::parse(in);
  } catch (const std::exception&) {
    throw UsageError(fmt::format("{}: not valid JSON", path));
  }
}

RunResults loadRun(const std::string& dir) {
  RunResults r;
  r.dir = dir;
  const std::string summaryPath = dir + "/summary.json";
  r.summary = readSummaryJson(dir);
  try {  // written since pipeline parallelism came (issue 16)
    r.peakMemoryMb = r.summary.value("peak_memory_mb", std::vector<double>{});
  } catch (const nlohmann::json::exception&) {
    throw UsageError(fmt::format("{}: peak_memory_mb is not a list of numbers", summaryPath));
  }

  const std::string stepsPath = dir + "/steps.csv";
  auto steps = readCsv(stepsPath);
  const int stepCol = column(steps[0], "step", stepsPath), updateCol = column(steps[0], "update_ms", stepsPath),
            syncCol = column(steps[0], "sync_ms", stepsPath), bytesCol = column(steps[0], "bytes_sent", stepsPath),
            rankCol = column(steps[0], "rank", stepsPath), batchCol = column(steps[0], "batch", stepsPath),
            computeCol = column(steps[0], "compute_ms", stepsPath), commCol = column(steps[0], "comm_ms", stepsPath),
            waitCol = column(steps[0], "wait_ms", stepsPath);
  // A pipeline writes a row per stage and replica, and only stage 0's replicas together carry the global
  // batch (every later stage processes the same samples): count a step's samples there alone. Data-parallel
  // rows say stage 0; runs from before pipelines have no stage column, an empty field means stage 0 too.
  const int stageCol = optionalColumn(steps[0], "stage");
  // Columns added later (issue 30), read where the run wrote them.
  const int throttledPeriodsCol = optionalColumn(steps[0], "throttled_periods"),
            throttledCol = optionalColumn(steps[0], "throttled_ms"),
            syncCpuCol = optionalColumn(steps[0], "sync_cpu_ms"), phasesCol = optionalColumn(steps[0], "comm_phases");
  const int noiseCol = optionalColumn(steps[0], "noise_scale");  // issue 32: empty cells where not measured
  const auto optionalValue = [](const std::vector<std::string>& row, int col) {
    return col < 0 || static_cast<size_t>(col) >= row.size() || row[col].empty() ? 0.0 : std::stod(row[col]);
  };
  const auto firstStage = [&](const std::vector<std::string>& row) {
    return stageCol < 0 || static_cast<size_t>(stageCol) >= row.size() || row[stageCol].empty() ||
           std::stoi(row[stageCol]) == 0;
  };
  std::map<int64_t, double> samples, noise;
  std::map<int, std::pair<RankBreakdown, int>> perRank;  // sums and steps counted
  std::map<int64_t, double> slowest;
  std::map<int64_t, std::pair<double, int>> sync;  // sum over ranks, ranks
  double bytes = 0;
  for (size_t i = 1; i < steps.size(); ++i) {
    const int64_t step = std::stoll(steps[i].at(stepCol));
    auto& v = slowest[step];
    v = std::max(v, std::stod(steps[i].at(updateCol)));
    sync[step].first += std::stod(steps[i].at(syncCol));
    sync[step].second += 1;
    bytes += std::stod(steps[i].at(bytesCol));
    if (firstStage(steps[i])) samples[step] += std::stod(steps[i].at(batchCol));
    // Every rank holds the same noise scale; rank 0's row stands for the step.
    if (noiseCol >= 0 && std::stoi(steps[i].at(rankCol)) == 0 && static_cast<size_t>(noiseCol) < steps[i].size() &&
        !steps[i][noiseCol].empty())
      noise[step] = std::stod(steps[i][noiseCol]);
    if (step == 0) continue;
    auto& [sum, count] = perRank[std::stoi(steps[i].at(rankCol))];
    sum.computeMs += std::stod(steps[i].at(computeCol));
    sum.commMs += std::stod(steps[i].at(commCol));
    sum.waitMs += std::stod(steps[i].at(waitCol));
    sum.throttledPeriods += optionalValue(steps[i], throttledPeriodsCol);
    sum.throttledMs += optionalValue(steps[i], throttledCol);
    sum.syncCpuMs += optionalValue(steps[i], syncCpuCol);
    sum.commPhases += optionalValue(steps[i], phasesCol);
    ++count;
  }
  for (const auto& [step, n] : samples) r.samplesPerStep.push_back(n);
  if (!noise.empty())
    for (const auto& [step, n] : samples) r.noiseScalePerStep.push_back(noise.count(step) ? noise[step] : -1.0);
  for (const auto& [rank, acc] : perRank) {
    const auto& [sum, count] = acc;
    r.ranks.push_back({rank, sum.computeMs / count, sum.commMs / count, sum.waitMs / count,
                       sum.throttledPeriods / count, sum.throttledMs / count, sum.syncCpuMs / count,
                       sum.commPhases / count});
  }
  for (const auto& [step, ms] : slowest) r.updateMsPerStep.push_back(ms);
  for (const auto& [step, s] : sync) r.syncMsPerStep.push_back(s.first / s.second);
  if (steps.size() > 1) r.bytesSentPerStep = bytes / static_cast<double>(steps.size() - 1);

  const std::string splitsPath = dir + "/splits.csv";
  if (std::ifstream(splitsPath)) {
    auto rows = readCsv(splitsPath);
    const int s = column(rows[0], "step", splitsPath), rank = column(rows[0], "rank", splitsPath),
              batch = column(rows[0], "batch", splitsPath);
    for (size_t i = 1; i < rows.size(); ++i) {
      const int64_t step = std::stoll(rows[i].at(s));
      const int rk = std::stoi(rows[i].at(rank));
      if (r.splits.empty() || r.splits.back().step != step || rk == 0) r.splits.push_back({step, {}});
      r.splits.back().batches.push_back(std::stoll(rows[i].at(batch)));
    }
  }
  const std::string pipelinePath = dir + "/pipeline.csv";
  if (std::ifstream(pipelinePath)) r.pipeline = readPipelineCsv(pipelinePath);
  return r;
}

}  // namespace balancenet::report
