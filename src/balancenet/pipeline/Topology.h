// Topology: which stage of the pipeline and which replica of that stage each rank is.
#pragma once
#include <vector>

namespace balancenet::pipeline {

// N = stages x replicas ranks, each in one slot:
//   slot = replica * stages + stage.
// By default a rank's slot is its rank, so a pipeline ("column") is `stages` consecutive ranks and, on a
// host of several workers, the activations of a micro-batch stay on that host. A planned placement
// (pipeline/planner/Planner.h) may put ranks in any slots: a slow node on a light stage.
// Replica j of every stage processes the samples given to column j; the replicas of one stage
// all-reduce their gradients as data parallelism does.
struct Topology {
  int stages = 1;
  int replicas = 1;
  std::vector<int> slotRanks;  // slot -> rank, a permutation of 0..N-1; empty: the identity

  // Throws UsageError unless stages >= 1 divides worldSize.
  static Topology of(int worldSize, int stages);
  // The same with ranks placed in slots as `slotRanks` says; throws InternalError unless it is a
  // permutation of the world's ranks.
  static Topology placed(int worldSize, int stages, std::vector<int> slotRanks);

  int worldSize() const { return stages * replicas; }
  int slotOf(int rank) const;
  int rankAt(int slot) const { return slotRanks.empty() ? slot : slotRanks.at(slot); }
  int stageOf(int rank) const { return slotOf(rank) % stages; }
  int replicaOf(int rank) const { return slotOf(rank) / stages; }
  int rankOf(int stage, int replica) const { return rankAt(replica * stages + stage); }
  // The ranks of stage s by replica (its replica group), and of column j by stage (its pipeline): a
  // group's rank is the index in that list.
  std::vector<int> stageRanks(int stage) const;
  std::vector<int> columnRanks(int replica) const;
};

}  // namespace balancenet::pipeline
