// StaticPolicy: returns the --split it was built with, checked against each input's N and B.
#include "balancenet/orchestrator/policies/StaticPolicy.h"

#include <utility>

#include <fmt/format.h>

#include "balancenet/orchestrator/policies/PolicySupport.h"

namespace balancenet::orchestrator {

StaticPolicy::StaticPolicy(Split split) : split_(std::move(split)) {}

Decision StaticPolicy::decide(const PolicyInput& input) {
  if (input.globalBatch == split_.total()) {
    split_.validate(worldSizeOf(input), input.globalBatch);
    return {split_, "static split " + split_.str()};
  }
  // Another B (--global-batch auto or a schedule): the --split's proportions, apportioned.
  const int n = worldSizeOf(input);
  split_.validate(n, split_.total());
  std::vector<double> weights(split_.batches.begin(), split_.batches.end());
  Split scaled{apportion(weights, input.globalBatch).sizes};
  return {scaled, fmt::format("static split {} scaled to B = {}", split_.str(), input.globalBatch)};
}

}  // namespace balancenet::orchestrator
