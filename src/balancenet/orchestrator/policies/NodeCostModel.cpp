// NodeCostModel: windows of (batch, ms) points, constrained least squares, smoothing and quick reaction.
#include "balancenet/orchestrator/policies/NodeCostModel.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "balancenet/core/Median.h"

namespace balancenet::orchestrator {

namespace {

bool usablePoint(const CostPoint& p) {
  return std::isfinite(p.batch) && std::isfinite(p.ms) && p.batch > 0 && p.ms > 0 && p.count > 0;
}

// observed / predicted over a window, step-weighted (sums, so one short window cannot dominate).
template <typename Points>
double windowRatio(const Points& window, double a, double c) {
  double observed = 0, predicted = 0;
  for (const CostPoint& p : window) {
    if (!usablePoint(p)) continue;
    observed += p.count * p.ms;
    predicted += p.count * (a + c * p.batch);
  }
  return predicted > 0 ? observed / predicted : 1.0;
}

}  // namespace

void NodeCostModel::windowPoints(const NodeMetrics& node, std::vector<CostPoint>& points, std::vector<double>& times) {
  // A window holds few distinct batches (one per decision it spans): each new batch, in order of first
  // appearance (deterministic), collects its times into the caller's buffer. The caller keeps both buffers
  // across nodes and decisions: at thousands of nodes per decision, maps, then per-node vectors, were most of
  // the policy's time.
  auto usable = [](const std::pair<int64_t, double>& step) {
    return step.first > 0 && std::isfinite(step.second) && step.second > 0;
  };
  const auto& recent = node.recent;
  points.clear();
  for (size_t s = 0; s < recent.size(); ++s) {
    const int64_t batch = recent[s].first;
    const auto batchValue = static_cast<double>(batch);
    if (!usable(recent[s]) ||
        std::any_of(points.begin(), points.end(), [&](const CostPoint& p) { return p.batch == batchValue; }))
      continue;
    times.clear();
    for (size_t t = s; t < recent.size(); ++t)
      if (recent[t].first == batch && usable(recent[t])) times.push_back(recent[t].second);
    points.push_back({batchValue, medianInPlace(times), static_cast<double>(times.size())});
  }
  if (points.empty() && node.batch > 0 && std::isfinite(node.computeMs) && node.computeMs > 0)
    points.push_back({static_cast<double>(node.batch), node.computeMs, 1.0});
}

CostLine NodeCostModel::fit(const std::vector<CostPoint>& points, double fixedFraction,
                            const BalancedOptions& options) {
  double w = 0, sb = 0, st = 0;
  double bmin = std::numeric_limits<double>::infinity(), bmax = 0;
  for (const CostPoint& p : points) {
    if (!usablePoint(p)) continue;
    w += p.count;
    sb += p.count * p.batch;
    st += p.count * p.ms;
    bmin = std::min(bmin, p.batch);
    bmax = std::max(bmax, p.batch);
  }
  if (w <= 0) return {};
  const double bbar = sb / w, tbar = st / w;
  if (bmax > bmin && bmax - bmin >= options.minFitSpread * bmax) {
    double var = 0, cov = 0, stb = 0, sbb = 0;
    for (const CostPoint& p : points) {
      if (!usablePoint(p)) continue;
      var += p.count * (p.batch - bbar) * (p.batch - bbar);
      cov += p.count * (p.batch - bbar) * (p.ms - tbar);
      stb += p.count * p.ms * p.batch;
      sbb += p.count * p.batch * p.batch;
    }
    const double c = cov / var;
    if (c > 0) {
      const double a = tbar - c * bbar;
      // A negative fixed cost is noise around a = 0: refit through the origin instead of predicting
      // negative times for small batches.
      if (a >= 0) return {a, c, true, true, bbar, tbar};
      return {0.0, stb / sbb, true, true, bbar, tbar};
    }
    // Time not increasing with batch: the spread is drowned in noise; fall through to the one-size model.
  }
  return CostLine{0, 0, true, false, bbar, tbar}.oneSize(fixedFraction);
}

CostLine CostLine::oneSize(double fixedFraction) const {
  if (!valid) return {};  // no usable point: nothing to refit from
  const double f = std::clamp(fixedFraction, 0.0, 0.99);
  return {f * meanMs, (1 - f) * meanMs / meanBatch, true, false, meanBatch, meanMs};
}

double NodeCostModel::deviation(const std::vector<CostPoint>& window) const {
  if (!hasModel_) return 0;
  double observed = 0;
  for (const CostPoint& p : window) observed += usablePoint(p) ? p.count * p.ms : 0;
  return observed > 0 ? windowRatio(window, a_, c_) : 0;
}

double NodeCostModel::absorb(const std::vector<CostPoint>& window, const BalancedOptions& options, double commonMode) {
  if (window.empty()) return 0;
  if (hasModel_) {
    const double ratio = windowRatio(window, a_, c_);
    if (std::abs(ratio / (commonMode > 0 ? commonMode : 1.0) - 1) > options.reactThreshold) {
      std::vector<CostPoint> combined(history_);
      combined.insert(combined.end(), window.begin(), window.end());
      const CostLine line = fit(combined, fixedFraction(), options);
      if (line.valid && std::abs(windowRatio(window, line.a, line.c) - 1) > options.reactResidual) {
        history_.assign(window.begin(), window.end());
        replaceNext_ = true;
        return ratio;
      }
    }
  }
  history_.insert(history_.end(), window.begin(), window.end());
  const size_t keep = static_cast<size_t>(std::max(options.historyPoints, 1));
  if (history_.size() > keep) history_.erase(history_.begin(), history_.end() - static_cast<std::ptrdiff_t>(keep));
  return 0;
}

void NodeCostModel::refit(const CostLine& line, const BalancedOptions& options) {
  if (!line.valid) return;
  if (!hasModel_ || replaceNext_) {
    a_ = line.a;
    c_ = line.c;
  } else {
    a_ = options.smoothing * line.a + (1 - options.smoothing) * a_;
    c_ = options.smoothing * line.c + (1 - options.smoothing) * c_;
  }
  hasModel_ = true;
  replaceNext_ = false;
}

double NodeCostModel::fixedFraction() const {
  double w = 0, sb = 0;
  for (const CostPoint& p : history_) {
    if (!usablePoint(p)) continue;
    w += p.count;
    sb += p.count * p.batch;
  }
  if (w <= 0 || !hasModel_) return 0;
  const double t = predict(sb / w);
  return t > 0 ? a_ / t : 0;
}

nlohmann::json NodeCostModel::toJson() const {
  nlohmann::json points = nlohmann::json::array();
  for (const CostPoint& p : history_) points.push_back({p.batch, p.ms, p.count});
  return {{"history", points}, {"a", a_}, {"c", c_}, {"has_model", hasModel_}, {"replace_next", replaceNext_}};
}

NodeCostModel NodeCostModel::fromJson(const nlohmann::json& j) {
  NodeCostModel m;
  for (const auto& p : j.at("history"))
    m.history_.push_back({p.at(0).get<double>(), p.at(1).get<double>(), p.at(2).get<double>()});
  m.a_ = j.at("a").get<double>();
  m.c_ = j.at("c").get<double>();
  m.hasModel_ = j.at("has_model").get<bool>();
  m.replaceNext_ = j.at("replace_next").get<bool>();
  return m;
}

}  // namespace balancenet::orchestrator
