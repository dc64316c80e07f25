// --recompute on a GPU worker: the blocks' second forward runs in a re-entrant backward on the GPU and must draw the
// first forward's dropout masks from the GPU's generator; six steps train as six steps that keep the activations.
#include <ATen/ATen.h>

#include <vector>

#include "balancenet/comm/FlatAllReduceSync.h"
#include "balancenet/orchestrator/StaticAllocator.h"
#include "balancenet/trainer/Trainer.h"
#include "gpu/GpuCases.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"
#include "testing/SmallRuns.h"
#include "testing/SyntheticData.h"
#include "testing/ThreadRanks.h"

namespace balancenet::testing {
namespace {

constexpr int64_t kRecomputedSteps = 6;

// The mlp with dropout 0.5 on cuda:0 for kRecomputedSteps steps, its blocks recomputed or not: the parameters, on the
// CPU.
std::vector<at::Tensor> trainOnTheGpu(bool recompute) {
  static const auto train = syntheticDataset(256, 3);
  std::vector<at::Tensor> parameters;
  runRanks(1, [&](comm::Communicator& comm) {
    orchestrator::StaticAllocator allocator(Split::equal(32, 1));
    comm::FlatAllReduceSync sync(comm);
    auto options = comparisonModel("mlp");
    options.dropout = 0.5;
    auto built = seededModel(options, 1);  // every generator seeded, the GPU's too
    built.net->to(c10::Device(c10::DeviceType::CUDA, 0));
    auto run = sgdRun(kRecomputedSteps, 32, 5);
    run.recomputeBlocks = recompute;
    trainer::Trainer t(run, {*built.net, train, nullptr, syntheticObjective(), comm, sync, allocator});
    while (t.stepsDone() < kRecomputedSteps) t.step();
    for (const auto& p : t.parameters()) parameters.push_back(p.detach().cpu());
  });
  return parameters;
}

TEST(GpuRecompute, BlocksRebuiltOnAGpuTrainAsKeptOnesDropoutIncluded) {
  BALANCENET_NEEDS_GPUS(1);
  const auto kept = trainOnTheGpu(false);
  const auto rebuilt = trainOnTheGpu(true);
  const double diff = maxAbsDifference(kept, rebuilt);
  EXPECT_LE(diff, exactnessBound(kept, kRecomputedSteps)) << "max |kept - rebuilt| " << diff;
}

}  // namespace
}  // namespace balancenet::testing
