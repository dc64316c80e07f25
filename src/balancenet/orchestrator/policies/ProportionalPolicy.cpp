// ProportionalPolicy: b_i proportional to measured samples per ms, with fallbacks and memory caps.
#include "balancenet/orchestrator/policies/ProportionalPolicy.h"

#include <cmath>

#include <fmt/format.h>

#include "balancenet/orchestrator/policies/PolicySupport.h"

namespace balancenet::orchestrator {

double ProportionalPolicy::measuredSpeed(const NodeMetrics& node) {
  // Total samples over total time of the window: a per-step mean of b/t would overweight fast steps.
  double samples = 0, ms = 0;
  for (const auto& [batch, computeMs] : node.recent) {
    if (batch > 0 && std::isfinite(computeMs) && computeMs > 0) {
      samples += static_cast<double>(batch);
      ms += computeMs;
    }
  }
  if (ms > 0) return samples / ms;
  if (node.batch > 0 && std::isfinite(node.computeMs) && node.computeMs > 0)
    return static_cast<double>(node.batch) / node.computeMs;
  return 0;
}

Decision ProportionalPolicy::decide(const PolicyInput& input) {
  const int n = worldSizeOf(input);
  std::vector<double> speed(n, 0.0), ops(n, 0.0);
  std::vector<int64_t> caps(n, 0);
  bool allMeasured = static_cast<int>(input.nodes.size()) == n, allOps = allMeasured;
  for (int i = 0; i < static_cast<int>(input.nodes.size()); ++i) {
    const NodeMetrics& node = input.nodes[i];
    speed[i] = measuredSpeed(node);
    ops[i] = std::isfinite(node.opsPerSecond) ? node.opsPerSecond : 0.0;
    caps[i] = node.maxBatch;
    allMeasured = allMeasured && speed[i] > 0;
    allOps = allOps && ops[i] > 0;
  }
  const char* basis = allMeasured ? "measured samples/ms"
                      : allOps    ? "opsPerSecond (no step measured yet)"
                                  : "equal (nothing measured)";
  const std::vector<double> weights = allMeasured ? speed : allOps ? ops : std::vector<double>(n, 1.0);
  const Apportionment a = apportion(weights, input.globalBatch, caps);
  Split split;
  split.batches = a.sizes;
  std::string note = fmt::format("proportional to {}", basis);
  if (a.capsInfeasible) note += "; maxBatch caps hold less than B, excess shared by speed";
  return {split, note};
}

}  // namespace balancenet::orchestrator
