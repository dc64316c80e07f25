// Repartitioner: measured/profiled compute per rank -> rescaled costs -> re-plan with the ranks in their
// slots -> move only when the predicted gain beats both the hysteresis and the measured noise.
#include "balancenet/pipeline/planner/Repartitioner.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "balancenet/core/AtomicFile.h"
#include "balancenet/core/Error.h"
#include "balancenet/pipeline/planner/CostModel.h"

namespace balancenet::pipeline {
namespace {

// What a rank's slot computes in one step at `shares` (the profile's costs): the ratio's denominator.
std::vector<double> profiledComputeByRank(const planner::CostTable& table, const Placement& placement,
                                          const std::vector<int64_t>& shares) {
  std::vector<double> byRank(placement.slotRanks.size(), 0);
  for (size_t slot = 0; slot < placement.slotRanks.size(); ++slot) {
    const int rank = placement.slotRanks[slot];
    const auto& range = placement.partition.stages.at(slot % placement.stages);
    byRank[rank] =
        static_cast<double>(shares.at(slot / placement.stages)) * table.computeMs(rank, range.first, range.end);
  }
  return byRank;
}

// The relative standard error of the mean of `values` (0 for fewer than two).
double relativeStandardError(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double squares = 0;
  for (double v : values) squares += (v - mean) * (v - mean);
  const double stddev = std::sqrt(squares / static_cast<double>(values.size() - 1));
  return mean > 0 ? stddev / std::sqrt(static_cast<double>(values.size())) / mean : 0;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

PlanInput scaledBy(PlanInput input, const std::vector<double>& factors) {
  for (size_t rank = 0; rank < input.nodes.size(); ++rank) {
    for (auto& ms : input.nodes[rank].forwardMs) ms *= factors[rank];
    for (auto& ms : input.nodes[rank].backwardMs) ms *= factors[rank];
  }
  return input;
}

std::string percent(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

}  // namespace

Repartitioner::Repartitioner(PlanInput input, Placement initial, RepartitionOptions options)
    : input_(std::move(input)), current_(std::move(initial)), options_(options) {
  if (options_.every < 1) throw InternalError(fmt::format("re-partitioning every {} steps", options_.every));
  if (current_.slotRanks.size() != input_.nodes.size())
    throw InternalError(
        fmt::format("a placement of {} slots for {} nodes", current_.slotRanks.size(), input_.nodes.size()));
  epochs_.push_back(Epoch{0, 0, current_, std::vector<double>(input_.nodes.size(), 0), 0, 0});
}

std::optional<Partition> Repartitioner::afterStep(const StepTimes& times) {
  const size_t n = input_.nodes.size();
  Epoch& epoch = epochs_.back();
  if (epoch.steps == 0) epoch.firstStep = times.step;
  epoch.lastStep = times.step;
  ++epoch.steps;
  epoch.measuredStepSum += times.stepMs;
  for (size_t rank = 0; rank < n && rank < times.computeMsByRank.size(); ++rank)
    epoch.measuredComputeSum[rank] += times.computeMsByRank[rank];
  window_.push_back(times);
  if (static_cast<int>(window_.size()) < options_.every) return std::nullopt;

  RepartitionEvent event;
  event.step = times.step;
  event.from = event.to = current_.partition.str();
  const planner::CostTable table(input_);
  std::vector<double> measured(n, 0), profiled(n, 0);
  std::vector<std::vector<double>> ratios(n);
  bool complete = true;
  for (const auto& step : window_) {
    event.measuredStepMs += step.stepMs / static_cast<double>(window_.size());
    const auto predicted = profiledComputeByRank(table, current_, step.shares.empty() ? current_.shares : step.shares);
    complete = complete && step.computeMsByRank.size() == n;
    for (size_t rank = 0; complete && rank < n; ++rank) {
      measured[rank] += step.computeMsByRank[rank];
      profiled[rank] += predicted[rank];
      if (predicted[rank] > 0) ratios[rank].push_back(step.computeMsByRank[rank] / predicted[rank]);
    }
  }
  window_.clear();
  for (size_t rank = 0; complete && rank < n; ++rank) complete = profiled[rank] > 0 && measured[rank] > 0;
  if (!complete) {
    event.reason = "no measurements";
    events_.push_back(event);
    return std::nullopt;
  }
  std::vector<double> noises;
  for (size_t rank = 0; rank < n; ++rank) {
    event.speedFactors.push_back(measured[rank] / profiled[rank]);
    noises.push_back(relativeStandardError(ratios[rank]));
  }
  event.noise = median(noises);

  const PlanInput scaled = scaledBy(input_, event.speedFactors);
  Placement now = current_;
  now.shares.clear();  // the allocator re-balances the shares for the new speeds too
  now = predict(scaled, now);
  event.predictedCurrentMs = now.stepMs;
  const auto ranked = rankPlacements(scaled, PlanRequest{current_.stages, current_.slotRanks});
  if (ranked.empty()) {
    event.predictedBestMs = now.stepMs;
    event.reason = "no re-plan fits memory";
    events_.push_back(event);
    return std::nullopt;
  }
  const Placement& best = ranked.front();
  event.predictedBestMs = best.stepMs;
  const double gain = now.stepMs > 0 ? 1 - best.stepMs / now.stepMs : 0;
  const double threshold = std::max(options_.hysteresis, options_.noiseMultiplier * event.noise);
  const bool worth = gain > threshold && best.partition.str() != current_.partition.str();
  event.reason = fmt::format("gain {} {} threshold {}", percent(gain), worth ? ">" : "below", percent(threshold));
  if (worth && !options_.live) event.reason += " (partition kept)";
  event.moved = worth && options_.live;
  if (event.moved) {
    event.to = best.partition.str();
    current_ = best;
    epochs_.push_back(Epoch{times.step + 1, times.step + 1, best, std::vector<double>(n, 0), 0, 0});
  }
  events_.push_back(event);
  if (!event.moved) return std::nullopt;
  return current_.partition;
}

std::string Repartitioner::partitionsCsvHeader() {
  return "step,from,to,predicted_current_ms,predicted_best_ms,measured_step_ms,noise,speed_factors,moved,reason\n";
}

std::string Repartitioner::partitionsCsv() const {
  std::string out = partitionsCsvHeader();
  for (const auto& e : events_) {
    std::vector<std::string> factors;
    for (double f : e.speedFactors) factors.push_back(fmt::format("{:.3f}", f));
    // Partitions ("0-3,4-7") hold commas: quoted.
    out += fmt::format("{},\"{}\",\"{}\",{:.3f},{:.3f},{:.3f},{:.4f},{},{},{}\n", e.step, e.from, e.to,
                       e.predictedCurrentMs, e.predictedBestMs, e.measuredStepMs, e.noise, fmt::join(factors, " "),
                       e.moved ? 1 : 0, e.reason);
  }
  return out;
}

std::string Repartitioner::stageTimesCsv() const {
  std::string out =
      "first_step,last_step,partition,rank,stage,replica,blocks,predicted_compute_ms,measured_compute_ms,"
      "predicted_step_ms,measured_step_ms\n";
  for (const auto& epoch : epochs_) {
    if (epoch.steps == 0) continue;  // a partition moved to at the last step never ran
    const auto& p = epoch.predicted;
    const double steps = static_cast<double>(epoch.steps);
    for (size_t slot = 0; slot < p.slotRanks.size(); ++slot) {
      const int rank = p.slotRanks[slot], stage = static_cast<int>(slot) % p.stages;
      const auto& range = p.partition.stages.at(stage);
      out += fmt::format("{},{},\"{}\",{},{},{},{}-{},{:.3f},{:.3f},{:.3f},{:.3f}\n", epoch.firstStep, epoch.lastStep,
                         p.partition.str(), rank, stage, static_cast<int>(slot) / p.stages, range.first, range.end - 1,
                         p.slotComputeMs.at(slot), epoch.measuredComputeSum.at(rank) / steps, p.stepMs,
                         epoch.measuredStepSum / steps);
    }
  }
  return out;
}

void Repartitioner::writeOutputs(const std::string& runDir) const {
  writeFileAtomically(runDir + "/partitions.csv", partitionsCsv());
  writeFileAtomically(runDir + "/stage_times.csv", stageTimesCsv());
}

}  // namespace balancenet::pipeline
