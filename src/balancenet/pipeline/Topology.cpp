// Topology: ranks laid out column by column (rank = replica * stages + stage).
#include "balancenet/pipeline/Topology.h"

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::pipeline {

Topology Topology::of(int worldSize, int stages) {
  if (stages < 1) throw UsageError(fmt::format("--pipeline-stages must be at least 1; got {}", stages));
  // The launcher refuses --nodes < 1 before this; a world of 0 here would be a bug, not input.
  if (worldSize < 1) throw InternalError(fmt::format("a pipeline topology of {} workers", worldSize));
  if (worldSize % stages != 0)
    throw UsageError(fmt::format("--nodes {} is not a multiple of --pipeline-stages {}", worldSize, stages));
  return Topology{stages, worldSize / stages};
}

std::vector<int> Topology::stageRanks(int stage) const {
  std::vector<int> ranks;
  for (int replica = 0; replica < replicas; ++replica) ranks.push_back(rankOf(stage, replica));
  return ranks;
}

std::vector<int> Topology::columnRanks(int replica) const {
  std::vector<int> ranks;
  for (int stage = 0; stage < stages; ++stage) ranks.push_back(rankOf(stage, replica));
  return ranks;
}

}  // namespace balancenet::pipeline
