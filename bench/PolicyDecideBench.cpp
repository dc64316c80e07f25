// Each policy's decide() for N = 8 ... 4,096 nodes, on rank 0's one core: the budget is < 1 ms at
// 4,096 with B = 65,536 (16 samples a node). Inputs as the Orchestrator builds them: a window of 5 steps
// per node at log-normal speeds, latencies to 8 probed peers (bno_all_pairs: to every rank, N^2 values).
// Run: build/bench/bench_policy_decide --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>

#include "balancenet/core/PortableRandom.h"
#include "balancenet/orchestrator/ProbePeers.h"
#include "balancenet/orchestrator/policies/PolicyRegistry.h"

namespace {

using namespace balancenet;
using namespace balancenet::orchestrator;

constexpr int64_t kGlobalBatch = 65536;
constexpr int kWindow = 5;
constexpr int kPeers = 8;

PolicyInput clusterInput(int n, bool allPairs) {
  auto gen = seededGenerator(1, static_cast<uint64_t>(n));
  std::normal_distribution<double> normal;  // only the bench's inputs: portability does not matter here
  PolicyInput in;
  in.step = 5;
  in.globalBatch = kGlobalBatch;
  in.current = Split::equal(kGlobalBatch, n);
  in.nodes.resize(n);
  for (int i = 0; i < n; ++i) {
    NodeMetrics& m = in.nodes[i];
    const double speed = std::exp(0.5 * normal(gen));
    m.rank = i;
    m.batch = in.current.batches[i];
    for (int s = 0; s < kWindow; ++s)
      m.recent.emplace_back(m.batch, (5 + 0.5 * static_cast<double>(m.batch)) / speed * std::exp(0.05 * normal(gen)));
    m.computeMs = m.recent.back().second;
    m.flopsPerSample = 1e8;
    m.opsPerSecond = 1e12 * speed;
    m.memoryUsedBytes = 1e9 + 4e6 * static_cast<double>(m.batch);
    if (allPairs) {
      m.latencyMs.resize(n);
      for (int j = 0; j < n; ++j) m.latencyMs[j] = j == i ? 0 : 0.01 * std::exp(0.2 * normal(gen));
    } else {
      m.latencyPeers = probePeers(i, n, kPeers);
      for (size_t p = 0; p < m.latencyPeers.size(); ++p) m.latencyMs.push_back(0.01 * std::exp(0.2 * normal(gen)));
    }
  }
  return in;
}

void decide(benchmark::State& state, const std::string& name, bool allPairs) {
  const int n = static_cast<int>(state.range(0));
  const PolicyInput input = clusterInput(n, allPairs);
  PolicyOptions options;
  options.name = name;
  auto policy = makePolicy(options);
  for (auto _ : state) {
    Decision d = policy->decide(input);
    benchmark::DoNotOptimize(d);
  }
  state.counters["nodes"] = n;
}

void equal(benchmark::State& s) { decide(s, "equal", false); }
void proportional(benchmark::State& s) { decide(s, "proportional", false); }
void balanced(benchmark::State& s) { decide(s, "balanced", false); }
void bno(benchmark::State& s) { decide(s, "bno", false); }
void bno_all_pairs(benchmark::State& s) { decide(s, "bno", true); }

BENCHMARK(equal)->RangeMultiplier(8)->Range(8, 4096)->Unit(benchmark::kMicrosecond);
BENCHMARK(proportional)->RangeMultiplier(8)->Range(8, 4096)->Unit(benchmark::kMicrosecond);
BENCHMARK(balanced)->RangeMultiplier(8)->Range(8, 4096)->Unit(benchmark::kMicrosecond);
BENCHMARK(bno)->RangeMultiplier(8)->Range(8, 4096)->Unit(benchmark::kMicrosecond);
BENCHMARK(bno_all_pairs)->RangeMultiplier(8)->Range(8, 4096)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
