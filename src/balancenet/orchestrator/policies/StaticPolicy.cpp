// StaticPolicy: returns the --split it was built with, checked against each input's N and B.
#include "balancenet/orchestrator/policies/StaticPolicy.h"

#include <utility>

#include "balancenet/orchestrator/policies/PolicySupport.h"

namespace balancenet::orchestrator {

StaticPolicy::StaticPolicy(Split split) : split_(std::move(split)) {}

Decision StaticPolicy::decide(const PolicyInput& input) {
  split_.validate(worldSizeOf(input), input.globalBatch);
  return {split_, "static split " + split_.str()};
}

}  // namespace balancenet::orchestrator
