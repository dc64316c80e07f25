// BlockProfiler: a short profiling pass on this node's own CPU before training: each block's forward and
// backward time per sample, and the links' bandwidth, gathered into the PlanInput every rank plans from.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include <ATen/core/Tensor.h>

#include "balancenet/comm/group/Collectives.h"
#include "balancenet/models/Network.h"
#include "balancenet/pipeline/planner/PlanInput.h"

namespace balancenet::pipeline {

// Times every block of `net` on `inputs` (a micro-batch of the model's input, its size the micro-batch
// size the plan is for): one warm-up, then `repeats` timed forwards and backwards per block, the median,
// divided by the batch size. Leaves the network's parameters, buffers and gradients as they were
// (BatchNorm running statistics included), so training after profiling is what it would have been.
struct BlockTimes {
  std::vector<double> forwardMs;   // per sample, per block
  std::vector<double> backwardMs;  // per sample, per block
};
BlockTimes profileBlocks(models::Network& net, const at::Tensor& inputs, int repeats = 3);

// Collective over `world`: every rank's times, each multiplied by its emulated slowdown at step 0, with its
// memory cap, as NodeCosts by rank (the same on every rank).
std::vector<NodeCosts> gatherNodeCosts(comm::Collectives& world, const BlockTimes& mine, double slowdown,
                                       double memoryLimitBytes);

// Collective over `world`: each ordered pair's bandwidth, timed by sending `bytes` (and the latency by a
// one-element ping), in turns so that one pair's transfer does not share the wire with another's. With
// the emulated links installed on `world`, they are what is measured.
LinkCosts measureLinks(comm::Collectives& world, int64_t bytes = 1 << 20);

}  // namespace balancenet::pipeline
