// Forming a rank's stage and column groups.
#include "balancenet/pipeline/PipelineGroups.h"

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::pipeline {

PipelineGroups formPipelineGroups(comm::Communicator& world, const Topology& topology) {
  if (topology.worldSize() != world.size())
    throw InternalError(fmt::format("a pipeline of {} x {} ranks over a group of {}", topology.stages,
                                    topology.replicas, world.size()));
  PipelineGroups groups{topology, world, nullptr, nullptr};
  groups.stage = world.subgroup(topology.stageRanks(groups.stageIndex()));
  groups.column = world.subgroup(topology.columnRanks(groups.replica()));
  return groups;
}

}  // namespace balancenet::pipeline
