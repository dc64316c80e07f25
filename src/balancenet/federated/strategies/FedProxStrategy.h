// FedProxStrategy (Li et al. 2020): FedAvg whose clients add mu/2 ||w - w_global||^2 to their local loss
// (--mu), which keeps clients with much local work or skewed data near the global model.
#pragma once
#include "balancenet/federated/strategies/FedAvgStrategy.h"

namespace balancenet::federated {

class FedProxStrategy : public FedAvgStrategy {
 public:
  explicit FedProxStrategy(const FederatedOptions& options) : FedAvgStrategy(options, options.mu) {}
  std::string name() const override { return "fedprox"; }
};

}  // namespace balancenet::federated
