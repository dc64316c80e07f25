// NodeReport: the two halves of a rebalance that do not depend on how rows travel: what one rank reports
// (its window of steps summarised) and what the master does with all reports. The Orchestrator moves the
// reports over a Communicator; the simulator (simulate/) calls the same functions for thousands of
// simulated nodes, so both run one decision logic.
#pragma once
#include <cstdint>
#include <vector>

#include "balancenet/core/Split.h"
#include "balancenet/metrics/StepRecord.h"
#include "balancenet/orchestrator/policies/Policy.h"

namespace balancenet::orchestrator {

constexpr int kDefaultRebalanceEvery = 5;

// Node-level measurements beyond step timings, sampled elsewhere (the NodeMonitor's thread).
struct NodeSample {
  double residentBytes = 0;
  double memoryTotalBytes = 0;
  double memoryAvailableBytes = 0;  // 0: unknown (no memory cap)
  std::vector<double> latencyMs;    // to each rank (all pairs), or to latencyPeers[k]; empty: not measured yet
  double bandwidthBytesPerSecond = 0;
  double gemmFlops = 0;           // prior for ops/s before any step is timed
  std::vector<int> latencyPeers;  // the ranks latencyMs[k] refers to with --probe-peers; empty: all pairs
  // The largest share the worker's memory holds in its micro-steps (memory/PassFit). 0: not known, the available
  // memory caps it; memory::kUnlimited: no cap (--accumulate auto takes any share, in more micro-steps).
  int64_t shareCap = 0;
};

// Steps a report carries (the window): one rebalance period, at most kMaxReportWindow.
constexpr int kMaxReportWindow = 64;
// The fixed fields a report row opens with (Orchestrator::encode's header), before its window and latencies.
constexpr int kReportHeaderDoubles = 14;
int reportWindow(int rebalanceEvery);
// Doubles in one rank's report row on the wire: a fixed header, (batch, ms) x window, and the latencies:
// one per rank (probePeers 0: all pairs, O(N)) or (peer, ms) x probePeers (O(k)).
int64_t reportRowLength(int rebalanceEvery, int worldSize, int probePeers);

// The period after a rebalance that cost `rebalanceMs` with steps of `stepMs` (--rebalance-budget): doubled,
// up to kMaxRebalanceEvery, while the rebalance costs more than `maxShare` of the period's steps; unchanged
// when maxShare <= 0. At 4,096 ranks the all-gather of the reports alone is ~4,095 message latencies
// (20 ms at 5 us), far from negligible against a step of tens of ms every 5 steps (docs/scaling.md).
constexpr int kMaxRebalanceEvery = 640;
int widenedPeriod(int period, double rebalanceMs, double stepMs, double maxShare);

// One rank's report: the window's mean compute and sync times, measured ops/s (or the GEMM prior), the
// memory cap (the batch in force plus what 80% of the available memory holds, or the sample's shareCap), the
// latest latencies.
NodeMetrics summarizeWindow(int rank, int64_t batchInForce, const std::vector<metrics::StepRecord>& window,
                            const NodeSample& sample, double flopsPerSample, double memoryPerSampleBytes);

// The least of the nodes' mean sync times (0 without nodes): the slowest node waits least, so this is the
// communication every step pays. Read before decideOnMaster, which subtracts it.
double leastSyncMs(const PolicyInput& input);

// The master's half: turns the nodes' sync times into waiting (beyond the rank that waited least; in
// place, so the caller logs what the policy saw), runs the policy and checks the split it returns
// (InternalError for a policy bug). input.nodes indexed by rank.
Decision decideOnMaster(Policy& policy, PolicyInput& input);

}  // namespace balancenet::orchestrator
