// BalancedStrategy (balancenet's): each round every sampled client gets a local-work quota from its live
// measured speed so that all finish together by the round's length T (QuotaPlanner.h): the same local steps
// where it can, with a batch in proportion to its speed, fewer steps only for a client too slow for the
// smallest batch. Nobody waits for the slowest; unequal steps left are normalised as FedNova does, so they
// do not bias the objective.
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
