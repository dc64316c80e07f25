// Pipeline parallelism keeps the engine's promise: after each flushed step the parameters are those of one
// process training the whole model on the whole global batch, for every schedule, stage count, number
// of replicas and unequal shares between them, on images (mlp, cnn) and on text (gpt, its head untied).
#include <gtest/gtest.h>

#include <functional>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "balancenet/comm/FlatAllReduceSync.h"
#include "balancenet/data/OpenDataset.h"
#include "balancenet/models/Gpt.h"
#include "balancenet/models/ModelForData.h"
#include "balancenet/orchestrator/StaticAllocator.h"
#include "balancenet/pipeline/PipelineEvaluator.h"
#include "balancenet/pipeline/PipelineTrainer.h"
#include "testing/ChangingAllocator.h"
#include "testing/DataFiles.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"
#include "testing/SyntheticData.h"
#include "testing/TempDir.h"
#include "testing/ThreadRanks.h"

namespace balancenet {
namespace {

struct PipelineCase {
  std::string name;
  std::string model;
  int stages;
  std::vector<Split> splits;  // over the columns (replicas); step s uses splits[s % size]
  pipeline::ScheduleKind schedule;
  int micros;
  std::string optimizer;
};

// Trains `steps` steps as a pipeline of thread ranks, each rank's model from `build` (the same on every
// rank); returns the whole model's parameters as rank 0 gathers them back from the stages.
std::vector<at::Tensor> pipelineTraining(const PipelineCase& c, const trainer::TrainerOptions& options,
                                         const data::Dataset& train, const objective::Objective& objective,
                                         const std::function<models::BuiltModel()>& build) {
  const int replicas = c.splits[0].worldSize();
  std::vector<at::Tensor> gathered;
  testing::runRanks(c.stages * replicas, [&](comm::Communicator& world) {
    const auto topology = pipeline::Topology::of(world.size(), c.stages);
    auto groups = pipeline::formPipelineGroups(world, topology);
    comm::FlatAllReduceSync stageSync(*groups.stage);
    auto built = build();
    std::unique_ptr<orchestrator::Allocator> allocator;
    if (groups.firstStage()) allocator = std::make_unique<testing::ChangingAllocator>(c.splits);
    pipeline::PipelineTrainerOptions o;
    o.trainer = options;
    o.schedule = c.schedule;
    o.microBatches = c.micros;
    o.partition = pipeline::Partition::uniform(built.net->blocks().size(), c.stages);
    pipeline::PipelineTrainer t(o, {*built.net, train, nullptr, objective, groups, stageSync, allocator.get()});
    for (int64_t s = 0; s < options.steps; ++s) {
      const auto record = t.step();
      EXPECT_EQ(record.stage, topology.stageOf(world.rank()));
      EXPECT_GE(record.microBatches, 1);
    }
    t.gatherModelToRankZero();
    if (world.rank() == 0)
      for (auto& p : built.net->parameters()) gathered.push_back(p.detach().clone());
  });
  return gathered;
}

class PipelineExactnessTest : public ::testing::TestWithParam<PipelineCase> {};

TEST_P(PipelineExactnessTest, MatchesSingleProcessOnTheWholeBatch) {
  const PipelineCase& c = GetParam();
  const auto train = testing::syntheticDataset(300, 5);
  const auto options = testing::comparisonOptions(c.optimizer, 4, c.splits[0].total(), 1e-4);
  const auto pipelined = pipelineTraining(c, options, train, testing::syntheticObjective(),
                                          [&] { return testing::seededComparisonModel(c.model, options.seed); });
  const auto reference = testing::referenceTraining(testing::comparisonModel(c.model), options, train);
  ASSERT_EQ(pipelined.size(), reference.size());
  const double diff = testing::maxAbsDifference(pipelined, reference);
  const double bound = testing::exactnessBound(reference, options.steps);
  std::printf("[%s] max |param difference| vs single process = %.3g (float bound %.3g)\n", c.name.c_str(), diff, bound);
  EXPECT_LT(diff, bound);
}

using pipeline::ScheduleKind;
INSTANTIATE_TEST_SUITE_P(
    Schedules, PipelineExactnessTest,
    ::testing::Values(
        PipelineCase{"mlp_sgd_gpipe_s2", "mlp", 2, {Split{{48}}}, ScheduleKind::GPipe, 4, "sgd"},
        PipelineCase{"mlp_adam_1f1b_s2_m1", "mlp", 2, {Split{{40}}}, ScheduleKind::OneFOneB, 1, "adam"},
        PipelineCase{"mlp_adam_1f1b_s3_m7", "mlp", 3, {Split{{37}}}, ScheduleKind::OneFOneB, 7, "adam"},
        PipelineCase{"cnn_sgd_1f1b_s4_m4", "cnn", 4, {Split{{24}}}, ScheduleKind::OneFOneB, 4, "sgd"},
        PipelineCase{"cnn_adam_gpipe_s4_m9", "cnn", 4, {Split{{27}}}, ScheduleKind::GPipe, 9, "adam"},
        PipelineCase{"cnn_sgd_gpipe_s2_m5", "cnn", 2, {Split{{20}}}, ScheduleKind::GPipe, 5, "sgd"},
        // Replicas with unequal shares: a stage's replicas are weighted by their columns' shares.
        PipelineCase{"mlp_sgd_1f1b_s2_r2_unequal", "mlp", 2, {Split{{5, 43}}}, ScheduleKind::OneFOneB, 4, "sgd"},
        PipelineCase{"cnn_adam_gpipe_s2_r3_unequal", "cnn", 2, {Split{{1, 20, 11}}}, ScheduleKind::GPipe, 3, "adam"},
        PipelineCase{"cnn_adam_1f1b_s4_r2_unequal", "cnn", 4, {Split{{7, 25}}}, ScheduleKind::OneFOneB, 4, "adam"},
        PipelineCase{"cnn_sgd_1f1b_s4_r1_m9", "cnn", 4, {Split{{30}}}, ScheduleKind::OneFOneB, 9, "sgd"},
        // The share of each column changes every step, as a live policy changes it.
        PipelineCase{"mlp_adam_1f1b_s2_r2_changing",
                     "mlp",
                     2,
                     {Split{{1, 31}}, Split{{20, 12}}, Split{{16, 16}}},
                     ScheduleKind::OneFOneB,
                     3,
                     "adam"}),
    [](const auto& info) { return info.param.name; });

// The real engine (not only the schedule simulation) finishes every schedule with S = 2, 3, 4 and
// M = 1, S, 2S + 1, and stays exact.
std::vector<PipelineCase> everySchedule() {
  std::vector<PipelineCase> cases;
  for (auto kind : {ScheduleKind::GPipe, ScheduleKind::OneFOneB})
    for (int s : {2, 3, 4})
      for (int m : {1, s, 2 * s + 1})
        cases.push_back({fmt::format("cnn_{}_s{}_m{}", pipeline::scheduleName(kind), s, m),
                         "cnn",
                         s,
                         {Split{{2 * s + 5}}},
                         kind,
                         m,
                         "sgd"});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(EveryScheduleStagesAndMicroBatches, PipelineExactnessTest,
                         ::testing::ValuesIn(everySchedule()), [](const auto& info) { return info.param.name; });

// gpt cut between transformer blocks: its head's weight is untied from the token embedding first (stages
// own disjoint tensors), as a pipeline worker does, so the reference is one process of the untied model.
models::BuiltModel untiedGpt(const models::ModelOptions& model, uint64_t seed) {
  auto built = testing::seededModel(model, seed);
  auto* gpt = dynamic_cast<models::Gpt*>(built.net.get());
  EXPECT_NE(gpt, nullptr);
  if (gpt) gpt->untieHead();
  return built;
}

class GptPipelineExactnessTest : public ::testing::TestWithParam<PipelineCase> {};

TEST_P(GptPipelineExactnessTest, UntiedStagesMatchOneProcessOfTheUntiedModel) {
  const PipelineCase& c = GetParam();
  testing::TempDir dir;
  ASSERT_EQ(testing::writeTextCorpus(dir.file("corpus.txt"), 3000), "");
  data::DataOptions d;
  d.source = "text:" + dir.file("corpus.txt");
  d.context = 16;
  const auto text = data::openDataset(d);
  const objective::Objective objective(text.train->spec(), {});
  models::ModelOptions model = testing::comparisonModel("gpt");
  model.layers = 2;
  model.heads = 2;
  model.embed = 32;
  models::fitModelToData(model, text.train->spec());
  // SGD: Adam turns the rounding noise of the attention key bias's (exactly zero) gradient into steps
  // (see DataExactnessTest's gpt case).
  const auto options = testing::comparisonOptions(c.optimizer, 4, c.splits[0].total(), 1e-4);
  const auto pipelined =
      pipelineTraining(c, options, *text.train, objective, [&] { return untiedGpt(model, options.seed); });
  auto reference = untiedGpt(model, options.seed);
  // gpt has no buffers: the reference's parameters and buffers are its parameters, the untied head's included.
  const auto expected = testing::referenceTraining(*reference.net, options, *text.train);
  ASSERT_EQ(pipelined.size(), expected.size());
  const double diff = testing::maxAbsDifference(pipelined, expected);
  const double bound = testing::exactnessBound(expected, options.steps);
  std::printf("[%s] max |param difference| vs one process of the untied gpt = %.3g (float bound %.3g)\n",
              c.name.c_str(), diff, bound);
  EXPECT_LT(diff, bound);
}

INSTANTIATE_TEST_SUITE_P(
    GptCuts, GptPipelineExactnessTest,
    ::testing::Values(PipelineCase{"gpt_sgd_gpipe_s2", "gpt", 2, {Split{{24}}}, ScheduleKind::GPipe, 3, "sgd"},
                      PipelineCase{"gpt_sgd_1f1b_s4", "gpt", 4, {Split{{20}}}, ScheduleKind::OneFOneB, 4, "sgd"},
                      PipelineCase{
                          "gpt_sgd_1f1b_s2_r2_unequal", "gpt", 2, {Split{{5, 27}}}, ScheduleKind::OneFOneB, 2, "sgd"}),
    [](const auto& info) { return info.param.name; });

// Evaluation through the stages (two columns, each a shard of the test set) gives what the whole model
// gives on the whole test set in one process.
// --clip-grad-norm with stages: the global norm sums every stage's part (each held by its replicas alike),
// so the pipelined model is clipped exactly as one process clips the whole model (libtorch's clip_grad_norm_).
TEST(PipelineClipping, TheNormOverEveryStageClipsAsOneProcessDoes) {
  const PipelineCase c{"clip", "mlp", 3, {Split{{5, 11}}}, ScheduleKind::OneFOneB, 2, "sgd"};
  const auto train = testing::syntheticDataset(300, 5);
  auto options = testing::comparisonOptions("sgd", 4, c.splits[0].total(), 0.0);
  const auto unclipped = testing::referenceTraining(testing::comparisonModel(c.model), options, train);
  options.clipGradNorm = 0.05;  // below the mlp's gradient norm: every step is clipped
  const auto pipelined = pipelineTraining(c, options, train, testing::syntheticObjective(),
                                          [&] { return testing::seededComparisonModel(c.model, options.seed); });
  const auto reference = testing::referenceTraining(testing::comparisonModel(c.model), options, train);
  const double diff = testing::maxAbsDifference(pipelined, reference);
  const double effect = testing::maxAbsDifference(reference, unclipped);
  const double bound = testing::exactnessBound(reference, options.steps);
  std::printf(
      "3 stages x 2 replicas, clip 0.05: max |param difference| %.3g (float bound %.3g; clipping moved it %.3g)\n",
      diff, bound, effect);
  EXPECT_LT(diff, bound);
  EXPECT_GT(effect, 100 * diff);
  EXPECT_GT(effect, bound) << "clipping must move the parameters by more than float error, or not clipping passes";
}

TEST(PipelineEvaluation, MatchesTheWholeModelOnTheWholeTestSet) {
  const auto test = testing::syntheticDataset(257, 9);
  const uint64_t seed = 3;
  double expectedCorrect = 0, expectedLoss = 0;
  {
    at::manual_seed(seed);
    auto whole = models::buildModel(testing::comparisonModel("cnn"));
    whole.net->eval();
    at::NoGradGuard noGrad;
    auto logits = whole.net->forward(test.images);
    expectedLoss = at::cross_entropy_loss(logits, test.labels, {}, at::Reduction::Mean).item<double>();
    expectedCorrect = logits.argmax(1).eq(test.labels).sum().item<double>();
  }
  std::vector<metrics::EvalPoint> points(6);
  testing::runRanks(6, [&](comm::Communicator& world) {
    auto groups = pipeline::formPipelineGroups(world, pipeline::Topology::of(world.size(), 3));
    auto built = testing::seededComparisonModel("cnn", seed);
    const auto blocks = built.net->blocks();
    const auto cut = pipeline::Partition::uniform(blocks.size(), 3).stages[groups.stageIndex()];
    auto stage = built.net->blockRange(cut.first, cut.end);
    const auto inputShape = cut.first == 0 ? std::vector<int64_t>{} : blocks[cut.first - 1].outputShape;
    points[world.rank()] =
        pipeline::evaluatePipeline(*stage, groups, inputShape, test, testing::syntheticObjective(), 7,
                                   /*chunk=*/50);
  });
  // One forward, summed by chunks and columns instead of at once: one step's float error of the loss.
  const double lossBound = testing::exactnessBound({at::scalar_tensor(expectedLoss)}, 1);
  for (const auto& p : points) {
    EXPECT_EQ(p.step, 7);
    EXPECT_NEAR(p.accuracy, expectedCorrect / test.size(), 1e-12);
    EXPECT_NEAR(p.loss, expectedLoss, lossBound);
  }
}

}  // namespace
}  // namespace balancenet
