// A captured state, through bytes, into a fresh trainer: the rest of the run must not notice.
#include "balancenet/trainer/TrainingState.h"

#include <gtest/gtest.h>

#include "balancenet/comm/FlatAllReduceSync.h"
#include "balancenet/core/Error.h"
#include "balancenet/orchestrator/StaticAllocator.h"
#include "testing/ReferenceTraining.h"
#include "testing/SmallRuns.h"
#include "testing/SyntheticData.h"
#include "testing/ThreadRanks.h"

namespace balancenet::trainer {
namespace {

const testing::ImageSet& dataset() {
  static const auto d = testing::syntheticDataset(256, 3);
  return d;
}

// Trains `steps` steps of a model seeded with `modelSeed`, optionally from `start`; returns the trainer's
// final state.
TrainingState train(int64_t steps, uint64_t modelSeed, const TrainingState* start, const std::string& model = "mlp",
                    precision::Precision precision = precision::Precision::Fp32) {
  TrainingState out;
  testing::runRanks(1, [&](comm::Communicator& comm) {
    at::manual_seed(modelSeed);
    auto built = models::buildModel(testing::comparisonModel(model));
    orchestrator::StaticAllocator allocator(Split::equal(32, 1));
    comm::FlatAllReduceSync sync(comm);
    auto options = testing::sgdRun(steps, 32, 5);
    options.precision = precision;
    Trainer trainer(options, {*built.net, dataset(), nullptr, testing::syntheticObjective(), comm, sync, allocator});
    if (start) trainer.restoreState(*start);
    while (trainer.stepsDone() < steps) trainer.step();
    out = trainer.captureState();
  });
  return out;
}

TEST(TrainingState, ResumingFromBytesContinuesExactly) {
  const auto straight = train(6, 1, nullptr);
  const auto half = fromBytes(toBytes(train(3, 1, nullptr)));
  EXPECT_EQ(half.step, 3);
  EXPECT_EQ(half.position, 3 * 32);
  const auto resumed = train(6, /*a different initial model*/ 99, &half);
  EXPECT_EQ(resumed.step, 6);
  EXPECT_EQ(resumed.samples, straight.samples);
  EXPECT_EQ(testing::maxAbsDifference(straight.parameters, resumed.parameters), 0.0);
}

// fp16's loss scaler goes with the state, so a resumed run scales (and would skip) as the straight one does.
TEST(TrainingState, AnFp16RunResumesWithItsLossScale) {
  const auto fp16 = precision::Precision::Fp16;
  const auto straight = train(6, 1, nullptr, "mlp", fp16);
  const auto half = fromBytes(toBytes(train(3, 1, nullptr, "mlp", fp16)));
  ASSERT_TRUE(half.lossScaler.defined());
  EXPECT_EQ(half.lossScaler[0].item<double>(), 65536.0);
  EXPECT_EQ(half.lossScaler[1].item<double>(), 3.0);  // three good steps toward the next growth
  const auto resumed = train(6, 99, &half, "mlp", fp16);
  EXPECT_EQ(testing::maxAbsDifference(straight.parameters, resumed.parameters), 0.0);
  EXPECT_TRUE(at::equal(straight.lossScaler, resumed.lossScaler));
  EXPECT_FALSE(train(1, 1, nullptr).lossScaler.defined());  // fp32's state carries none
}

TEST(TrainingState, WithoutTheOptimizerStateTheRunWouldDiffer) {
  // Guards the test above: momentum matters, so restoring only the weights must be detectable.
  const auto straight = train(6, 1, nullptr);
  auto half = train(3, 1, nullptr);
  half.optimizer = train(0, 1, nullptr).optimizer;  // a fresh optimiser: no momentum yet
  const auto resumed = train(6, 99, &half);
  EXPECT_GT(testing::maxAbsDifference(straight.parameters, resumed.parameters), 1e-6);
}

// A GPU worker's state carries its GPU's generator (TrainingState::gpuRng, any bytes here: no GPU needed); a CPU
// worker's has none, and its bytes name none, as before GPU generators were kept.
TEST(TrainingState, AGpuGeneratorTravelsWithTheStateAndACpuWorkersHasNone) {
  auto cpu = train(1, 1, nullptr);
  EXPECT_FALSE(cpu.gpuRng.defined());
  const std::string cpuBytes = toBytes(cpu);
  EXPECT_EQ(cpuBytes.find("gpu_rng"), std::string::npos);
  EXPECT_FALSE(fromBytes(cpuBytes).gpuRng.defined());

  auto gpu = cpu;
  gpu.gpuRng = at::arange(16, at::kByte);
  const auto back = fromBytes(toBytes(gpu));
  ASSERT_TRUE(back.gpuRng.defined());
  EXPECT_TRUE(at::equal(back.gpuRng, gpu.gpuRng));
  EXPECT_TRUE(at::equal(back.rng, cpu.rng));
}

TEST(TrainingState, GarbageIsRejected) {
  EXPECT_THROW(fromBytes("not an archive"), RuntimeFailure);
  auto bytes = toBytes(train(1, 1, nullptr));
  EXPECT_THROW(fromBytes(bytes.substr(0, bytes.size() / 2)), RuntimeFailure);
}

TEST(TrainingState, AnotherModelsStateIsRejected) {
  const auto mlp = train(1, 1, nullptr, "mlp");
  EXPECT_THROW(train(2, 1, &mlp, "cnn"), RuntimeFailure);
}

}  // namespace
}  // namespace balancenet::trainer
