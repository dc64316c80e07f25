// BalancedPolicy: fitted per-node cost models, exact min-max integer split, caps, hysteresis.
#include "balancenet/orchestrator/policies/BalancedPolicy.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "balancenet/core/Error.h"
#include "balancenet/core/Median.h"
#include "balancenet/orchestrator/policies/PolicySupport.h"

namespace balancenet::orchestrator {

BalancedPolicy::BalancedPolicy(BalancedOptions options) : options_(options) {
  auto check = [](bool ok, const char* what) {
    if (!ok) throw UsageError(std::string("balanced policy: ") + what);
  };
  check(options_.smoothing > 0 && options_.smoothing <= 1, "smoothing must be in (0, 1]");
  check(options_.hysteresis >= 0 && options_.hysteresis < 1, "hysteresis must be in [0, 1)");
  check(options_.noiseMultiplier >= 0, "noise multiplier must be >= 0");
  check(options_.reactThreshold > 0, "react threshold must be > 0");
  check(options_.reactResidual >= 0, "react residual must be >= 0");
  check(options_.historyPoints >= 1, "history must keep at least 1 point");
  check(options_.minFitSpread >= 0 && options_.minFitSpread < 1, "fit spread must be in [0, 1)");
  check(options_.maxFixedCostFraction >= 0 && options_.maxFixedCostFraction < 1,
        "fixed-cost fraction must be in [0, 1)");
}

std::string BalancedPolicy::saveState() const {
  nlohmann::json models = nlohmann::json::array();
  for (const auto& m : models_) models.push_back(m.toJson());
  return models.dump();
}

void BalancedPolicy::loadState(const std::string& state) {
  if (state.empty()) return;
  try {
    std::vector<NodeCostModel> models;
    for (const auto& m : nlohmann::json::parse(state)) models.push_back(NodeCostModel::fromJson(m));
    models_ = std::move(models);
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeFailure(fmt::format("balanced policy state unreadable: {}", e.what()));
  }
}

std::vector<int64_t> BalancedPolicy::minimiseMaxTime(const std::vector<double>& a, const std::vector<double>& c,
                                                     int64_t total, const std::vector<int64_t>& caps) {
  const size_t n = a.size();
  std::vector<int64_t> b(n, 1);
  auto hasRoom = [&](size_t i) { return caps.empty() || caps[i] <= 0 || b[i] < caps[i]; };
  using Entry = std::pair<double, size_t>;  // (time after one more sample, rank): the pair order breaks ties by rank
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> next;
  for (size_t i = 0; i < n; ++i)
    if (hasRoom(i)) next.push({a[i] + c[i] * 2.0, i});
  for (int64_t given = static_cast<int64_t>(n); given < total && !next.empty(); ++given) {
    const size_t i = next.top().second;
    next.pop();
    ++b[i];
    if (hasRoom(i)) next.push({a[i] + c[i] * static_cast<double>(b[i] + 1), i});
  }
  return b;
}

double BalancedPolicy::measurementNoise(const PolicyInput& input) {
  std::vector<double> errors;
  for (const auto& node : input.nodes) {
    std::vector<double> times;  // the window's steps at the batch in force: same work, so spread = noise
    for (const auto& [batch, ms] : node.recent)
      if (batch == node.batch && std::isfinite(ms) && ms > 0) times.push_back(ms);
    if (times.size() < 3) continue;
    double mean = 0, var = 0;
    for (double t : times) mean += t;
    mean /= times.size();
    for (double t : times) var += (t - mean) * (t - mean);
    var /= times.size() - 1;
    errors.push_back(std::sqrt(var) / mean / std::sqrt(static_cast<double>(times.size())));
  }
  if (errors.empty()) return 0;
  std::nth_element(errors.begin(), errors.begin() + errors.size() / 2, errors.end());
  return errors[errors.size() / 2];
}

Decision BalancedPolicy::decide(const PolicyInput& input) {
  const std::string events = absorbWindows(input);
  const CostLines lines = costLines(input);
  const Candidate best = optimise(lines, input);
  return keepOrMove(best, lines, input, events);
}

std::string BalancedPolicy::absorbWindows(const PolicyInput& input) {
  const int n = worldSizeOf(input);
  if (static_cast<int>(models_.size()) != n) models_.assign(n, NodeCostModel{});
  const int measured = std::min<int>(n, static_cast<int>(input.nodes.size()));

  // Each node's window is judged against what the same window did to the others (a machine-wide slowdown
  // moves nothing).
  std::string events;
  std::vector<bool> fresh(n, false);
  std::vector<std::vector<CostPoint>> windows(measured);
  std::vector<double> deviations(measured);
  for (int i = 0; i < measured; ++i) {
    windows[i] = NodeCostModel::windowPoints(input.nodes[i]);
    deviations[i] = models_[i].deviation(windows[i]);
  }
  for (int i = 0; i < measured; ++i) {
    fresh[i] = !windows[i].empty();
    std::vector<double> others;
    for (int j = 0; j < measured; ++j)
      if (j != i && deviations[j] > 0) others.push_back(deviations[j]);
    const double commonMode = others.empty() ? 1.0 : median(others);
    const double ratio = models_[i].absorb(windows[i], options_, commonMode);
    if (ratio > 0)
      events += fmt::format("; rank {} refit (observed {:.2f}x its model, the others {:.2f}x)", i, ratio, commonMode);
  }
  // Nodes with a fixed-cost fit first, so that nodes seen at a single batch size can borrow the smallest
  // fixed-cost fraction they show.
  for (int i = 0; i < n; ++i)
    if (fresh[i] && models_[i].fitsFixedCost(options_)) models_[i].refit(0.0, options_);
  double fraction = options_.maxFixedCostFraction;
  bool anyFixedCostFit = false;
  for (int i = 0; i < n; ++i) {
    if (models_[i].hasModel() && models_[i].fitsFixedCost(options_)) {
      fraction = std::min(fraction, models_[i].fixedFraction());
      anyFixedCostFit = true;
    }
  }
  if (!anyFixedCostFit) fraction = 0;  // no evidence of a fixed cost anywhere: the proportional model
  for (int i = 0; i < n; ++i)
    if (fresh[i] && !models_[i].fitsFixedCost(options_)) models_[i].refit(fraction, options_);
  return events;
}

BalancedPolicy::CostLines BalancedPolicy::costLines(const PolicyInput& input) const {
  const int n = worldSizeOf(input);
  const int measured = std::min<int>(n, static_cast<int>(input.nodes.size()));
  CostLines lines{std::vector<double>(n, 0.0), std::vector<double>(n, 0.0), "measured"};
  auto& [a, c, basis] = lines;
  double sumA = 0, sumC = 0;
  int modelled = 0;
  for (int i = 0; i < n; ++i) {
    if (!models_[i].hasModel()) continue;
    a[i] = models_[i].a();
    c[i] = models_[i].c();
    sumA += a[i];
    sumC += c[i];
    ++modelled;
  }
  if (modelled == 0) {
    bool allOps = measured == n;
    for (int i = 0; i < measured; ++i)
      allOps = allOps && std::isfinite(input.nodes[i].opsPerSecond) && input.nodes[i].opsPerSecond > 0;
    for (int i = 0; i < n; ++i) c[i] = allOps ? 1.0 / input.nodes[i].opsPerSecond : 1.0;
    basis = allOps ? "opsPerSecond, no step measured" : "nothing measured, equal speeds";
    return lines;
  }
  for (int i = 0; i < n; ++i) {
    if (models_[i].hasModel()) continue;
    a[i] = sumA / modelled;
    c[i] = sumC / modelled;
  }
  return lines;
}

std::vector<int64_t> BalancedPolicy::capsOf(const PolicyInput& input) {
  const int n = worldSizeOf(input);
  std::vector<int64_t> caps(n, 0);
  for (int i = 0; i < std::min<int>(n, static_cast<int>(input.nodes.size())); ++i) caps[i] = input.nodes[i].maxBatch;
  return caps;
}

double BalancedPolicy::CostLines::predictedMs(const Split& s) const {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, a[i] + c[i] * static_cast<double>(s.batches[i]));
  return worst;
}

BalancedPolicy::Candidate BalancedPolicy::optimise(const CostLines& lines, const PolicyInput& input) {
  const int64_t total = input.globalBatch;
  const std::vector<int64_t> caps = capsOf(input);
  bool capsInfeasible = true;
  int64_t capSum = 0;
  for (int64_t cap : caps) {
    capsInfeasible = capsInfeasible && cap > 0;
    capSum += std::max<int64_t>(cap, 1);
  }
  capsInfeasible = capsInfeasible && capSum < total;
  Candidate best;
  if (capsInfeasible) {  // every node at its cap and the excess by speed
    std::vector<double> speed(lines.c.size());
    for (size_t i = 0; i < speed.size(); ++i) speed[i] = 1.0 / lines.c[i];
    best.split.batches = apportion(speed, total, caps).sizes;
    best.capsInfeasible = true;
    best.capNote =
        fmt::format("; maxBatch caps hold only {} of B = {}: all at their cap, the rest by speed", capSum, total);
  } else {
    best.split.batches = minimiseMaxTime(lines.a, lines.c, total, caps);
  }
  best.ms = lines.predictedMs(best.split);
  return best;
}

Decision BalancedPolicy::keepOrMove(const Candidate& best, const CostLines& lines, const PolicyInput& input,
                                    const std::string& events) const {
  // Hysteresis applies against the split in force only when it is still a valid split of B within the caps.
  const int n = worldSizeOf(input);
  const std::vector<int64_t> caps = capsOf(input);
  const Split& current = input.current;
  bool currentValid = current.worldSize() == n && current.total() == input.globalBatch;
  for (int i = 0; currentValid && i < n; ++i)
    currentValid = current.batches[i] >= 1 && (caps[i] <= 0 || current.batches[i] <= caps[i]);
  if (!currentValid || best.capsInfeasible)
    return {best.split,
            fmt::format("balanced: predicted {:.4g} ms ({}){}{}", best.ms, lines.basis, events, best.capNote)};
  const double currentMs = lines.predictedMs(current);
  const double gain = currentMs > 0 ? 1 - best.ms / currentMs : 0;
  const double threshold = std::max(options_.hysteresis, options_.noiseMultiplier * measurementNoise(input));
  if (gain <= threshold)
    return {current, fmt::format("balanced: kept, predicted {:.4g} ms, best {:.4g} ms (gain {:.1f}% <= {:.1f}%; {}){}",
                                 currentMs, best.ms, 100 * gain, 100 * threshold, lines.basis, events)};
  return {best.split, fmt::format("balanced: predicted {:.4g} ms, was {:.4g} ms (gain {:.1f}%; {}){}{}", best.ms,
                                  currentMs, 100 * gain, lines.basis, events, best.capNote)};
}

}  // namespace balancenet::orchestrator
