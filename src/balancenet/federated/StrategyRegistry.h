// StrategyRegistry: --strategy name -> Strategy, like the allocation policies' registry.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "balancenet/federated/FederatedOptions.h"
#include "balancenet/federated/Strategy.h"

namespace balancenet::federated {

// Throws UsageError for an unknown name ("unknown --strategy 'x'; choose one of: ...").
std::unique_ptr<Strategy> makeStrategy(const FederatedOptions& options);
// fedavg, fedprox, fednova, fedbuff, balanced.
std::vector<std::string> strategyNames();

}  // namespace balancenet::federated
