// GlobalBatchSizer: the BatchSizer of --global-batch auto and of a B schedule. It tracks the gradient noise
// scale from every step's norms, fits each node's step-time line from the orchestrator's windows, and at each
// decision picks B (the goodput optimum, or the schedule's; never back toward the previous B on predictions
// alone) and the learning-rate factor for it.
#pragma once
#include <map>
#include <vector>

#include "balancenet/adaptive/BatchReversal.h"
#include "balancenet/adaptive/BatchSizing.h"
#include "balancenet/adaptive/GoodputPlanner.h"
#include "balancenet/adaptive/GradientNoiseScale.h"
#include "balancenet/adaptive/LrScaling.h"
#include "balancenet/orchestrator/BatchSizer.h"
#include "balancenet/orchestrator/policies/BalancedOptions.h"
#include "balancenet/orchestrator/policies/NodeCostModel.h"

namespace balancenet::adaptive {

class GlobalBatchSizer : public orchestrator::BatchSizer {
 public:
  // Steps whose norms must be in before the noise scale moves B or the rate: one step's estimate with 2
  // workers has a relative spread of sqrt(2) (docs/allocation.md), and a B or an lr chosen on it would swing.
  static constexpr int64_t kMinNoiseSamples = 10;
  // Steps whose measured time calibrates the part of a step that does not grow with B.
  static constexpr size_t kStepWindow = 10;

  // `baseBatch`: the B the learning rate is set for (auto's MIN, a schedule's first); `balancedShares`: the
  // policy splits each B by the min-max optimum of the node lines (balanced), else in the proportions of
  // the split in force (equal, proportional, ...), which is how throughput is predicted for each B.
  GlobalBatchSizer(BatchSizing sizing, LrScaling rule, int64_t baseBatch, bool balancedShares);

  orchestrator::BatchChoice choose(const orchestrator::PolicyInput& input) override;
  void observe(const metrics::StepRecord& mine, const Split& split) override;
  bool mustDecideAt(int64_t step) const override;
  double noiseScale() const override { return tracker_.noiseScale(); }
  // The noise scale decisions use: < 0 (unknown) until kMinNoiseSamples steps are in.
  double decisionNoiseScale() const;
  std::string saveState() const override;
  void loadState(const std::string& state) override;

 private:
  // Each node's t_i(b) = a_i + c_i b after absorbing its latest window, as the balanced policy fits them.
  std::vector<NodeLine> linesOf(const orchestrator::PolicyInput& input);
  // The per-step time that does not grow with B: the measured step less the lines' compute at the split in
  // force, at least the least sync time of any node.
  double fixedStepMs(const orchestrator::PolicyInput& input, const std::vector<NodeLine>& lines) const;

  BatchSizing sizing_;
  LrScaling rule_;
  int64_t baseBatch_;
  bool balancedShares_;
  NoiseScaleTracker tracker_;
  orchestrator::BalancedOptions fitOptions_;
  std::vector<orchestrator::NodeCostModel> models_;  // per rank, fitted from the decision windows
  // This rank's latest step times (updateMs), for the part of the step the node lines do not explain; rank 0's
  // are the ones choose() reads.
  std::vector<double> recentStepMs_;
  // The latest kStepWindow step times measured at each B, and the B in force before the current one: a move back
  // toward it needs these measurements' word (BatchReversal.h).
  std::map<int64_t, std::vector<double>> stepMsAt_;
  int64_t seenBatch_ = 0, previousBatch_ = 0;
  MeasuredSteps measuredAt(int64_t batch) const;
};

}  // namespace balancenet::adaptive
