// A pipeline's checkpoint state is the whole model block by block, with each parameter's optimiser state: a
// run stopped after step k and continued from it (through the bytes a checkpoint file keeps, by a freshly
// built and differently initialised model) ends where the run that never stopped ends: bit for bit on the
// same cut, and on another cut too, since each rank then takes the blocks of its new stage.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "balancenet/comm/FlatAllReduceSync.h"
#include "balancenet/pipeline/PipelineTrainer.h"
#include "testing/ChangingAllocator.h"
#include "testing/ReferenceTraining.h"
#include "testing/SyntheticData.h"
#include "testing/ThreadRanks.h"

namespace balancenet {
namespace {

struct ResumeCase {
  std::string name;
  int stages;
  Split split;  // over the columns (replicas)
  std::string optimizer;
  std::string cutBefore;  // the partition of the first run (and of the run that never stops)
  std::string cutAfter;   // the partition the resumed run is built with
};

void PrintTo(const ResumeCase& c, std::ostream* os) { *os << c.name; }

constexpr int64_t kSteps = 6;

// Rank 0's whole model (parameters, then buffers) after kSteps steps; with `stopAt` >= 0 the run stops after
// that many steps, keeps its checkpoint state as bytes, and a new trainer on `cutAfter` goes on from them.
std::vector<at::Tensor> train(const ResumeCase& c, const testing::ImageSet& data, int64_t stopAt) {
  const auto options = testing::comparisonOptions(c.optimizer, kSteps, c.split.total(), 1e-4);
  const int world = c.stages * c.split.worldSize();
  std::vector<at::Tensor> model;
  std::string trainingBytes;  // what rank 0's checkpoint file would hold
  testing::runRanks(world, [&](comm::Communicator& comm) {
    auto groups = pipeline::formPipelineGroups(comm, pipeline::Topology::of(world, c.stages));
    comm::FlatAllReduceSync stageSync(*groups.stage);
    auto makeTrainer = [&](models::BuiltModel& built, const std::string& cut,
                           std::unique_ptr<orchestrator::Allocator>& allocator) {
      if (groups.firstStage()) allocator = std::make_unique<testing::ChangingAllocator>(std::vector<Split>{c.split});
      pipeline::PipelineTrainerOptions o;
      o.trainer = options;
      o.microBatches = 3;
      o.partition = pipeline::Partition::parse(cut, built.net->blocks().size(), c.stages);
      return std::make_unique<pipeline::PipelineTrainer>(
          o, pipeline::PipelineParts{*built.net, data, nullptr, testing::syntheticObjective(), groups, stageSync,
                                     allocator.get()});
    };
    auto keepModel = [&](pipeline::PipelineTrainer& trainer, models::BuiltModel& built) {
      trainer.gatherModelToRankZero();
      if (comm.rank() != 0) return;
      for (const auto& p : built.net->parameters()) model.push_back(p.detach().clone());
      for (const auto& b : built.net->buffers()) model.push_back(b.detach().clone());
    };
    auto built = testing::seededComparisonModel("cnn", options.seed);
    std::unique_ptr<orchestrator::Allocator> allocator;
    auto trainer = makeTrainer(built, c.cutBefore, allocator);
    const int64_t firstLeg = stopAt >= 0 ? stopAt : kSteps;
    for (int64_t s = 0; s < firstLeg; ++s) trainer->step();
    if (stopAt < 0) return keepModel(*trainer, built);
    auto state = trainer->checkpointState();
    if (comm.rank() == 0) {
      EXPECT_EQ(state.training.step, stopAt);
      trainingBytes = trainer::toBytes(state.training);
    }
    comm.barrier();
    // Another initialisation: everything the resumed run trains with must come from the checkpoint.
    auto fresh = testing::seededComparisonModel("cnn", options.seed + 17);
    std::unique_ptr<orchestrator::Allocator> freshAllocator;
    auto resumed = makeTrainer(fresh, c.cutAfter, freshAllocator);
    resumed->restoreCheckpoint({trainer::fromBytes(trainingBytes), ""}, /*sameWorld=*/true);
    EXPECT_EQ(resumed->stepsDone(), stopAt);
    while (resumed->stepsDone() < kSteps) resumed->step();
    keepModel(*resumed, fresh);
  });
  return model;
}

class PipelineCheckpointTest : public ::testing::TestWithParam<ResumeCase> {};

TEST_P(PipelineCheckpointTest, ResumedRunEndsWhereTheUnbrokenRunEnds) {
  const ResumeCase& c = GetParam();
  const auto data = testing::syntheticDataset(300, 5);
  const auto unbroken = train(c, data, -1);
  const auto resumed = train(c, data, kSteps / 2);
  ASSERT_EQ(unbroken.size(), resumed.size());
  const double diff = testing::maxAbsDifference(resumed, unbroken);
  std::printf("[%s] max |param difference| resumed vs unbroken = %.3g\n", c.name.c_str(), diff);
  EXPECT_EQ(diff, 0.0);
}

INSTANTIATE_TEST_SUITE_P(
    Resume, PipelineCheckpointTest,
    ::testing::Values(ResumeCase{"cnn_s2_adam_same_cut", 2, Split{{24}}, "adam", "0-1,2-3", "0-1,2-3"},
                      ResumeCase{"cnn_s2_r2_sgd_same_cut", 2, Split{{7, 21}}, "sgd", "0-2,3", "0-2,3"},
                      ResumeCase{"cnn_s2_r2_adam_other_cut", 2, Split{{19, 9}}, "adam", "0-1,2-3", "0,1-3"},
                      ResumeCase{"cnn_s3_sgd_other_cut", 3, Split{{25}}, "sgd", "0,1,2-3", "0-1,2,3"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace balancenet
