// ClusterSimulator: a data-parallel cluster of N simulated nodes, step by step, whose splits come from the
// real Policy objects through the Orchestrator's own report and decision functions (orchestrator/NodeReport.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "balancenet/orchestrator/policies/Policy.h"
#include "balancenet/simulate/Distribution.h"
#include "balancenet/simulate/NetworkModel.h"
#include "balancenet/simulate/StepLaw.h"

namespace balancenet::simulate {

struct SimulationOptions {
  int nodes = 8;
  int64_t globalBatch = 256;
  int64_t steps = 100;
  int rebalanceEvery = 5;
  // --rebalance-budget: the period widens (orchestrator::widenedPeriod) while a rebalance (gather, decision,
  // broadcast) costs more than this share of the steps between two rebalances; 0: a fixed period.
  double rebalanceBudget = 0;
  int probePeers = 8;                                       // 0: all pairs (N^2 latencies)
  double gradientBytes = 4.0e6;                             // all-reduced every step
  Distribution speeds{Distribution::Kind::Constant, 1, 0};  // each node's speed factor, drawn once
  StepLawOptions law;
  NetworkModel network;
  double flopsPerSample = 1e8;  // for the ops/s the report derives (BNO's K_i)
  uint64_t seed = 1;
};

struct SimulationResult {
  std::string policy;
  int nodes = 0;
  double samplesPerSecond = 0;
  double idealSamplesPerSecond = 0;  // every step at the continuous optimum of the expected law, no rebalance cost
  double efficiency = 0;             // samplesPerSecond / idealSamplesPerSecond
  double meanStepMs = 0;
  double slowestPercentBatch = 0;  // final split: mean batch of the slowest 1% of nodes (at least one)
  double equalShare = 0;           // B / N, for comparison
  int64_t minBatch = 0, maxBatch = 0;
  int64_t finalTotal = 0;                    // the final split's sum (BNO's exceeds B)
  bool sumsExact = true;                     // every decided split summed to B (policies that keep B)
  double meanDecideMs = 0, maxDecideMs = 0;  // policy decision on rank 0, measured wall time on this machine
  int64_t reportBytesPerNode = 0;            // one rank's row in the metrics all-gather
  double rebalanceCommMs = 0;                // model: all-gather of all rows + broadcast of the split
  int finalRebalanceEvery = 0;
  int decisions = 0;
};

// Runs `options.steps` steps with `policy` deciding. Throws UsageError for options it cannot run.
SimulationResult simulateCluster(orchestrator::Policy& policy, const SimulationOptions& options);

// The continuous optimum of max_i (a_i + c_i b_i) over sum b_i = total, b_i >= 1: the time T with
// sum (T - a_i) / c_i = total, at least max_i (a_i + c_i).
double idealComputeMs(const std::vector<double>& a, const std::vector<double>& c, double total);

}  // namespace balancenet::simulate
