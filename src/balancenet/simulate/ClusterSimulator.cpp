// ClusterSimulator: the synchronous step loop (compute, all-reduce, rebalance) around the real policies.
#include "balancenet/simulate/ClusterSimulator.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/PortableRandom.h"
#include "balancenet/core/Stopwatch.h"
#include "balancenet/orchestrator/NodeReport.h"
#include "balancenet/orchestrator/ProbePeers.h"

namespace balancenet::simulate {
namespace {

constexpr double kBaseResidentBytes = 1e9;
constexpr double kResidentBytesPerSample = 4e6;
constexpr double kNodeMemoryBytes = 64e9;
// Pair latencies spread around the network's: a deterministic log-normal jitter per pair (sigma 0.2),
// so that BNO's NCW terms see a spread, as on a real switch.
constexpr double kLatencyJitter = 0.2;

// Round-trip latency of the pair (i, j), the same from both ends, from a hash (no state, O(1) per pair).
double pairLatencyMs(const NetworkModel& network, int i, int j, uint64_t seed) {
  const uint64_t a = static_cast<uint64_t>(std::min(i, j)), b = static_cast<uint64_t>(std::max(i, j));
  const uint64_t h1 = splitmix64(seed ^ splitmix64((a << 32) | b)), h2 = splitmix64(h1);
  const double u1 = 1.0 - static_cast<double>(h1 >> 11) * 0x1.0p-53, u2 = static_cast<double>(h2 >> 11) * 0x1.0p-53;
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  return 2 * network.latencyMs * std::exp(kLatencyJitter * z);
}

// What each node's monitor would report: latencies (all pairs or to its probe peers; fixed, so computed
// once), memory (updated at each decision: it follows the batch), the GEMM prior.
std::vector<orchestrator::NodeSample> nodeSamples(const SimulationOptions& o, const ClusterLaw& law) {
  std::vector<orchestrator::NodeSample> samples(o.nodes);
  for (int i = 0; i < o.nodes; ++i) {
    auto& s = samples[i];
    s.memoryTotalBytes = kNodeMemoryBytes;
    s.bandwidthBytesPerSecond = o.network.bytesPerMs * 1000;
    s.gemmFlops = 1e12 * law.speeds()[i];
    if (o.probePeers > 0) {
      s.latencyPeers = orchestrator::probePeers(i, o.nodes, o.probePeers, o.seed);
      for (int p : s.latencyPeers) s.latencyMs.push_back(pairLatencyMs(o.network, i, p, o.seed));
    } else {
      s.latencyMs.resize(o.nodes);
      for (int j = 0; j < o.nodes; ++j) s.latencyMs[j] = j == i ? 0.0 : pairLatencyMs(o.network, i, j, o.seed);
    }
  }
  return samples;
}

void validate(const SimulationOptions& o) {
  if (o.nodes < 1) throw UsageError("--nodes must be >= 1");
  if (o.globalBatch < o.nodes)
    throw UsageError(
        fmt::format("--global-batch {} is smaller than --nodes {}: every node needs a sample", o.globalBatch, o.nodes));
  if (o.steps < 1) throw UsageError("--steps must be >= 1");
  if (o.rebalanceEvery < 1) throw UsageError("--rebalance-every must be >= 1");
  if (o.probePeers < 0) throw UsageError("--probe-peers must be >= 0 (0: all pairs)");
  if (!(o.gradientBytes >= 0)) throw UsageError("--gradient-bytes must be >= 0");
  if (o.law.fixedMs < 0 || !(o.law.perSampleMs > 0))
    throw UsageError("--step-law needs fixed >= 0 and per-sample > 0 ms");
}

}  // namespace

double idealComputeMs(const std::vector<double>& a, const std::vector<double>& c, double total) {
  double inverse = 0, weighted = 0, floor = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    inverse += 1 / c[i];
    weighted += a[i] / c[i];
    floor = std::max(floor, a[i] + c[i]);
  }
  return std::max(floor, (total + weighted) / inverse);
}

SimulationResult simulateCluster(orchestrator::Policy& policy, const SimulationOptions& o) {
  validate(o);
  const int n = o.nodes;
  auto speedGen = seededGenerator(o.seed, 0x5eed);
  std::vector<double> speeds(n);
  for (double& s : speeds) {
    s = o.speeds.draw(speedGen);
    if (!(s > 0) || !std::isfinite(s)) throw UsageError("--speeds drew a speed <= 0: choose a positive law");
  }
  ClusterLaw law(std::move(speeds), o.law, o.seed);
  std::vector<orchestrator::NodeSample> nodeSample = nodeSamples(o, law);

  SimulationResult r;
  r.policy = policy.name();
  r.nodes = n;
  r.reportBytesPerNode = 8 * orchestrator::reportRowLength(o.rebalanceEvery, n, o.probePeers);
  r.rebalanceCommMs =
      o.network.allgatherMs(n, static_cast<double>(r.reportBytesPerNode)) + o.network.broadcastMs(n, 8.0 * n);
  Split split = Split::equal(o.globalBatch, n);
  std::vector<std::vector<metrics::StepRecord>> windows(n);
  const int window = orchestrator::reportWindow(o.rebalanceEvery);
  int period = o.rebalanceEvery;
  double totalMs = 0, idealMs = 0, samples = 0, decideMs = 0, stepMsSum = 0;
  std::vector<double> t(n), a(n), c(n);

  for (int64_t step = 0; step < o.steps; ++step) {
    law.advance(step);
    double overheadMs = 0;
    if (step > 0 && step % period == 0) {  // the Orchestrator's splitFor at a decision step
      for (int i = 0; i < n; ++i)
        nodeSample[i].residentBytes =
            kBaseResidentBytes + kResidentBytesPerSample * static_cast<double>(split.batches[i]);
      orchestrator::PolicyInput input;
      input.step = step;
      input.globalBatch = o.globalBatch;
      input.current = split;
      for (int i = 0; i < n; ++i)
        input.nodes.push_back(
            orchestrator::summariseWindow(i, split.batches[i], windows[i], nodeSample[i], o.flopsPerSample, 0));
      Stopwatch watch;
      const orchestrator::Decision decision = orchestrator::decideOnMaster(policy, input);
      const double ms = watch.elapsedMs();
      decideMs += ms;
      r.maxDecideMs = std::max(r.maxDecideMs, ms);
      ++r.decisions;
      split = decision.split;
      r.sumsExact = r.sumsExact && split.total() == o.globalBatch;
      for (auto& w : windows) w.clear();
      overheadMs = r.rebalanceCommMs + ms;
      period =
          orchestrator::widenedPeriod(period, overheadMs, stepMsSum / static_cast<double>(step), o.rebalanceBudget);
    }
    double slowest = 0;
    for (int i = 0; i < n; ++i) {
      t[i] = law.stepMs(i, split.batches[i]);
      slowest = std::max(slowest, t[i]);
      a[i] = law.expectedFixedMs(i);
      c[i] = law.expectedPerSampleMs(i);
    }
    const double allreduce = o.network.allreduceMs(n, o.gradientBytes);
    const double stepMs = slowest + allreduce + overheadMs;
    if (step > 0) {  // the Orchestrator ignores step 0 (one-time allocations)
      for (int i = 0; i < n; ++i) {
        auto& w = windows[i];
        metrics::StepRecord rec;
        rec.step = step;
        rec.rank = i;
        rec.batch = split.batches[i];
        rec.computeMs = t[i];
        rec.syncMs = slowest - t[i] + allreduce;
        w.push_back(rec);
        if (static_cast<int>(w.size()) > window) w.erase(w.begin());
      }
    }
    const double total = static_cast<double>(split.total());
    totalMs += stepMs;
    stepMsSum += stepMs;
    idealMs += idealComputeMs(a, c, total) + allreduce;
    samples += total;
  }

  r.samplesPerSecond = samples / totalMs * 1000;
  r.idealSamplesPerSecond = samples / idealMs * 1000;
  r.efficiency = r.samplesPerSecond / r.idealSamplesPerSecond;
  r.meanStepMs = totalMs / static_cast<double>(o.steps);
  r.meanDecideMs = r.decisions > 0 ? decideMs / r.decisions : 0;
  r.finalRebalanceEvery = period;
  r.finalTotal = split.total();
  r.equalShare = static_cast<double>(o.globalBatch) / n;
  std::vector<int> bySpeed(n);
  std::iota(bySpeed.begin(), bySpeed.end(), 0);
  std::sort(bySpeed.begin(), bySpeed.end(), [&](int x, int y) { return law.speeds()[x] < law.speeds()[y]; });
  const int tail = std::max(1, n / 100);
  double tailSum = 0;
  for (int k = 0; k < tail; ++k) tailSum += static_cast<double>(split.batches[bySpeed[k]]);
  r.slowestPercentBatch = tailSum / tail;
  r.minBatch = *std::min_element(split.batches.begin(), split.batches.end());
  r.maxBatch = *std::max_element(split.batches.begin(), split.batches.end());
  return r;
}

}  // namespace balancenet::simulate
