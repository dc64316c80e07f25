// Time to plan: pure pipelines (--pipeline-stages N) and every shape (--pipeline-stages auto) for N nodes
// and K blocks, on seeded synthetic costs with heterogeneous node speeds (1x to 4x) and links.
// Run: build/bench/bench_planner --benchmark_min_time=0.01   (arguments: nodes, blocks, 1 = auto)
#include <benchmark/benchmark.h>

#include <cstdio>
#include <random>

#include "balancenet/pipeline/planner/Planner.h"

namespace {

using namespace balancenet::pipeline;

PlanInput syntheticInput(int nodes, int blocks) {
  std::mt19937 rng(nodes * 1000 + blocks);
  std::uniform_real_distribution<double> ms(0.05, 2.0), speed(1.0, 4.0), rate(1e5, 1e6);
  std::uniform_int_distribution<int64_t> size(1000, 200000);
  PlanInput in;
  for (int b = 0; b < blocks; ++b) {
    balancenet::models::BlockInfo block;
    block.name = "block" + std::to_string(b);
    block.parameters = size(rng);
    block.outputElementsPerSample = size(rng);
    block.memoryPerSampleBytes = size(rng);
    in.blocks.push_back(block);
  }
  std::vector<double> base(blocks);
  for (auto& b : base) b = ms(rng);
  for (int n = 0; n < nodes; ++n) {
    const double slow = speed(rng);
    NodeCosts costs;
    for (int b = 0; b < blocks; ++b) {
      costs.forwardMs.push_back(slow * base[b] / 3);
      costs.backwardMs.push_back(slow * base[b] * 2 / 3);
    }
    in.nodes.push_back(costs);
  }
  in.links.bytesPerMs.assign(nodes, std::vector<double>(nodes, 0));
  for (auto& row : in.links.bytesPerMs)
    for (auto& r : row) r = rate(rng);
  in.links.latencyMs = 0.1;
  in.globalBatch = 4 * nodes * 8;
  return in;
}

void planTime(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0)), blocks = static_cast<int>(state.range(1));
  const bool automatic = state.range(2) != 0;
  const auto input = syntheticInput(nodes, blocks);
  Placement best;  // used by the label, so the calls cannot be optimised away
  for (auto _ : state) {
    best = planPlacement(input, PlanRequest{automatic ? 0 : nodes, {}});
  }
  // The predicted step too: what a smaller work budget costs in plan quality. (DoNotOptimize(best.stepMs), in
  // a register constraint, left garbage in the double with this compiler.)
  char step[32];
  std::snprintf(step, sizeof step, ", step %.6g ms", best.stepMs);
  state.SetLabel(best.method + ", " + std::to_string(best.stages) + " stages" + step);
}

void planCases(benchmark::internal::Benchmark* b) {
  for (int automatic : {0, 1})
    for (int nodes : {4, 8, 16, 64})
      for (int blocks : {15, 50, 200})
        if (blocks >= nodes || automatic) b->Args({nodes, blocks, automatic});
}

BENCHMARK(planTime)->Apply(planCases)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
