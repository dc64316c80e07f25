// BalancedStrategy (balancenet's): each round every sampled client gets a local-step quota from its live
// measured speed so that all finish together by the round's length T (QuotaPlanner.h): nobody waits for the
// slowest. The unequal local work is then normalised as FedNova does, so it does not bias the objective.
#pragma once
#include "balancenet/federated/strategies/FedNovaStrategy.h"

namespace balancenet::federated {

// The task deadline is this many times T: a client slowed down mid-round still reports its partial work
// (accepted, and normalised by the steps it did) instead of holding the round up or being lost.
constexpr double kBalancedDeadlineMargin = 1.5;

class BalancedStrategy : public FedNovaStrategy {
 public:
  explicit BalancedStrategy(const FederatedOptions& options) : FedNovaStrategy(options) {}
  std::string name() const override { return "balanced"; }
  // Quotas for the --fraction sample, planned over the sampled clients' speeds; deadline margin x T for
  // every task (none in a first round with no --deadline-s: nobody measured yet, T unknown).
  std::vector<ClientTask> configure(const RoundContext& context) override;
};

}  // namespace balancenet::federated
