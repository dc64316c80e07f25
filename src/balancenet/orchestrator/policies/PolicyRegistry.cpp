// PolicyRegistry: builds the policy named by --policy.
#include "balancenet/orchestrator/policies/PolicyRegistry.h"

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/orchestrator/policies/BalancedPolicy.h"
#include "balancenet/orchestrator/policies/BnoPolicy.h"
#include "balancenet/orchestrator/policies/EqualPolicy.h"
#include "balancenet/orchestrator/policies/ProportionalPolicy.h"
#include "balancenet/orchestrator/policies/RandomPolicy.h"
#include "balancenet/orchestrator/policies/StaticPolicy.h"

namespace balancenet::orchestrator {

std::vector<std::string> policyNames() { return {"equal", "random", "static", "bno", "proportional", "balanced"}; }

std::unique_ptr<Policy> makePolicy(const PolicyOptions& options) {
  const std::string& name = options.name;
  if (name == "equal") return std::make_unique<EqualPolicy>();
  if (name == "random") return std::make_unique<RandomPolicy>(options.seed);
  if (name == "static") {
    if (options.staticSplit.batches.empty()) throw UsageError("--policy static needs --split");
    return std::make_unique<StaticPolicy>(options.staticSplit);
  }
  if (name == "bno") return std::make_unique<BnoPolicy>(options.bnoNormalize);
  if (name == "proportional") return std::make_unique<ProportionalPolicy>();
  if (name == "balanced") return std::make_unique<BalancedPolicy>(options.balanced);
  throw UsageError(fmt::format("unknown --policy '{}'; choose one of: {}", name, fmt::join(policyNames(), ", ")));
}

}  // namespace balancenet::orchestrator
