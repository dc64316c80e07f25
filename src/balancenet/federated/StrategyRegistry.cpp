// StrategyRegistry: builds the strategy named by --strategy, after checking the options every strategy uses.
#include "balancenet/federated/StrategyRegistry.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/federated/strategies/BalancedStrategy.h"
#include "balancenet/federated/strategies/FedAvgStrategy.h"
#include "balancenet/federated/strategies/FedBuffStrategy.h"
#include "balancenet/federated/strategies/FedNovaStrategy.h"
#include "balancenet/federated/strategies/FedProxStrategy.h"

namespace balancenet::federated {

namespace {

void checkOptions(const FederatedOptions& o) {
  if (!(o.fraction > 0 && o.fraction <= 1))
    throw UsageError(fmt::format("--fraction must be in (0, 1], got {}", o.fraction));
  if (o.localSteps.low < 1 || o.localSteps.high < o.localSteps.low)
    throw UsageError(fmt::format("--local-steps must be N or LO:HI with 1 <= LO <= HI, got {}:{}", o.localSteps.low,
                                 o.localSteps.high));
  if (!(o.deadlineS >= 0) || !std::isfinite(o.deadlineS))
    throw UsageError(fmt::format("--deadline-s must be 0 (none) or positive, got {}", o.deadlineS));
  if (!(o.mu >= 0) || !std::isfinite(o.mu)) throw UsageError(fmt::format("--mu must be non-negative, got {}", o.mu));
  if (!(o.serverLr > 0) || !std::isfinite(o.serverLr))
    throw UsageError(fmt::format("--server-lr must be positive, got {}", o.serverLr));
  if (o.bufferSize < 1) throw UsageError(fmt::format("--buffer must be at least 1, got {}", o.bufferSize));
}

}  // namespace

std::vector<std::string> strategyNames() { return {"fedavg", "fedprox", "fednova", "fedbuff", "balanced"}; }

std::unique_ptr<Strategy> makeStrategy(const FederatedOptions& options) {
  const std::string& name = options.strategy;
  const auto names = strategyNames();
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw UsageError(fmt::format("unknown --strategy '{}'; choose one of: {}", name, fmt::join(names, ", ")));
  checkOptions(options);
  if (name == "fedavg") return std::make_unique<FedAvgStrategy>(options);
  if (name == "fedprox") return std::make_unique<FedProxStrategy>(options);
  if (name == "fednova") return std::make_unique<FedNovaStrategy>(options);
  if (name == "fedbuff") return std::make_unique<FedBuffStrategy>(options);
  if (name == "balanced") return std::make_unique<BalancedStrategy>(options);
  throw InternalError("makeStrategy: '" + name + "' is listed in strategyNames() but not built here");
}

}  // namespace balancenet::federated
