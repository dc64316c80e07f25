// A GPU worker draws its dropout masks from its GPU's generator: a worker resuming (from an elastic member's state or
// from a checkpoint) must restore that generator to repeat the uninterrupted run's masks, not only the CPU's.
#include <ATen/ATen.h>

#include <functional>
#include <memory>

#include "balancenet/checkpoint/CheckpointStore.h"
#include "balancenet/checkpoint/CheckpointWriter.h"
#include "balancenet/checkpoint/ModelSignature.h"
#include "balancenet/checkpoint/Resume.h"
#include "balancenet/comm/FlatAllReduceSync.h"
#include "balancenet/orchestrator/StaticAllocator.h"
#include "balancenet/trainer/Trainer.h"
#include "gpu/GpuCases.h"
#include "testing/ReferenceTraining.h"
#include "testing/SmallRuns.h"
#include "testing/SyntheticData.h"
#include "testing/TempDir.h"
#include "testing/ThreadRanks.h"

namespace balancenet::testing {
namespace {

constexpr int64_t kSteps = 6;
constexpr int64_t kHalf = 3;

// The mlp with dropout 0.5 on cuda:0, built from `seed` (which seeds every generator, the GPU's too).
models::BuiltModel onTheGpu(uint64_t seed) {
  auto options = comparisonModel("mlp");
  options.dropout = 0.5;
  auto built = seededModel(options, seed);
  built.net->to(c10::Device(c10::DeviceType::CUDA, 0));
  return built;
}

// Runs `body` on one rank with a way to make trainers of a model over it.
using MakeTrainer = std::function<std::unique_ptr<trainer::Trainer>(models::BuiltModel&)>;
void onOneRank(const std::function<void(const MakeTrainer&)>& body) {
  static const auto train = syntheticDataset(256, 3);
  runRanks(1, [&](comm::Communicator& comm) {
    orchestrator::StaticAllocator allocator(Split::equal(32, 1));
    comm::FlatAllReduceSync sync(comm);
    body([&](models::BuiltModel& built) {
      return std::make_unique<trainer::Trainer>(
          sgdRun(kSteps, 32, 5),
          trainer::TrainerParts{*built.net, train, nullptr, syntheticObjective(), comm, sync, allocator});
    });
  });
}

void finish(trainer::Trainer& t) {
  while (t.stepsDone() < kSteps) t.step();
}

TEST(GpuRandom, DropoutAfterAResumeRepeatsTheUninterruptedRunsMasks) {
  BALANCENET_NEEDS_GPUS(1);
  onOneRank([](const MakeTrainer& make) {
    auto straightModel = onTheGpu(1);
    auto straight = make(straightModel);
    while (straight->stepsDone() < kHalf) straight->step();
    auto half = trainer::fromBytes(trainer::toBytes(straight->captureState()));  // as a joining member receives it
    ASSERT_TRUE(half.gpuRng.defined());
    finish(*straight);

    auto resumedModel = onTheGpu(99);  // another start, every generator seeded otherwise: the state replaces them
    auto resumed = make(resumedModel);
    resumed->restoreState(half);
    finish(*resumed);
    const double diff = maxAbsDifference(straight->parameters(), resumed->parameters());

    // Guards the comparison: without the GPU's generator the masks, and so the run, differ.
    half.gpuRng = at::Tensor();
    auto guardModel = onTheGpu(99);
    auto guard = make(guardModel);
    guard->restoreState(half);
    finish(*guard);
    const double guardDiff = maxAbsDifference(straight->parameters(), guard->parameters());
    std::printf("resumed on cuda:0: max |param difference| %.3g; without the GPU generator %.3g\n", diff, guardDiff);
    EXPECT_LT(diff, 1e-6);
    EXPECT_GT(guardDiff, 1e-5);
  });
}

TEST(GpuRandom, ACheckpointKeepsTheGpuGenerator) {
  BALANCENET_NEEDS_GPUS(1);
  onOneRank([](const MakeTrainer& make) {
    TempDir dir;
    checkpoint::CheckpointStore store(dir.path());
    auto straightModel = onTheGpu(1);
    const checkpoint::RunIdentity run{checkpoint::ModelSignature::of("mlp", *straightModel.net), "sgd", 1, 32, 5};
    checkpoint::CheckpointWriter writer(store, run, kHalf);
    auto straight = make(straightModel);
    while (straight->stepsDone() < kHalf) straight->step();
    writer.save(*straight);
    finish(*straight);
    const auto written = store.newestGood([](const std::string&) {});
    ASSERT_TRUE(written.has_value());
    ASSERT_EQ(written->checkpoint.gpuRng.size(), 1u);

    auto resumedModel = onTheGpu(99);
    auto resumed = make(resumedModel);
    EXPECT_EQ(checkpoint::resume(*resumed, kSteps, store, run, [](const std::string&) {}), kHalf);
    finish(*resumed);
    const double diff = maxAbsDifference(straight->parameters(), resumed->parameters());
    std::printf("resumed from a checkpoint on cuda:0: max |param difference| %.3g\n", diff);
    EXPECT_LT(diff, 1e-6);
  });
}

}  // namespace
}  // namespace balancenet::testing
