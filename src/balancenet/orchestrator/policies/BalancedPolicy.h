// BalancedPolicy: balancenet's own policy: the integer split of a fixed B that minimises the predicted
// step time max_i t_i(b_i), with t_i(b) = a_i + c_i*b fitted online per node.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "balancenet/orchestrator/policies/BalancedOptions.h"
#include "balancenet/orchestrator/policies/NodeCostModel.h"
#include "balancenet/orchestrator/policies/Policy.h"

namespace balancenet::orchestrator {

// Each decision:
//  1. every node's window (its `recent` (batch, computeMs) steps) goes into its NodeCostModel: least squares
//     for a_i (fixed cost) and c_i (ms per sample) once it has seen batch sizes spread enough, a
//     proportional model with a small assumed fixed cost before that; exponential smoothing across decisions;
//     a quick reaction (history dropped) when a node's latest window contradicts its model;
//  2. the exact integer optimum of max_i (a_i + c_i*b_i) subject to sum b_i = B, 1 <= b_i <= maxBatch_i;
//  3. hysteresis: the current split stays unless the optimum is predicted faster by more than
//     max(options.hysteresis, options.noiseMultiplier x the measured noise of the window means).
// Latency is ignored: under all-reduce the communication time is shared by all nodes, so it cannot be
// balanced by moving samples. Each node's own work around its compute (NodeMetrics::ownMs: its optimizer step, a
// hand-over's packing) adds to its a_i: it is what the exchange waits for on a capped host. Nodes without any
// measurement take the mean model of the measured ones; with no measurement at all, c_i = 1/opsPerSecond_i (or equal)
// and a_i = 0.
class BalancedPolicy : public Policy {
 public:
  // Throws UsageError for options outside their ranges.
  explicit BalancedPolicy(BalancedOptions options = {});
  std::string name() const override { return "balanced"; }
  Decision decide(const PolicyInput& input) override;
  // The fitted node models (JSON); loadState throws RuntimeFailure for text it cannot read.
  std::string saveState() const override;
  void loadState(const std::string& state) override;

  const BalancedOptions& options() const { return options_; }
  // Per-rank models after the last decision (for logs and tests).
  const std::vector<NodeCostModel>& models() const { return models_; }

  // Exact integer minimiser of max_i (a_i + c_i*b_i) over sum b_i = total, 1 <= b_i <= caps_i (caps_i <= 0:
  // no cap; requires c_i > 0 and the caps to hold `total`): starting from b_i = 1, each further sample goes
  // to the node whose time after taking it is the smallest (ties to the lower rank). Since every t_i
  // increases with b, the largest time reached is the least possible.
  static std::vector<int64_t> minimizeMaxTime(const std::vector<double>& a, const std::vector<double>& c, int64_t total,
                                              const std::vector<int64_t>& caps);

  // Relative standard error of a node's mean compute time over its window (steps at the batch in force),
  // the median over nodes; 0 when no node has three such steps.
  static double measurementNoise(const PolicyInput& input);
  // One node's part of it: the relative standard error of its window's mean at the batch in force; < 0 when
  // the window has fewer than three such steps.
  static double windowNoise(const NodeMetrics& node);

 private:
  // t_i(b) = a_i + c_i*b for every rank, as the decision uses them, and where they came from.
  // With leave-out on, a_i leaves out the rank's serving of clients (each split's plan adds it back) and handOverMs is
  // what one client's hand-over costs its peer.
  struct CostLines {
    std::vector<double> a, c;
    std::string basis;
    bool leaveOut = false;
    double offloadBelow = 0;
    double handOverMs = 0;
    double predictedMs(const Split& s) const;  // max_i t_i(b_i), with leave-out the peers' hand-overs in
  };
  struct Candidate {
    Split split;
    double ms = 0;
    bool capsInfeasible = false;
    std::string capNote;
  };
  // The phases of decide(), in order: update the node models from the windows (returns the log events),
  // read the lines off them, find the optimum, then keep the current split unless the gain beats the noise.
  std::string absorbWindows(const PolicyInput& input);
  CostLines costLines(const PolicyInput& input);
  // What one client's hand-over cost its peer in the window (the serving time per client served), remembered from the
  // last window in which some client handed a gradient over (a left-out one's only gets the sum back).
  double handOverMs(const PolicyInput& input);
  static Candidate optimise(const CostLines& lines, const PolicyInput& input);
  // With leave-out: `best` if its set of workers with a share is the current one's, or beats the best split of the
  // current set by more than options.hysteresis; otherwise that split (membership has its own hysteresis).
  Candidate keepMembers(Candidate best, const CostLines& lines, const PolicyInput& input);
  // The gain a move must beat: max(hysteresis, noiseMultiplier x the windows' median noise).
  double moveThreshold();
  Decision keepOrMove(const Candidate& best, const CostLines& lines, const PolicyInput& input,
                      const std::string& events);
  static std::vector<int64_t> capsOf(const PolicyInput& input);

  BalancedOptions options_;
  std::vector<NodeCostModel> models_;
  double handOverMs_ = 0;  // handOverMs()'s memory
  // absorbWindows' working space, kept across decisions: allocating it per node per decision cost more than
  // the arithmetic at thousands of nodes. Holds nothing between decisions that matters.
  struct Scratch {
    std::vector<std::vector<CostPoint>> windows;  // per node: the points of its latest window
    std::vector<double> times, deviations, sorted;
    std::vector<CostLine> fits;  // per node: fit() of its history
    std::vector<double> noises;  // windowNoise() of the nodes that have one, for measurementNoise's median
  } scratch_;
};

}  // namespace balancenet::orchestrator
