// Topology: ranks laid out column by column (rank = replica * stages + stage).
#include "balancenet/pipeline/Topology.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "balancenet/core/Error.h"

namespace balancenet::pipeline {

Topology Topology::of(int worldSize, int stages) {
  if (stages < 1) throw UsageError(fmt::format("--pipeline-stages must be at least 1; got {}", stages));
  // The launcher refuses --nodes < 1 before this; a world of 0 here would be a bug, not input.
  if (worldSize < 1) throw InternalError(fmt::format("a pipeline topology of {} workers", worldSize));
  if (worldSize % stages != 0)
    throw UsageError(fmt::format("--nodes {} is not a multiple of --pipeline-stages {}", worldSize, stages));
  return Topology{stages, worldSize / stages, {}};
}

Topology Topology::placed(int worldSize, int stages, std::vector<int> slotRanks) {
  Topology t = of(worldSize, stages);
  std::vector<int> sorted = slotRanks;
  std::sort(sorted.begin(), sorted.end());
  for (int r = 0; r < worldSize; ++r)
    if (static_cast<int>(sorted.size()) != worldSize || sorted[r] != r)
      throw InternalError(
          fmt::format("slots {} are not a placement of {} ranks", fmt::join(slotRanks, ","), worldSize));
  t.slotRanks = std::move(slotRanks);
  return t;
}

int Topology::slotOf(int rank) const {
  if (slotRanks.empty()) return rank;
  const auto at = std::find(slotRanks.begin(), slotRanks.end(), rank);
  if (at == slotRanks.end()) throw InternalError(fmt::format("rank {} has no slot", rank));
  return static_cast<int>(at - slotRanks.begin());
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
