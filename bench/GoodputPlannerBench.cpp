// chooseGlobalBatch for 8 ... 4,096 nodes with --global-batch auto:N:64N (the budget: < 1 ms at 64 nodes
// and MAX 4,096, on rank 0's one core), balanced split and equal shares. Log-normal node speeds, memory caps.
// Run: build/bench/bench_goodput_planner --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <random>

#include "balancenet/adaptive/GoodputPlanner.h"

namespace {

using namespace balancenet::adaptive;

GoodputInput clusterInput(int n, bool equalShares) {
  std::mt19937 gen(static_cast<unsigned>(n));  // only the bench's inputs: portability does not matter here
  std::lognormal_distribution<double> speed(0, 0.5);
  GoodputInput in;
  for (int i = 0; i < n; ++i) in.nodes.push_back({3, 0.2 / speed(gen), 256});
  if (equalShares) in.shares.assign(n, 1.0);
  in.syncMs = 30;
  in.minBatch = n, in.maxBatch = 64 * int64_t{n};
  in.baseBatch = in.currentBatch = 2 * int64_t{n};
  in.noiseScale = 3000;
  return in;
}

void choose(benchmark::State& state, bool equalShares) {
  const GoodputInput in = clusterInput(static_cast<int>(state.range(0)), equalShares);
  for (auto _ : state) {
    GoodputChoice c = chooseGlobalBatch(in);
    benchmark::DoNotOptimize(c);
  }
  state.counters["nodes"] = static_cast<double>(state.range(0));
}

void balanced(benchmark::State& s) { choose(s, false); }
void equal_shares(benchmark::State& s) { choose(s, true); }

BENCHMARK(balanced)->RangeMultiplier(8)->Range(8, 4096)->Unit(benchmark::kMicrosecond);
BENCHMARK(equal_shares)->RangeMultiplier(8)->Range(8, 4096)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
