// EqualFlops: the PipeDream-style baseline, cuts that equalise the stages' forward FLOPs as if every node
// were the same.
#include <vector>

#include "balancenet/pipeline/planner/Planner.h"
#include "balancenet/pipeline/planner/RangeSearch.h"

namespace balancenet::pipeline {

Partition equalFlopsPartition(const std::vector<models::BlockInfo>& blocks, int stages) {
  Partition::uniform(blocks.size(), stages);  // the UsageError for fewer blocks than stages
  std::vector<double> prefix(blocks.size() + 1, 0);
  for (size_t b = 0; b < blocks.size(); ++b) prefix[b + 1] = prefix[b] + static_cast<double>(blocks[b].flopsPerSample);
  // With two micro-batches the objective is the total (the same for every cut) plus the largest stage:
  // the range search's exact answer is the least largest stage.
  planner::RangeProblem problem;
  problem.stages = stages;
  problem.blocks = blocks.size();
  problem.micros = 2;
  problem.stageMs = [&](int, size_t first, size_t end) { return prefix[end] - prefix[first]; };
  return planner::bestRanges(problem)->partition;
}

}  // namespace balancenet::pipeline
