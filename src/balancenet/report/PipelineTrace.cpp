// Reading pipeline.csv and measuring a step's bubble from it.
#include "balancenet/report/PipelineTrace.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/report/RunResults.h"

namespace balancenet::report {
namespace {

// The whole field as a finite number (strtod alone accepts "12abc"); UsageError naming file, line and column.
double number(const std::vector<std::string>& row, int col, const std::string& name, const std::string& where) {
  if (col >= static_cast<int>(row.size())) throw UsageError(fmt::format("{}: no {} field", where, name));
  const std::string& text = row[col];
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
    throw UsageError(fmt::format("{}: {} '{}' is not a number", where, name, text));
  return v;
}

// A count or an index: a whole number, not negative.
int64_t wholeNumber(const std::vector<std::string>& row, int col, const std::string& name, const std::string& where) {
  const double v = number(row, col, name, where);
  if (v < 0 || v != static_cast<double>(static_cast<int64_t>(v)))
    throw UsageError(fmt::format("{}: {} '{}' is not a whole number >= 0", where, name, row[col]));
  return static_cast<int64_t>(v);
}

}  // namespace

std::vector<PipelineAction> readPipelineCsv(const std::string& path) {
  const auto rows = readCsv(path);
  const auto& h = rows[0];
  const int stepCol = column(h, "step", path), rankCol = column(h, "rank", path), stageCol = column(h, "stage", path),
            replicaCol = column(h, "replica", path), kindCol = column(h, "kind", path),
            microCol = column(h, "micro", path), startCol = column(h, "start_ms", path),
            endCol = column(h, "end_ms", path);
  std::vector<PipelineAction> actions;
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto& row = rows[i];
    if (row.empty()) continue;  // a blank line (a trailing one)
    const std::string where = fmt::format("{} line {}", path, i + 1);
    PipelineAction a;
    a.step = wholeNumber(row, stepCol, "step", where);
    a.rank = static_cast<int>(wholeNumber(row, rankCol, "rank", where));
    a.stage = static_cast<int>(wholeNumber(row, stageCol, "stage", where));
    a.replica = static_cast<int>(wholeNumber(row, replicaCol, "replica", where));
    const std::string kind = kindCol < static_cast<int>(row.size()) ? row[kindCol] : "";
    if (kind != "F" && kind != "B")
      throw UsageError(fmt::format("{}: kind '{}' is neither F (forward) nor B (backward)", where, kind));
    a.backward = kind == "B";
    a.micro = static_cast<int>(wholeNumber(row, microCol, "micro", where));
    a.startMs = number(row, startCol, "start_ms", where);
    a.endMs = number(row, endCol, "end_ms", where);
    if (a.endMs < a.startMs)
      throw UsageError(fmt::format("{}: the action ends ({} ms) before it starts ({} ms)", where, a.endMs, a.startMs));
    actions.push_back(a);
  }
  if (actions.empty()) throw UsageError(fmt::format("{}: no actions (a header only)", path));
  return actions;
}

std::vector<PipelineAction> actionsOfStep(const std::vector<PipelineAction>& actions, int64_t step) {
  if (step < 0)
    for (const auto& a : actions) step = std::max(step, a.step);
  std::vector<PipelineAction> out;
  std::copy_if(actions.begin(), actions.end(), std::back_inserter(out), [&](const auto& a) { return a.step == step; });
  if (out.empty()) throw UsageError(fmt::format("pipeline.csv has no action of step {}", step));
  return out;
}

StepIdle pipelineIdle(const std::vector<PipelineAction>& stepActions) {
  StepIdle idle;
  if (stepActions.empty()) return idle;
  idle.step = stepActions.front().step;
  double first = stepActions.front().startMs, last = stepActions.front().endMs;
  // (stage, replica, rank) orders the lanes; each rank's intervals merged, so overlapping records count once.
  std::map<std::tuple<int, int, int>, std::vector<std::pair<double, double>>> perRank;
  std::set<int> stages, micros;
  for (const auto& a : stepActions) {
    first = std::min(first, a.startMs);
    last = std::max(last, a.endMs);
    perRank[{a.stage, a.replica, a.rank}].emplace_back(a.startMs, a.endMs);
    stages.insert(a.stage);
    micros.insert(a.micro);
  }
  idle.spanMs = last - first;
  idle.stages = static_cast<int>(stages.size());
  idle.microBatches = static_cast<int>(micros.size());
  for (auto& [key, intervals] : perRank) {
    std::sort(intervals.begin(), intervals.end());
    RankIdle r{std::get<2>(key), std::get<0>(key), std::get<1>(key), 0, 0};
    double coveredTo = intervals.front().first;
    for (const auto& [start, end] : intervals) {
      r.busyMs += std::max(0.0, end - std::max(start, coveredTo));
      coveredTo = std::max(coveredTo, end);
    }
    r.bubbleFraction = idle.spanMs > 0 ? 1 - r.busyMs / idle.spanMs : 0;
    idle.meanBubbleFraction += r.bubbleFraction / static_cast<double>(perRank.size());
    idle.ranks.push_back(r);
  }
  return idle;
}

}  // namespace balancenet::report
