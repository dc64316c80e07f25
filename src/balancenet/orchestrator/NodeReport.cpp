// NodeReport: one rank's window summarised, and the master's decision over all ranks' summaries.
#include "balancenet/orchestrator/NodeReport.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "balancenet/memory/PassFit.h"

namespace balancenet::orchestrator {
namespace {

// Share of the node's available memory a worker may grow into: the rest is headroom for everything else.
constexpr double kUsableMemoryShare = 0.8;

}  // namespace

int reportWindow(int rebalanceEvery) { return std::min(kMaxReportWindow, std::max(1, rebalanceEvery)); }

int64_t reportRowLength(int rebalanceEvery, int worldSize, int probePeers) {
  const int64_t latencies = probePeers > 0 ? 2 * int64_t{probePeers} : int64_t{worldSize};
  return kReportHeaderDoubles + 2 * int64_t{reportWindow(rebalanceEvery)} + latencies;
}

int widenedPeriod(int period, double rebalanceMs, double stepMs, double maxShare) {
  while (maxShare > 0 && period < kMaxRebalanceEvery && rebalanceMs > maxShare * period * stepMs)
    period = std::min(kMaxRebalanceEvery, 2 * period);
  return period;
}

NodeMetrics summarizeWindow(int rank, int64_t batchInForce, const std::vector<metrics::StepRecord>& window,
                            const NodeSample& sample, double flopsPerSample, double memoryPerSampleBytes) {
  double compute = 0, own = 0, sync = 0, samples = 0, serving = 0, served = 0;
  for (const auto& r : window) {
    compute += r.computeMs;
    own += r.ownMs;
    sync += r.syncMs;
    samples += static_cast<double>(r.timedSamples());  // a left-out rank's probe is its speed
    serving += r.servingMs;
    served += static_cast<double>(r.clientsServed);
  }
  const double n = static_cast<double>(std::max<size_t>(1, window.size()));
  NodeMetrics m;
  m.rank = rank;
  m.batch = batchInForce;
  m.computeMs = compute / n;
  m.ownMs = own / n;
  m.servingMs = serving / n;
  m.clientsServed = served / n;
  m.waitMs = sync / n;  // the sync time for now; decideOnMaster derives the wait once all ranks are known
  m.flopsPerSample = flopsPerSample;
  m.opsPerSecond = compute > 0 ? 3 * flopsPerSample * samples / (compute / 1000) : sample.gemmFlops;
  m.memoryUsedBytes = sample.residentBytes;
  m.memoryTotalBytes = sample.memoryTotalBytes;
  m.bandwidthBytesPerSecond = sample.bandwidthBytesPerSecond;
  if (memoryPerSampleBytes > 0 && sample.memoryAvailableBytes > 0 && sample.shareCap != memory::kUnlimited)
    m.maxBatch =
        batchInForce +
        static_cast<int64_t>(std::floor(kUsableMemoryShare * sample.memoryAvailableBytes / memoryPerSampleBytes));
  if (sample.shareCap > 0 && sample.shareCap != memory::kUnlimited)
    m.maxBatch = m.maxBatch > 0 ? std::min(m.maxBatch, sample.shareCap) : sample.shareCap;
  for (const auto& r : window) m.recent.emplace_back(r.timedSamples(), r.computeMs);
  m.latencyMs = sample.latencyMs;
  m.latencyPeers = sample.latencyPeers;
  return m;
}

double leastSyncMs(const PolicyInput& input) {
  if (input.nodes.empty()) return 0;
  double least = std::numeric_limits<double>::infinity();
  for (const auto& n : input.nodes) least = std::min(least, n.waitMs);
  return least;
}

Decision decideOnMaster(Policy& policy, PolicyInput& input) {
  // Waiting = time in the sync beyond the fastest-to-finish rank's (the last to arrive waits for nobody).
  const double leastSync = leastSyncMs(input);
  for (auto& n : input.nodes) n.waitMs -= leastSync;
  Decision decision = policy.decide(input);
  decision.split.validate(input.current.worldSize(), decision.split.total());
  return decision;
}

}  // namespace balancenet::orchestrator
