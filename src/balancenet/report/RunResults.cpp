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

namespace {

// summary.json's peak_memory_mb, per rank: written since pipeline parallelism came (issue 16), empty before.
std::vector<double> readPeakMemoryMb(const nlohmann::json& summary, const std::string& summaryPath) {
  try {
    return summary.value("peak_memory_mb", std::vector<double>{});
  } catch (const nlohmann::json::exception&) {
    throw UsageError(fmt::format("{}: peak_memory_mb is not a list of numbers", summaryPath));
  }
}

// steps.csv's columns: those every run wrote, then those added later (-1 where the run did not write them).
struct StepsColumns {
  int step = 0, update = 0, sync = 0, bytes = 0, rank = 0, batch = 0, compute = 0, comm = 0, wait = 0;
  // A pipeline writes a row per stage and replica, and only stage 0's replicas together carry the global
  // batch (every later stage processes the same samples): count a step's samples there alone. Data-parallel
  // rows say stage 0; runs from before pipelines have no stage column, an empty field means stage 0 too.
  int stage = -1;
  // Columns added later (issue 30), read where the run wrote them.
  int throttledPeriods = -1, throttled = -1, syncCpu = -1, phases = -1;
  int noise = -1;  // issue 32: empty cells where not measured
};

StepsColumns stepsColumns(const std::vector<std::string>& header, const std::string& path) {
  StepsColumns col;
  col.step = column(header, "step", path);
  col.update = column(header, "update_ms", path);
  col.sync = column(header, "sync_ms", path);
  col.bytes = column(header, "bytes_sent", path);
  col.rank = column(header, "rank", path);
  col.batch = column(header, "batch", path);
  col.compute = column(header, "compute_ms", path);
  col.comm = column(header, "comm_ms", path);
  col.wait = column(header, "wait_ms", path);
  col.stage = optionalColumn(header, "stage");
  col.throttledPeriods = optionalColumn(header, "throttled_periods");
  col.throttled = optionalColumn(header, "throttled_ms");
  col.syncCpu = optionalColumn(header, "sync_cpu_ms");
  col.phases = optionalColumn(header, "comm_phases");
  col.noise = optionalColumn(header, "noise_scale");
  return col;
}

// The value of an optional column; 0 where the run did not write it or left the cell empty.
double optionalValue(const std::vector<std::string>& row, int col) {
  return col < 0 || static_cast<size_t>(col) >= row.size() || row[col].empty() ? 0.0 : std::stod(row[col]);
}

// Whether a row is stage 0's (see StepsColumns::stage).
bool isFirstStage(const std::vector<std::string>& row, int stageCol) {
  return stageCol < 0 || static_cast<size_t>(stageCol) >= row.size() || row[stageCol].empty() ||
         std::stoi(row[stageCol]) == 0;
}

// steps.csv's rows summed per step and per rank.
struct StepsSums {
  std::map<int64_t, double> samples, noise;
  std::map<int, std::pair<RankBreakdown, int>> perRank;  // sums and steps counted
  std::map<int64_t, double> slowest;
  std::map<int64_t, std::pair<double, int>> sync;  // sum over ranks, ranks
  double bytes = 0;
};

// Adds a row's step phases to its rank's sums.
void addPhases(const std::vector<std::string>& row, const StepsColumns& col, RankBreakdown& sum) {
  sum.computeMs += std::stod(row.at(col.compute));
  sum.commMs += std::stod(row.at(col.comm));
  sum.waitMs += std::stod(row.at(col.wait));
  sum.throttledPeriods += optionalValue(row, col.throttledPeriods);
  sum.throttledMs += optionalValue(row, col.throttled);
  sum.syncCpuMs += optionalValue(row, col.syncCpu);
  sum.commPhases += optionalValue(row, col.phases);
}

StepsSums sumSteps(const std::vector<std::vector<std::string>>& steps, const StepsColumns& col) {
  StepsSums sums;
  for (size_t i = 1; i < steps.size(); ++i) {
    const auto& row = steps[i];
    const int64_t step = std::stoll(row.at(col.step));
    auto& v = sums.slowest[step];
    v = std::max(v, std::stod(row.at(col.update)));
    sums.sync[step].first += std::stod(row.at(col.sync));
    sums.sync[step].second += 1;
    sums.bytes += std::stod(row.at(col.bytes));
    if (isFirstStage(row, col.stage)) sums.samples[step] += std::stod(row.at(col.batch));
    // Every rank holds the same noise scale; rank 0's row stands for the step.
    if (col.noise >= 0 && std::stoi(row.at(col.rank)) == 0 && static_cast<size_t>(col.noise) < row.size() &&
        !row[col.noise].empty())
      sums.noise[step] = std::stod(row[col.noise]);
    if (step == 0) continue;
    auto& [sum, count] = sums.perRank[std::stoi(row.at(col.rank))];
    addPhases(row, col, sum);
    ++count;
  }
  return sums;
}

// The per-step series and the per-rank means, from steps.csv's sums.
void setStepResults(const StepsSums& sums, RunResults& r) {
  for (const auto& [step, n] : sums.samples) r.samplesPerStep.push_back(n);
  if (!sums.noise.empty())
    for (const auto& [step, n] : sums.samples)
      r.noiseScalePerStep.push_back(sums.noise.count(step) ? sums.noise.at(step) : -1.0);
  for (const auto& [rank, acc] : sums.perRank) {
    const auto& [sum, count] = acc;
    r.ranks.push_back({rank, sum.computeMs / count, sum.commMs / count, sum.waitMs / count,
                       sum.throttledPeriods / count, sum.throttledMs / count, sum.syncCpuMs / count,
                       sum.commPhases / count});
  }
  for (const auto& [step, ms] : sums.slowest) r.updateMsPerStep.push_back(ms);
  for (const auto& [step, s] : sums.sync) r.syncMsPerStep.push_back(s.first / s.second);
}

// splits.csv's decisions, in order: a new one starts at each new step and at each rank 0.
std::vector<SplitChange> readSplits(const std::string& path) {
  const auto rows = readCsv(path);
  const int s = column(rows[0], "step", path), rank = column(rows[0], "rank", path),
            batch = column(rows[0], "batch", path);
  std::vector<SplitChange> splits;
  for (size_t i = 1; i < rows.size(); ++i) {
    const int64_t step = std::stoll(rows[i].at(s));
    const int rk = std::stoi(rows[i].at(rank));
    if (splits.empty() || splits.back().step != step || rk == 0) splits.push_back({step, {}});
    splits.back().batches.push_back(std::stoll(rows[i].at(batch)));
  }
  return splits;
}

}  // namespace

RunResults loadRun(const std::string& dir) {
  RunResults r;
  r.dir = dir;
  r.summary = readSummaryJson(dir);
  r.peakMemoryMb = readPeakMemoryMb(r.summary, dir + "/summary.json");

  const std::string stepsPath = dir + "/steps.csv";
  const auto steps = readCsv(stepsPath);
  const StepsSums sums = sumSteps(steps, stepsColumns(steps[0], stepsPath));
  setStepResults(sums, r);
  if (steps.size() > 1) r.bytesSentPerStep = sums.bytes / static_cast<double>(steps.size() - 1);

  const std::string splitsPath = dir + "/splits.csv";
  if (std::ifstream(splitsPath)) r.splits = readSplits(splitsPath);
  const std::string pipelinePath = dir + "/pipeline.csv";
  if (std::ifstream(pipelinePath)) r.pipeline = readPipelineCsv(pipelinePath);
  return r;
}

}  // namespace balancenet::report
