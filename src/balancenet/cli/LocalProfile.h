// LocalProfile: what the planner needs for a job that has not started (`balancenet plan`, --pipeline-stages
// auto): the model profiled once on this machine, each node's costs that profile times its slowdown, each
// node's cap, the emulated links; and the ranked placements as the two commands print them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "balancenet/models/ModelZoo.h"
#include "balancenet/pipeline/planner/Planner.h"

namespace balancenet::cli {

struct LocalJob {
  models::ModelOptions model;
  int nodes = 1;
  int64_t globalBatch = 0;
  int microBatches = 0;  // 0: each shape's default, 4 x its stages
  std::string schedule = "1f1b";
  std::string optimizer = "sgd";
  std::vector<double> slowdown;          // per node, at step 0; empty: every node at full speed
  std::vector<double> memoryLimitMb;     // per node; empty: no cap
  std::vector<double> netDelayMs;        // per node (--net-delay-ms); empty: none
  std::vector<double> netBandwidthMbps;  // per node (--net-bandwidth-mbps, 0: unlimited); empty: unlimited
};

// Profiles job.model on a micro-batch of ceil(B / (N x 4)) random images (the size of a micro-batch of a
// pure pipeline's default M: costs are per sample, so one size serves every shape), on this process's threads.
pipeline::PlanInput profileLocally(const LocalJob& job);

// One line per placement: "1. 2 stages x 2 replicas, partition ..., slots ...: 12.3 ms/step, 5200 samples/s".
std::string rankedPlacementLines(const std::vector<pipeline::Placement>& ranked, int64_t globalBatch, size_t top);

}  // namespace balancenet::cli
