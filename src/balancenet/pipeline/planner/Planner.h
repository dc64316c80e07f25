// Planner: where to cut the model and which node runs which stage, from measured per-node block costs.
// Pure functions of a PlanInput, unit-tested like the allocation policies.
//
// The cost model every function here shares (docs/pipeline.md, "Planning"):
//   column j (replica j) gets b_j samples, cut into m_j = min(M, b_j) micro-batches of u_j = b_j / m_j;
//   slot (s, j) runs on node n = slotRanks[j * S + s];
//   t_{s,j} = u_j * sum_{k in stage s} (forwardMs + backwardMs)[n][k]                      (compute)
//           + (s < S-1 ? 2 * links.transferMs(n, n', u_j * 4 * outputElementsPerSample[last block of s]) : 0)
//             (the activation forward and its gradient back, n' = the node of slot (s+1, j));
//   T_j = sum_s t_{s,j} + (m_j - 1) * max_s t_{s,j}    (a flushed gpipe/1f1b step: fill, steady state, drain);
//   sync = max over stages of a ring all-reduce of the stage's parameter bytes among its R replicas
//          (2 (R-1)/R bytes over the slowest link of the ring, plus 2 latencies; 0 when R = 1);
//   step = max_j T_j + sync.
// Data parallelism is the shape S = 1 of the same model: T_j = b_j * sum_k blockMs[n][k], sync over all N.
// Shares b_j (integers, >= 1, summing to B) are those minimising max_j T_j (the balanced policy's answer).
// Memory: every slot's estimateStageMemory (MemoryEstimate.h: u_j, peakInFlight of its schedule and stage)
// must fit its node's memoryLimitBytes.
#pragma once
#include <string>
#include <vector>

#include "balancenet/pipeline/Partition.h"
#include "balancenet/pipeline/Topology.h"
#include "balancenet/pipeline/planner/PlanInput.h"

namespace balancenet::pipeline {

// One placement and what the model predicts for it.
struct Placement {
  int stages = 1;
  int replicas = 1;
  int microBatches = 1;         // M, as planned (each column uses min(M, its share))
  Partition partition;          // one range per stage, the same for every replica
  std::vector<int> slotRanks;   // slot (replica * stages + stage) -> rank; a permutation
  std::vector<int64_t> shares;  // per replica (column): its samples of the global batch
  // Predictions (filled by predict(); every planner returns predicted placements).
  double stepMs = 0;                  // the step time above
  double syncMs = 0;                  // its all-reduce part
  std::vector<double> slotComputeMs;  // per slot: compute of all its micro-batches in one step (what a
                                      // worker's steps.csv compute_ms measures)
  std::vector<double> slotStageMs;    // per slot: t_{s,j}, one micro-batch's compute and transfer
  bool fits = true;                   // every slot within its node's memory cap
  std::string memoryNote;             // the first slot that does not fit, in words; empty when it fits
  std::string method;                 // "exact", "heuristic" (which search found it) or "given"

  Topology topology() const { return Topology::placed(stages * replicas, stages, slotRanks); }
  // "2 stages x 2 replicas, partition 0-6,7-14, slots 3,0,1,2": one line for logs and tables.
  std::string describe() const;
};

// Fills `given`'s predictions (stages, replicas, microBatches, partition and slotRanks set; empty shares:
// the balanced ones). Throws InternalError for a placement inconsistent with the input.
Placement predict(const PlanInput& input, Placement given);

struct PlanRequest {
  int stages = 0;  // 0: every S dividing the node count (S = 1 is data parallelism, S = N a pure pipeline)
  // Non-empty: ranks keep these slots (a live re-partition moves block boundaries, not processes).
  std::vector<int> fixedSlots;
};

// The placement with the least predicted step time that fits every node's memory, for each shape the
// request allows, best first; a shape with no placement that fits is left out. Exact (every slot
// assignment and every cut) where the search is small enough, a heuristic beyond (see PipelineSearch.cpp for
// the sizes and docs/pipeline.md for the measured planning times). Empty when nothing fits.
std::vector<Placement> rankPlacements(const PlanInput& input, const PlanRequest& request);
// rankPlacements(...).front(); throws UsageError naming the tightest node when no placement fits.
Placement planPlacement(const PlanInput& input, const PlanRequest& request);

// PipeDream-style baseline: cuts where the stages' forward FLOPs are as equal as possible (minimising the
// largest), as if every node were the same. Throws UsageError when there are fewer blocks than stages.
Partition equalFlopsPartition(const std::vector<models::BlockInfo>& blocks, int stages);

// The cost table (ms per sample of each block on each node), then the placement with each slot's
// predicted compute and stage time, as `--explain-partition` and `balancenet plan` print it.
std::string explainPlacement(const PlanInput& input, const Placement& placement);

}  // namespace balancenet::pipeline
