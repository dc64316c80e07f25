// Topology: which stage of the pipeline and which replica of that stage each rank is.
#pragma once
#include <vector>

namespace balancenet::pipeline {

// N = stages x replicas ranks. A pipeline ("column") is `stages` consecutive ranks, so on a host of
// several workers the activations of a micro-batch stay on that host:
//   rank = replica * stages + stage.
// Replica j of every stage processes the samples given to column j; the replicas of one stage
// all-reduce their gradients as data parallelism does.
struct Topology {
  int stages = 1;
  int replicas = 1;

  // Throws UsageError unless stages >= 1 divides worldSize.
  static Topology of(int worldSize, int stages);

  int worldSize() const { return stages * replicas; }
  int stageOf(int rank) const { return rank % stages; }
  int replicaOf(int rank) const { return rank / stages; }
  int rankOf(int stage, int replica) const { return replica * stages + stage; }
  // The ranks of stage s, ascending (its replica group), and of column j (its pipeline).
  std::vector<int> stageRanks(int stage) const;
  std::vector<int> columnRanks(int replica) const;
};

}  // namespace balancenet::pipeline
