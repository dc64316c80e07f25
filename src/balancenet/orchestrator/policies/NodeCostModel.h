// NodeCostModel: one node's compute time model t(b) = a + c*b, fitted online from its observations.
#pragma once
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "balancenet/orchestrator/policies/BalancedOptions.h"
#include "balancenet/orchestrator/policies/Policy.h"

namespace balancenet::orchestrator {

// One observation point: `count` steps at `batch` samples took a median of `ms` compute milliseconds.
struct CostPoint {
  double batch = 0;
  double ms = 0;
  double count = 1;
};

// A line t(b) = a + c*b. `fitted`: from least squares over several batch sizes (its a is evidence of a
// fixed cost); otherwise a = fixedFraction * t was assumed at the one batch size seen.
struct CostLine {
  double a = 0;
  double c = 0;
  bool valid = false;
  bool fitted = false;
  double meanBatch = 0, meanMs = 0;  // of the points (count-weighted), from which the one-size model follows

  // The one-size model through (meanBatch, meanMs) with a = fixedFraction * meanMs (clamped to [0, 0.99]).
  CostLine oneSize(double fixedFraction) const;
};

class NodeCostModel {
 public:
  // The points of one decision window into `points` (cleared first): one per distinct batch in `recent`
  // (median ms, robust to a stray slow step), or (batch, computeMs) when `recent` is empty; nothing when the
  // node measured nothing. `times` is scratch space (buffers the caller reuses: no allocation per node).
  static void windowPoints(const NodeMetrics& node, std::vector<CostPoint>& points, std::vector<double>& times);
  // Weighted least squares with a >= 0 and c > 0 (a through-origin fit when the intercept comes out
  // negative); the one-size model when the batches are too close or the slope is not positive.
  static CostLine fit(const std::vector<CostPoint>& points, double fixedFraction, const BalancedOptions& options);

  // Observed / predicted time of a window; 0 without a model or a usable point.
  double deviation(const std::vector<CostPoint>& window) const;
  // Adds a window to the history. Returns observed/predicted of the window when it triggered a quick reaction
  // (history dropped, next refit unsmoothed), else 0. The reaction compares the node with `commonMode`, the
  // deviation every node showed in the same window: a machine-wide slowdown (a busy shared host slows all
  // workers alike) changes no node's relative speed, so it is absorbed with smoothing like any window.
  double absorb(const std::vector<CostPoint>& window, const BalancedOptions& options, double commonMode = 1.0);
  // fit() of the history with no fixed fraction: `fitted` says whether it spans enough batch sizes for least
  // squares (then that line is the refit's); otherwise line.oneSize(f) is, once f is known. One pass over
  // the history serves both.
  CostLine fitHistory(const BalancedOptions& options) const { return fit(history_, 0.0, options); }
  // Smooths a line fitted to the history into the model (or replaces it after a reaction or at the start).
  void refit(const CostLine& line, const BalancedOptions& options);

  bool hasModel() const { return hasModel_; }
  double a() const { return a_; }
  double c() const { return c_; }
  double predict(double batch) const { return a_ + c_ * batch; }
  // a / t at the mean remembered batch: how much of this node's step is fixed cost.
  double fixedFraction() const;

  // Everything above, for checkpoints: a restored model predicts and refits exactly as this one.
  nlohmann::json toJson() const;
  static NodeCostModel fromJson(const nlohmann::json& j);

 private:
  // A vector, not a deque: a deque's 512-byte blocks made the models of 4,096 nodes outgrow the cache.
  std::vector<CostPoint> history_;
  double a_ = 0;
  double c_ = 0;
  bool hasModel_ = false;
  bool replaceNext_ = false;
};

}  // namespace balancenet::orchestrator
