// Repartitioner: measured/profiled compute per rank -> rescaled costs -> re-plan with the ranks in their
// slots -> move only when the predicted gain beats both the hysteresis and the measured noise.
#include "balancenet/pipeline/planner/Repartitioner.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "balancenet/core/AtomicFile.h"
#include "balancenet/core/Error.h"
#include "balancenet/core/Median.h"
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

double mean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

// The relative standard error of the mean of `values` (0 for fewer than two).
double relativeStandardError(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double centre = mean(values);
  double squares = 0;
  for (double v : values) squares += (v - centre) * (v - centre);
  const double stddev = std::sqrt(squares / static_cast<double>(values.size() - 1));
  return centre > 0 ? stddev / std::sqrt(static_cast<double>(values.size())) / centre : 0;
}

// A rank's speed over some steps: measured / profiled compute, and the relative standard error of the
// steps' ratios.
struct Speed {
  double factor = 1, noise = 0;
};
Speed speedOf(const std::vector<double>& measured, const std::vector<double>& profiled) {
  double measuredSum = 0, profiledSum = 0;
  std::vector<double> ratios;
  for (size_t i = 0; i < measured.size(); ++i) {
    measuredSum += measured[i];
    profiledSum += profiled[i];
    ratios.push_back(measured[i] / profiled[i]);
  }
  return {profiledSum > 0 ? measuredSum / profiledSum : 1, relativeStandardError(ratios)};
}

PlanInput scaledBy(PlanInput input, const std::vector<double>& factors) {
  for (size_t rank = 0; rank < input.nodes.size(); ++rank) {
    for (auto& ms : input.nodes[rank].forwardMs) ms *= factors[rank];
    for (auto& ms : input.nodes[rank].backwardMs) ms *= factors[rank];
  }
  return input;
}

std::string percent(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

// `placement` moved to `partition` and predicted at `scaled` costs, its shares re-balanced for them.
Placement predictedWith(const PlanInput& scaled, Placement placement, const Partition& partition) {
  placement.partition = partition;
  placement.shares.clear();
  return predict(scaled, placement);
}

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
  recordStep(times);
  if (static_cast<int>(window_.size()) < options_.every) return std::nullopt;

  RepartitionEvent event;
  event.step = times.step;
  event.from = event.to = current_.partition.str();
  const WindowSamples samples = measureWindow();
  window_.clear();
  event.measuredStepMs = samples.meanStepMs;
  if (!samples.complete) {
    event.reason = "no measurements";
    return logDecision(event);
  }
  const Change change = detectChange(samples);
  updateEvidence(samples, event);

  const PlanInput scaled = scaledBy(input_, event.speedFactors);
  // The allocator re-balances the shares for the new speeds too.
  const Placement now = predictedWith(scaled, current_, current_.partition);
  event.predictedCurrentMs = now.stepMs;

  std::string skipped;
  if (options_.live && !change.changed) {
    std::string why;
    if (auto target = measuredChoice(samples.stepTime, scaled, now.stepMs, why)) {
      const Placement next = predictedWith(scaled, current_, *target);
      event.predictedBestMs = next.stepMs;
      event.reason = change.note + why;
      moveTo(next, times.step, event);
      return logDecision(event);
    }
    skipped = why;
  }

  const auto ranked = rankPlacements(scaled, PlanRequest{current_.stages, current_.slotRanks});
  if (ranked.empty()) {
    event.predictedBestMs = now.stepMs;
    event.reason = change.note + "no re-plan fits memory";
    return logDecision(event);
  }
  if (worthMoving(ranked.front(), now.stepMs, samples.stepTime, change.note + skipped, event)) {
    if (options_.live)
      moveTo(ranked.front(), times.step, event);
    else
      event.reason += " (partition kept)";
  }
  return logDecision(event);
}

std::optional<Partition> Repartitioner::logDecision(const RepartitionEvent& event) {
  events_.push_back(event);
  if (!event.moved) return std::nullopt;
  return current_.partition;
}

void Repartitioner::recordStep(const StepTimes& times) {
  const size_t n = input_.nodes.size();
  Epoch& epoch = epochs_.back();
  if (epoch.steps == 0) epoch.firstStep = times.step;
  epoch.lastStep = times.step;
  ++epoch.steps;
  epoch.measuredStepSum += times.stepMs;
  for (size_t rank = 0; rank < n && rank < times.computeMsByRank.size(); ++rank)
    epoch.measuredComputeSum[rank] += times.computeMsByRank[rank];
  window_.push_back(times);
}

Repartitioner::WindowSamples Repartitioner::measureWindow() const {
  const size_t n = input_.nodes.size();
  const planner::CostTable table(input_);
  WindowSamples samples;
  samples.measured.resize(n);
  samples.profiled.resize(n);
  for (const auto& step : window_) {
    samples.meanStepMs += step.stepMs / static_cast<double>(window_.size());
    const auto predicted = profiledComputeByRank(table, current_, step.shares.empty() ? current_.shares : step.shares);
    samples.complete = samples.complete && step.computeMsByRank.size() == n;
    for (size_t rank = 0; samples.complete && rank < n; ++rank) {
      samples.measured[rank].push_back(step.computeMsByRank[rank]);
      samples.profiled[rank].push_back(predicted[rank]);
      samples.complete = predicted[rank] > 0 && step.computeMsByRank[rank] > 0;
    }
  }
  std::vector<double> stepMs;
  for (const auto& step : window_) stepMs.push_back(step.stepMs);
  // The median: the first step after a move also pays for the move and cold caches.
  samples.stepTime = Measured{median(stepMs), relativeStandardError(stepMs), current_.partition};
  return samples;
}

Repartitioner::Change Repartitioner::detectChange(const WindowSamples& samples) {
  const Measured& window = samples.stepTime;
  // What was measured outranks what was predicted: see RepartitionOptions::baselines.
  const std::string key = current_.partition.str();
  const auto before = measured_.find(key);
  const bool stepChanged =
      before != measured_.end() &&
      std::abs(window.stepMs / before->second.stepMs - 1) >
          std::max(options_.changeThreshold, options_.noiseMultiplier * std::max(window.noise, before->second.noise));
  Change change;
  if (stepChanged)
    change = {true, fmt::format("step {:.0f} ms, was {:.0f}: the nodes changed, measurements cleared; ", window.stepMs,
                                before->second.stepMs)};
  else if (auto speedNote = speedChangeNote(samples))
    change = {true, *speedNote};
  if (change.changed) {
    measured_.clear();
    trialFrom_.reset();
    evidence_.clear();
  }
  measured_[key] = window;
  return change;
}

std::optional<std::string> Repartitioner::speedChangeNote(const WindowSamples& samples) const {
  // A rank whose speed in this window left what the evidence below says has changed too, even where the step
  // time hardly shows it (a node that recovered off the critical path): else its old speed would linger.
  // A rank with little work (a few ms of a last layer) may swing widely and matter nothing: the change must
  // also move its compute by the threshold's share of the busiest rank's.
  double busiestMs = 0;
  for (const auto& ms : samples.measured) busiestMs = std::max(busiestMs, mean(ms));
  for (size_t rank = 0; rank < evidence_.size() && !evidence_[rank].measured.empty(); ++rank) {
    const Speed was = speedOf(evidence_[rank].measured, evidence_[rank].profiled);
    const Speed is = speedOf(samples.measured[rank], samples.profiled[rank]);
    if (std::abs(is.factor / was.factor - 1) <=
            std::max(options_.changeThreshold, options_.noiseMultiplier * std::max(is.noise, was.noise)) ||
        std::abs(is.factor - was.factor) * mean(samples.profiled[rank]) <= options_.changeThreshold * busiestMs)
      continue;
    return fmt::format("rank {} at {:.2f} x its profile, was {:.2f}: the nodes changed, measurements cleared; ", rank,
                       is.factor, was.factor);
  }
  return std::nullopt;
}

void Repartitioner::updateEvidence(const WindowSamples& samples, RepartitionEvent& event) {
  // The speed factors and their noise from every step since the cut last moved or the nodes changed (up to
  // kEvidenceSteps), not only this window's: the noise of a mean falls with the steps behind it, so a real
  // gain that one window's noise hides is taken a few windows later instead of never.
  const size_t n = input_.nodes.size();
  evidence_.resize(n);
  std::vector<double> noises;
  for (size_t rank = 0; rank < n; ++rank) {
    auto& e = evidence_[rank];
    e.measured.insert(e.measured.end(), samples.measured[rank].begin(), samples.measured[rank].end());
    e.profiled.insert(e.profiled.end(), samples.profiled[rank].begin(), samples.profiled[rank].end());
    if (e.measured.size() > kEvidenceSteps) {
      const auto drop = static_cast<std::ptrdiff_t>(e.measured.size() - kEvidenceSteps);
      e.measured.erase(e.measured.begin(), e.measured.begin() + drop);
      e.profiled.erase(e.profiled.begin(), e.profiled.begin() + drop);
    }
    const Speed speed = speedOf(e.measured, e.profiled);
    event.speedFactors.push_back(speed.factor);
    noises.push_back(speed.noise);
  }
  event.noise = median(noises);
}

bool Repartitioner::worthMoving(const Placement& best, double predictedNowMs, const Measured& window,
                                const std::string& reason, RepartitionEvent& event) const {
  event.predictedBestMs = best.stepMs;
  const double gain = predictedNowMs > 0 ? 1 - best.stepMs / predictedNowMs : 0;
  const double threshold = std::max(options_.hysteresis, options_.noiseMultiplier * event.noise);
  bool worth = gain > threshold && best.partition.str() != current_.partition.str();
  event.reason =
      reason + fmt::format("gain {} {} threshold {}", percent(gain), worth ? ">" : "below", percent(threshold));
  const double measuredThreshold = std::max(options_.hysteresis, options_.noiseMultiplier * window.noise);
  const auto tried = measured_.find(best.partition.str());
  if (worth && tried != measured_.end() && tried->second.stepMs >= window.stepMs * (1 - measuredThreshold)) {
    worth = false;
    event.reason +=
        fmt::format(", but it measured {:.0f} ms against {:.0f}: kept", tried->second.stepMs, window.stepMs);
  }
  return worth;
}

void Repartitioner::moveTo(const Placement& target, int64_t step, RepartitionEvent& event) {
  event.to = target.partition.str();
  event.moved = true;
  current_ = target;
  evidence_.clear();  // measured on the cut left behind
  epochs_.push_back(Epoch{step + 1, step + 1, target, std::vector<double>(input_.nodes.size(), 0), 0, 0});
}

std::optional<Partition> Repartitioner::measuredChoice(const Measured& now, const PlanInput& scaled,
                                                       double predictedNowMs, std::string& why) {
  const std::string key = current_.partition.str();
  // A baseline is measured only while the model, refreshed by this window, cannot rule it out: predicted
  // within twice the model's error on the cut in force (or the hysteresis) of it. A window on a cut the model
  // rightly predicts far slower costs that window at that speed (P1 spent 10 of 60 steps at twice the step
  // time measuring uniform and equal-FLOPs cuts both predicted, and measured, slower).
  const double modelError =
      predictedNowMs > 0 ? std::abs(now.stepMs / predictedNowMs - 1) : std::numeric_limits<double>::infinity();
  const double plausibleMs = predictedNowMs * (1 + std::max(options_.hysteresis, 2 * modelError));
  if (trialFrom_) {
    const auto from = measured_.find(*trialFrom_);
    trialFrom_.reset();
    if (from != measured_.end()) {
      const std::string verdict = fmt::format("baseline {} measured {:.0f} ms against {:.0f} for {}", key, now.stepMs,
                                              from->second.stepMs, from->first);
      if (now.stepMs >= from->second.stepMs * (1 - options_.hysteresis)) {
        why += verdict + ": back to it";
        return from->second.partition;
      }
      why += verdict + ": kept; ";
    }
  }
  while (nextBaseline_ < options_.baselines.size()) {
    const Partition& candidate = options_.baselines[nextBaseline_++];
    if (candidate.stageCount() != current_.stages || candidate.str() == key || measured_.count(candidate.str()))
      continue;
    Placement trial = current_;
    trial.partition = candidate;
    trial.shares.clear();
    trial = predict(scaled, trial);
    if (!trial.fits) continue;
    if (trial.stepMs > plausibleMs) {
      why += fmt::format("baseline {} not tried (predicted {:.0f} ms against {:.0f}, model error {}); ",
                         candidate.str(), trial.stepMs, predictedNowMs, percent(modelError));
      continue;
    }
    why += fmt::format("trying baseline {} (measured {:.0f} ms here)", candidate.str(), now.stepMs);
    trialFrom_ = key;
    return candidate;
  }
  const auto best = std::min_element(measured_.begin(), measured_.end(),
                                     [](const auto& a, const auto& b) { return a.second.stepMs < b.second.stepMs; });
  const double threshold =
      std::max(options_.hysteresis, options_.noiseMultiplier * std::max(now.noise, best->second.noise));
  if (best->first == key || best->second.stepMs >= now.stepMs * (1 - threshold)) return std::nullopt;
  why += fmt::format("{} measured {:.0f} ms against {:.0f} here: back to it", best->first, best->second.stepMs,
                     now.stepMs);
  return best->second.partition;
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
