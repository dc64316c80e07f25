// Overhead of the balancenet step (sampler, weighted loss, flat all-reduce over a 1-rank Gloo group,
// metrics) against the plainest libtorch loop on the same model, data and threads.
// Run: build/bench/bench_step_overhead --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <unistd.h>

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "balancenet/comm/FlatAllReduceSync.h"
#include "balancenet/comm/Rendezvous.h"
#include "balancenet/core/CpuStopwatch.h"
#include "balancenet/core/IntraOpThreads.h"
#include "balancenet/data/GlobalPermutationSampler.h"
#include "balancenet/metrics/CpuThrottleSampler.h"
#include "balancenet/models/ModelZoo.h"
#include "balancenet/orchestrator/StaticAllocator.h"
#include "balancenet/trainer/Trainer.h"
#include "testing/SyntheticData.h"

namespace {

using namespace balancenet;

constexpr int64_t kBatch = 128;

const testing::ImageSet& dataset() {
  static auto d = testing::syntheticDataset(4096, 1);
  return d;
}

trainer::TrainerOptions options() {
  trainer::TrainerOptions o;
  o.steps = 1 << 30;
  o.globalBatch = kBatch;
  o.lr.baseLr = 0.01;
  o.progressSeconds = 0;
  o.evalAtEnd = false;
  return o;
}

models::ModelOptions model(const std::string& name) {
  models::ModelOptions m;
  m.name = name;
  return m;
}

void rawLibtorch(benchmark::State& state, const std::string& name) {
  setIntraOpThreads(static_cast<int>(state.range(0)));
  at::manual_seed(1);
  auto built = models::buildModel(model(name));
  std::vector<at::Tensor> params;
  for (auto& p : built.net->parameters()) params.push_back(p);
  auto opt = trainer::makeOptimizer({}, params, 0.01);
  data::GlobalPermutationSampler sampler(dataset().size(), 1);
  int64_t position = 0;
  for (auto _ : state) {
    auto idx = sampler.indicesAt(position, kBatch);
    position += kBatch;
    opt->zero_grad();
    auto loss = at::cross_entropy_loss(built.net->forward(dataset().imagesAt(idx)), dataset().labelsAt(idx));
    loss.backward();
    opt->step();
    benchmark::DoNotOptimize(loss.item<float>());
  }
  state.counters["samples/s"] = benchmark::Counter(double(state.iterations()) * kBatch, benchmark::Counter::kIsRate);
}

void balancenetStep(benchmark::State& state, const std::string& name) {
  setIntraOpThreads(static_cast<int>(state.range(0)));
  auto comm = comm::joinGroup(c10::make_intrusive<c10d::HashStore>(), 0, 1, std::chrono::seconds(30));
  at::manual_seed(1);
  auto built = models::buildModel(model(name));
  orchestrator::StaticAllocator allocator(Split{{kBatch}});
  comm::FlatAllReduceSync sync(*comm);
  trainer::Trainer t(options(),
                     {*built.net, dataset(), nullptr, testing::syntheticObjective(), *comm, sync, allocator});
  for (auto _ : state) benchmark::DoNotOptimize(t.step().loss);
  state.counters["samples/s"] = benchmark::Counter(double(state.iterations()) * kBatch, benchmark::Counter::kIsRate);
}

// What issue 30 adds to every step: cpu.stat read at its start and end, the process CPU clock around the sync.
// Without a quota here it reads the root group's cpu.stat (the same kind of file, v1 or v2).
void quotaAccounting(benchmark::State& state) {
  auto sampler = metrics::CpuThrottleSampler();
  if (sampler.file().empty())
    for (const char* root :
         {"/sys/fs/cgroup/cpu/cpu.stat", "/sys/fs/cgroup/cpu,cpuacct/cpu.stat", "/sys/fs/cgroup/cpu.stat"})
      if (access(root, R_OK) == 0) {
        sampler = metrics::CpuThrottleSampler::ofFile(root);
        break;
      }
  state.SetLabel(sampler.file());
  metrics::StepRecord record;
  for (auto _ : state) {
    sampler.markStepStart();
    CpuStopwatch cpu;
    record.syncCpuMs = cpu.elapsedMs();
    sampler.stampStep(record);
    benchmark::DoNotOptimize(record);
  }
}

BENCHMARK(quotaAccounting)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(rawLibtorch, cnn, std::string("cnn"))->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->MinTime(3);
BENCHMARK_CAPTURE(balancenetStep, cnn, std::string("cnn"))->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->MinTime(3);
BENCHMARK_CAPTURE(rawLibtorch, mlp, std::string("mlp"))->Arg(1)->Unit(benchmark::kMillisecond)->MinTime(2);
BENCHMARK_CAPTURE(balancenetStep, mlp, std::string("mlp"))->Arg(1)->Unit(benchmark::kMillisecond)->MinTime(2);

}  // namespace

BENCHMARK_MAIN();
