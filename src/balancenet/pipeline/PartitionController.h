// PartitionController: what the pipeline trainer asks, after each step, about moving stage boundaries.
// The trainer knows no planner, only this (as it knows the split's policy only through Allocator).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "balancenet/pipeline/Partition.h"

namespace balancenet::pipeline {

// What every rank measured in one step, gathered to the controller (rank 0).
struct StepTimes {
  int64_t step = 0;
  std::vector<int64_t> shares;          // per column: the split in force
  std::vector<double> computeMsByRank;  // each rank's forwards and backwards (steps.csv compute_ms)
  double stepMs = 0;                    // the step's wall time on rank 0
};

class PartitionController {
 public:
  virtual ~PartitionController() = default;
  // Called on rank 0 after each step. A partition to move to at this flush, or nothing to keep the current
  // one. The trainer broadcasts the answer, so the decision need only be made here.
  virtual std::optional<Partition> afterStep(const StepTimes& times) = 0;
  // Rank 0, after the run: the decision log and predicted-vs-measured tables into the run directory.
  virtual void writeOutputs(const std::string& runDir) const = 0;
};

}  // namespace balancenet::pipeline
