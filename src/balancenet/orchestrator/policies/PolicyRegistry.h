// PolicyRegistry: --policy name -> Policy, with the options each policy takes.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "balancenet/core/Split.h"
#include "balancenet/orchestrator/policies/BalancedOptions.h"
#include "balancenet/orchestrator/policies/Policy.h"

namespace balancenet::orchestrator {

struct PolicyOptions {
  std::string name = "balanced";  // --policy
  uint64_t seed = 1;              // random: --seed
  Split staticSplit;              // static: --split (required)
  bool bnoNormalize = false;      // bno: --bno-normalize
  BalancedOptions balanced;       // balanced: thresholds
};

// Throws UsageError for an unknown name ("unknown --policy 'x'; choose one of: ...") or static without a split.
std::unique_ptr<Policy> makePolicy(const PolicyOptions& options);
// equal, random, static, bno, proportional, balanced.
std::vector<std::string> policyNames();

}  // namespace balancenet::orchestrator
