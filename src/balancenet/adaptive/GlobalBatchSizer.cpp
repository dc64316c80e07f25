// The sizer's decision: B from the goodput planner (or the schedule), the learning-rate factor from the rule.
#include "balancenet/adaptive/GlobalBatchSizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "balancenet/core/Error.h"
#include "balancenet/orchestrator/NodeReport.h"

namespace balancenet::adaptive {

GlobalBatchSizer::GlobalBatchSizer(BatchSizing sizing, LrScaling rule, int64_t baseBatch, bool balancedShares)
    : sizing_(std::move(sizing)), rule_(rule), baseBatch_(baseBatch), balancedShares_(balancedShares) {}

void GlobalBatchSizer::observe(const metrics::StepRecord& mine, const Split& split) {
  int workers = 0;
  for (int64_t b : split.batches) workers += b > 0 ? 1 : 0;
  tracker_.add({split.total(), workers, mine.gradSqLocal, mine.gradSq});
  if (mine.step == 0) return;  // one-time allocations: not the step's cost
  recentStepMs_.push_back(mine.updateMs);
  if (recentStepMs_.size() > kStepWindow) recentStepMs_.erase(recentStepMs_.begin());
  auto& atBatch = stepMsAt_[split.total()];
  atBatch.push_back(mine.updateMs);
  if (atBatch.size() > kStepWindow) atBatch.erase(atBatch.begin());
}

MeasuredSteps GlobalBatchSizer::measuredAt(int64_t batch) const {
  MeasuredSteps m;
  m.batch = batch;
  const auto it = stepMsAt_.find(batch);
  if (it == stepMsAt_.end()) return m;
  for (double ms : it->second) m.meanMs += ms / static_cast<double>(it->second.size());
  m.steps = static_cast<int64_t>(it->second.size());
  return m;
}

double GlobalBatchSizer::fixedStepMs(const orchestrator::PolicyInput& input, const std::vector<NodeLine>& lines) const {
  const double leastSync = orchestrator::leastSyncMs(input);
  if (recentStepMs_.empty() || input.current.worldSize() != static_cast<int>(lines.size())) return leastSync;
  // The rest of a step beyond compute and sync (the optimiser, the norms, emulated links, the decisions) is
  // as fixed as the sync: calibrate so that the prediction at the B in force is the step measured.
  double compute = 0;
  for (size_t i = 0; i < lines.size(); ++i)
    compute =
        std::max(compute, lines[i].fixedMs + lines[i].msPerSample * static_cast<double>(input.current.batches[i]));
  double measured = 0;
  for (double ms : recentStepMs_) measured += ms / static_cast<double>(recentStepMs_.size());
  return std::max(leastSync, measured - compute);
}

bool GlobalBatchSizer::mustDecideAt(int64_t step) const {
  if (sizing_.mode != BatchSizing::Mode::Schedule) return false;
  for (const auto& [from, batch] : sizing_.schedule)
    if (from == step && step > 0) return true;
  return false;
}

std::vector<NodeLine> GlobalBatchSizer::linesOf(const orchestrator::PolicyInput& input) {
  const size_t n = input.nodes.size();
  if (models_.size() != n) models_.assign(n, {});
  std::vector<orchestrator::CostPoint> points;
  std::vector<double> times;
  std::vector<NodeLine> lines(n);
  for (size_t i = 0; i < n; ++i) {
    orchestrator::NodeCostModel::windowPoints(input.nodes[i], points, times);
    auto& model = models_[i];
    if (!points.empty()) {
      model.absorb(points, fitOptions_);
      const auto line = model.fitHistory(fitOptions_);
      // One batch size seen: proportional (no fixed cost) until B changes and a fixed cost can be fitted.
      model.refit(line.fitted ? line : line.oneSize(0.0), fitOptions_);
    }
    lines[i] = {model.hasModel() ? model.a() : 0.0, model.hasModel() ? model.c() : 0.0, input.nodes[i].maxBatch};
  }
  return lines;
}

double GlobalBatchSizer::decisionNoiseScale() const {
  return tracker_.samples() >= kMinNoiseSamples ? tracker_.noiseScale() : -1.0;
}

orchestrator::BatchChoice GlobalBatchSizer::choose(const orchestrator::PolicyInput& input) {
  const double noise = decisionNoiseScale();
  const int64_t current = input.globalBatch;
  if (current != seenBatch_) {  // a change of B took effect since the last decision
    previousBatch_ = seenBatch_;
    seenBatch_ = current;
  }
  auto choice = [&](int64_t batch, std::string why) {
    orchestrator::BatchChoice c;
    c.globalBatch = batch;
    c.lrFactor = lrFactor(rule_, baseBatch_, batch, noise);
    c.note = fmt::format("B {} (noise scale {:.4g}, lr x{:.3g}): {}", batch, noise, c.lrFactor, why);
    return c;
  };
  if (sizing_.mode == BatchSizing::Mode::Schedule)
    return choice(scheduledBatch(sizing_.schedule, input.step), "scheduled");

  GoodputInput in;
  in.nodes = linesOf(input);
  for (const auto& line : in.nodes)
    if (line.msPerSample <= 0) return choice(current, "a node has no speed measured yet");
  in.syncMs = fixedStepMs(input, in.nodes);
  in.minBatch = sizing_.minBatch;
  in.maxBatch = sizing_.maxBatch;
  in.baseBatch = baseBatch_;
  in.noiseScale = noise;
  if (!balancedShares_)
    for (int64_t b : input.current.batches) in.shares.push_back(static_cast<double>(b));
  in.currentBatch = current;
  const GoodputChoice best = chooseGlobalBatch(in);
  MeasuredSteps previous;
  if (previousBatch_ > 0) previous = measuredAt(previousBatch_);
  if (auto why =
          reversalRefusal(measuredAt(current), best.globalBatch, previous, noise, baseBatch_, kDefaultHysteresis))
    return choice(current, *why);
  return choice(best.globalBatch, best.note);
}

std::string GlobalBatchSizer::saveState() const {
  nlohmann::json j;
  j["noise"] = nlohmann::json::parse(tracker_.saveState());
  auto& models = j["models"] = nlohmann::json::array();
  for (const auto& m : models_) models.push_back(m.toJson());
  j["step_ms"] = recentStepMs_;
  auto& at = j["step_ms_at"] = nlohmann::json::array();
  for (const auto& [batch, ms] : stepMsAt_) at.push_back({{"batch", batch}, {"ms", ms}});
  j["seen_batch"] = seenBatch_;
  j["previous_batch"] = previousBatch_;
  return j.dump();
}

void GlobalBatchSizer::loadState(const std::string& state) {
  if (state.empty()) return;
  try {
    const auto j = nlohmann::json::parse(state);
    tracker_.loadState(j.at("noise").dump());
    models_.clear();
    for (const auto& m : j.at("models")) models_.push_back(orchestrator::NodeCostModel::fromJson(m));
    recentStepMs_ = j.value("step_ms", std::vector<double>{});
    stepMsAt_.clear();  // absent in older checkpoints: a reversal then waits for new measurements
    for (const auto& at : j.value("step_ms_at", nlohmann::json::array()))
      stepMsAt_[at.at("batch").get<int64_t>()] = at.at("ms").get<std::vector<double>>();
    seenBatch_ = j.value("seen_batch", int64_t{0});
    previousBatch_ = j.value("previous_batch", int64_t{0});
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeFailure(fmt::format("the batch sizer's saved state cannot be read: {}", e.what()));
  }
}

}  // namespace balancenet::adaptive
