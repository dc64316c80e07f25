// ProportionalPolicy: the literature's baseline (DBS, LB-BSP, OmniLearn): each node's batch proportional
// to its measured speed, the global batch fixed.
#pragma once
#include <vector>

#include "balancenet/orchestrator/policies/Policy.h"

namespace balancenet::orchestrator {

// speed_i = samples per compute-ms, from the window's (batch, computeMs) observations (or batch/computeMs).
// When not every node has a measurement: opsPerSecond if every node has one, else an equal split (mixing
// units across nodes would be meaningless). b_i = B * speed_i / sum speed, largest-remainder rounding, each
// >= 1 and <= maxBatch when maxBatch > 0 (if the caps cannot hold B, the excess is shared by speed; noted).
class ProportionalPolicy : public Policy {
 public:
  std::string name() const override { return "proportional"; }
  Decision decide(const PolicyInput& input) override;

  // Samples per ms of one node, 0 when it has no measurement.
  static double measuredSpeed(const NodeMetrics& node);
};

}  // namespace balancenet::orchestrator
