// PlanInput: what the stage planner decides from. Everything here is measured (or, in `balancenet plan`,
// measured on this machine and scaled by each node's emulated speed): no layer is assumed to cost the same
// on every node.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "balancenet/models/Blocks.h"
#include "balancenet/pipeline/Schedule.h"

namespace balancenet::pipeline {

// One node's cost of each block, per sample, at the micro-batch size it was profiled with (its emulated
// slowdown included), and its memory cap.
struct NodeCosts {
  std::vector<double> forwardMs;   // per block
  std::vector<double> backwardMs;  // per block
  double memoryLimitBytes = 0;     // 0: no cap
  double blockMs(size_t block) const { return forwardMs.at(block) + backwardMs.at(block); }
};

// The links between nodes. A transfer of n bytes from a to b costs latencyMs + n / bytesPerMs[a][b].
struct LinkCosts {
  std::vector<std::vector<double>> bytesPerMs;  // [from][to]; empty: every link free (one machine, no emulation)
  double latencyMs = 0;
  double transferMs(int from, int to, double bytes) const;
};

struct PlanInput {
  std::vector<models::BlockInfo> blocks;  // the model's blocks, in order (activation and memory sizes)
  std::vector<NodeCosts> nodes;           // by rank; each has one cost per block
  LinkCosts links;
  int64_t globalBatch = 0;
  // Micro-batches per pipeline per step; 0: the launcher's default for each shape, 4 x stages.
  int microBatches = 0;
  ScheduleKind schedule = ScheduleKind::OneFOneB;
  std::string optimizer = "sgd";  // for the parameters' state bytes (MemoryEstimate.h)
};

}  // namespace balancenet::pipeline
