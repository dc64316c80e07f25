// PipelineGroups: the process groups one rank of a pipeline job talks over, formed once.
#pragma once
#include <memory>

#include "balancenet/comm/group/Communicator.h"
#include "balancenet/pipeline/Topology.h"

namespace balancenet::pipeline {

// Activations and their gradients go point to point over the world group (global ranks as peers);
// a stage's replicas sum their gradients over `stage`; a column agrees on its split and ends its
// schedule over `column`. Stage 0's group is also the group of column heads, where the split is decided.
struct PipelineGroups {
  Topology topology;
  comm::Communicator& world;
  std::unique_ptr<comm::Communicator> stage;   // the replicas of this rank's stage (rank = replica)
  std::unique_ptr<comm::Communicator> column;  // this rank's pipeline (rank = stage)

  int stageIndex() const { return topology.stageOf(world.rank()); }
  int replica() const { return topology.replicaOf(world.rank()); }
  bool firstStage() const { return stageIndex() == 0; }
  bool lastStage() const { return stageIndex() == topology.stages - 1; }
  // Global ranks of this column's neighbours (only valid where they exist).
  int previousRank() const { return topology.rankOf(stageIndex() - 1, replica()); }
  int nextRank() const { return topology.rankOf(stageIndex() + 1, replica()); }
};

// Collective over `world`. Every rank forms its stage group, then its column group: each group's
// members all form their stage group first, so no member waits for one still forming another.
PipelineGroups formPipelineGroups(comm::Communicator& world, const Topology& topology);

}  // namespace balancenet::pipeline
