// MemoryEstimate: what a placement would cost a node in memory, checked against --memory-limit-mb.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "balancenet/models/Blocks.h"
#include "balancenet/pipeline/Partition.h"

namespace balancenet::pipeline {

// Bytes of state per parameter: the parameter, its gradient and the optimiser's slots (float32).
// sgd: 1 slot (momentum buffer), adam/adamw: 2 (first and second moments).
int64_t stateBytesPerParameter(const std::string& optimizer);

struct StageMemory {
  int64_t stateBytes = 0;       // parameters x stateBytesPerParameter
  int64_t activationBytes = 0;  // sum of the blocks' memoryPerSampleBytes x micro-batch size x in flight
  int64_t total() const { return stateBytes + activationBytes; }
};

// The estimate for one node running blocks `range` with `microBatch` samples per micro-batch and
// `inFlight` micro-batches held at once (peakInFlight of its schedule; data parallelism: the whole
// model, its whole share, 1).
StageMemory estimateStageMemory(const std::vector<models::BlockInfo>& blocks, StageRange range, int64_t microBatch,
                                int inFlight, const std::string& optimizer);

// Throws UsageError when `need` exceeds `limitMb` (0: no limit), in one line naming the node, what it
// would hold ("stage 1, blocks 5-9" or "the whole model"), the estimate and the limit, and, when
// `hint` is not empty, appending it (e.g. "try --pipeline-stages 4").
void requireFits(const StageMemory& need, double limitMb, int node, const std::string& what, const std::string& hint);

}  // namespace balancenet::pipeline
