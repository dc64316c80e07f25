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

// The nodes' speeds, drawn once from --speeds, and the law of their step times.
ClusterLaw drawClusterLaw(const SimulationOptions& o) {
  auto speedGen = seededGenerator(o.seed, 0x5eed);
  std::vector<double> speeds(o.nodes);
  for (double& s : speeds) {
    s = o.speeds.draw(speedGen);
    if (!(s > 0) || !std::isfinite(s)) throw UsageError("--speeds drew a speed <= 0: choose a positive law");
  }
  return ClusterLaw(std::move(speeds), o.law, o.seed);
}

// What the step loop carries from one step to the next.
struct LoopState {
  explicit LoopState(const SimulationOptions& o)
      : split(Split::equal(o.globalBatch, o.nodes)),
        windows(o.nodes),
        window(orchestrator::reportWindow(o.rebalanceEvery)),
        period(o.rebalanceEvery),
        t(o.nodes),
        a(o.nodes),
        c(o.nodes) {}

  Split split;
  std::vector<std::vector<metrics::StepRecord>> windows;  // per node: the steps its next report carries
  int window;                                             // the most steps a report carries
  int period;                                             // steps between decisions
  double totalMs = 0, idealMs = 0, samples = 0, decideMs = 0, stepMsSum = 0;
  std::vector<double> t, a, c;  // per node, this step: compute ms, and the expected law's a + c b
};

// What the policy sees at a decision step: every node's report of its window, its memory following its batch.
orchestrator::PolicyInput policyInput(const SimulationOptions& o, int64_t step, const LoopState& loop,
                                      std::vector<orchestrator::NodeSample>& nodeSample) {
  const int n = o.nodes;
  for (int i = 0; i < n; ++i)
    nodeSample[i].residentBytes =
        kBaseResidentBytes + kResidentBytesPerSample * static_cast<double>(loop.split.batches[i]);
  orchestrator::PolicyInput input;
  input.step = step;
  input.globalBatch = o.globalBatch;
  input.current = loop.split;
  for (int i = 0; i < n; ++i)
    input.nodes.push_back(
        orchestrator::summarizeWindow(i, loop.split.batches[i], loop.windows[i], nodeSample[i], o.flopsPerSample, 0));
  return input;
}

// The Orchestrator's splitFor at a decision step: the policy decides, the period widens for the rebalance's
// cost. Returns that cost (the comm and the decision's ms), the step's overhead.
double rebalance(orchestrator::Policy& policy, const SimulationOptions& o, int64_t step,
                 std::vector<orchestrator::NodeSample>& nodeSample, LoopState& loop, SimulationResult& r) {
  orchestrator::PolicyInput input = policyInput(o, step, loop, nodeSample);
  Stopwatch watch;
  const orchestrator::Decision decision = orchestrator::decideOnMaster(policy, input);
  const double ms = watch.elapsedMs();
  loop.decideMs += ms;
  r.maxDecideMs = std::max(r.maxDecideMs, ms);
  ++r.decisions;
  loop.split = decision.split;
  r.sumsExact = r.sumsExact && loop.split.total() == o.globalBatch;
  for (auto& w : loop.windows) w.clear();
  const double overheadMs = r.rebalanceCommMs + ms;
  loop.period = orchestrator::widenedPeriod(loop.period, overheadMs, loop.stepMsSum / static_cast<double>(step),
                                            o.rebalanceBudget);
  return overheadMs;
}

// Every node's compute at its batch this step (noise and stragglers drawn) and its expected law; returns the
// slowest node's.
double computeStep(ClusterLaw& law, LoopState& loop) {
  double slowest = 0;
  for (int i = 0; i < law.size(); ++i) {
    loop.t[i] = law.stepMs(i, loop.split.batches[i]);
    slowest = std::max(slowest, loop.t[i]);
    loop.a[i] = law.expectedFixedMs(i);
    loop.c[i] = law.expectedPerSampleMs(i);
  }
  return slowest;
}

// Every node's record of the step into its report window (the latest `loop.window` steps).
void recordWindows(int64_t step, double slowest, double allreduce, LoopState& loop) {
  for (int i = 0; i < static_cast<int>(loop.windows.size()); ++i) {
    auto& w = loop.windows[i];
    metrics::StepRecord rec;
    rec.step = step;
    rec.rank = i;
    rec.batch = loop.split.batches[i];
    rec.computeMs = loop.t[i];
    rec.syncMs = slowest - loop.t[i] + allreduce;
    w.push_back(rec);
    if (static_cast<int>(w.size()) > loop.window) w.erase(w.begin());
  }
}

// The final split's mean batch over the slowest 1% of nodes (at least one).
double slowestPercentBatch(const ClusterLaw& law, const Split& split) {
  const int n = law.size();
  std::vector<int> bySpeed(n);
  std::iota(bySpeed.begin(), bySpeed.end(), 0);
  std::sort(bySpeed.begin(), bySpeed.end(), [&](int x, int y) { return law.speeds()[x] < law.speeds()[y]; });
  const int tail = std::max(1, n / 100);
  double tailSum = 0;
  for (int k = 0; k < tail; ++k) tailSum += static_cast<double>(split.batches[bySpeed[k]]);
  return tailSum / tail;
}

// The run's rates and the final split's shape, into `r`.
void summarise(const SimulationOptions& o, const ClusterLaw& law, const LoopState& loop, SimulationResult& r) {
  r.samplesPerSecond = loop.samples / loop.totalMs * 1000;
  r.idealSamplesPerSecond = loop.samples / loop.idealMs * 1000;
  r.efficiency = r.samplesPerSecond / r.idealSamplesPerSecond;
  r.meanStepMs = loop.totalMs / static_cast<double>(o.steps);
  r.meanDecideMs = r.decisions > 0 ? loop.decideMs / r.decisions : 0;
  r.finalRebalanceEvery = loop.period;
  r.finalTotal = loop.split.total();
  r.equalShare = static_cast<double>(o.globalBatch) / o.nodes;
  r.slowestPercentBatch = slowestPercentBatch(law, loop.split);
  r.minBatch = *std::min_element(loop.split.batches.begin(), loop.split.batches.end());
  r.maxBatch = *std::max_element(loop.split.batches.begin(), loop.split.batches.end());
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
  ClusterLaw law = drawClusterLaw(o);
  std::vector<orchestrator::NodeSample> nodeSample = nodeSamples(o, law);

  SimulationResult r;
  r.policy = policy.name();
  r.nodes = n;
  r.reportBytesPerNode = 8 * orchestrator::reportRowLength(o.rebalanceEvery, n, o.probePeers);
  r.rebalanceCommMs =
      o.network.allgatherMs(n, static_cast<double>(r.reportBytesPerNode)) + o.network.broadcastMs(n, 8.0 * n);
  LoopState loop(o);

  for (int64_t step = 0; step < o.steps; ++step) {
    law.advance(step);
    double overheadMs = 0;
    if (step > 0 && step % loop.period == 0) overheadMs = rebalance(policy, o, step, nodeSample, loop, r);
    const double slowest = computeStep(law, loop);
    const double allreduce = o.network.allreduceMs(n, o.gradientBytes);
    const double stepMs = slowest + allreduce + overheadMs;
    // The Orchestrator ignores step 0 (one-time allocations).
    if (step > 0) recordWindows(step, slowest, allreduce, loop);
    const double total = static_cast<double>(loop.split.total());
    loop.totalMs += stepMs;
    loop.stepMsSum += stepMs;
    loop.idealMs += idealComputeMs(loop.a, loop.c, total) + allreduce;
    loop.samples += total;
  }

  summarise(o, law, loop, r);
  return r;
}

}  // namespace balancenet::simulate
