// PolicySupport: helpers every policy shares: the node count of an input and largest-remainder apportionment.
#pragma once
#include <cstdint>
#include <vector>

#include "balancenet/orchestrator/policies/Policy.h"

namespace balancenet::orchestrator {

// N: the nodes the metrics describe, or the current split's size when no metrics came with the input.
// Throws UsageError when there is no node or B < N (every node needs at least one sample).
int worldSizeOf(const PolicyInput& input);

struct Apportionment {
  std::vector<int64_t> sizes;
  bool capsInfeasible =
      false;  // the caps sum to less than the total: every node is at its cap plus a share of the rest
};

// Splits `total` into integers proportional to `weights` (largest remainder, ties to the lower index), each
// in [minEach, caps[i]] (caps[i] <= 0 or caps empty: no cap). Nodes whose quota falls outside the bounds are
// pinned to the bound and the rest is re-apportioned among the others. When the caps cannot hold `total`,
// every node gets its cap and the excess is apportioned by weight without caps (capsInfeasible). Weights
// that are all zero or not finite count as equal.
Apportionment apportion(const std::vector<double>& weights, int64_t total, const std::vector<int64_t>& caps = {},
                        int64_t minEach = 1);

}  // namespace balancenet::orchestrator
