// Moving stage boundaries during training keeps the pipeline exact: after every step, across re-partitions,
// the parameters are those of one process training the whole model on the whole global batch. Moves are
// made by calling repartition() on every rank and through options.livePartition with a scripted controller
// on rank 0 (so the gathering of step times, every step or every few, and the broadcast of its answer run
// too), over identity and
// placed topologies, with SGD (momentum) and Adam, one and two replicas with unequal shares.
#include <gtest/gtest.h>

#include <map>

#include <ATen/ATen.h>

#include "balancenet/comm/FlatAllReduceSync.h"
#include "balancenet/pipeline/PipelineTrainer.h"
#include "balancenet/trainer/RunLoop.h"
#include "testing/ChangingAllocator.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"
#include "testing/SyntheticData.h"
#include "testing/TempDir.h"
#include "testing/ThreadRanks.h"

namespace balancenet {
namespace {

constexpr int64_t kBeforeTheFirstStep = -1;

struct MoveCase {
  std::string name;
  std::string model;
  int stages;
  std::vector<int> slotRanks;            // slot -> rank; empty: the identity
  Split split;                           // over the columns (replicas)
  std::map<int64_t, std::string> moves;  // after step k's update (or before the first), move to this partition
  bool live;                             // through a controller on rank 0, else repartition() on every rank
  std::string optimizer;
  pipeline::ScheduleKind schedule = pipeline::ScheduleKind::OneFOneB;
  int micros = 3;
  int every = 1;  // live: the controller is consulted (the times gathered) every this many steps
};

void PrintTo(const MoveCase& c, std::ostream* os) { *os << c.name; }

// Rank 0's controller: answers the scripted partitions at their steps and records what it was shown.
class ScriptedController : public pipeline::PartitionController {
 public:
  ScriptedController(std::map<int64_t, std::string> moves, size_t blocks, int stages)
      : moves_(std::move(moves)), blocks_(blocks), stages_(stages) {}
  std::optional<pipeline::Partition> afterStep(const pipeline::StepTimes& times) override {
    seen.push_back(times);
    const auto move = moves_.find(times.step);
    if (move == moves_.end()) return std::nullopt;
    return pipeline::Partition::parse(move->second, blocks_, stages_);
  }
  void writeOutputs(const std::string& runDir) const override { wroteTo = runDir; }

  std::vector<pipeline::StepTimes> seen;
  mutable std::string wroteTo;

 private:
  std::map<int64_t, std::string> moves_;
  size_t blocks_;
  int stages_;
};

pipeline::Topology topologyOf(const MoveCase& c, int world) {
  return c.slotRanks.empty() ? pipeline::Topology::of(world, c.stages)
                             : pipeline::Topology::placed(world, c.stages, c.slotRanks);
}

// What a pipelined run of `c` leaves for the checks: rank 0's whole model after every step (gathered back
// from the stages), every rank's partition at the end, and what the controller saw.
struct MovedRun {
  std::vector<std::vector<at::Tensor>> modelAfterStep;
  std::vector<std::string> finalPartitionByRank;
  std::vector<pipeline::StepTimes> controllerSaw;
};

MovedRun trainWithMoves(const MoveCase& c, const trainer::TrainerOptions& options, const testing::ImageSet& train) {
  const int world = c.stages * c.split.worldSize();
  MovedRun out;
  out.modelAfterStep.resize(options.steps);
  out.finalPartitionByRank.resize(world);
  testing::runRanks(world, [&](comm::Communicator& comm) {
    const auto topology = topologyOf(c, comm.size());
    auto groups = pipeline::formPipelineGroups(comm, topology);
    comm::FlatAllReduceSync stageSync(*groups.stage);
    auto built = testing::seededComparisonModel(c.model, options.seed);
    const size_t blocks = built.net->blocks().size();
    std::unique_ptr<orchestrator::Allocator> allocator;
    if (groups.firstStage()) allocator = std::make_unique<testing::ChangingAllocator>(std::vector<Split>{c.split});
    std::unique_ptr<ScriptedController> controller;
    if (c.live && comm.rank() == 0) controller = std::make_unique<ScriptedController>(c.moves, blocks, c.stages);
    pipeline::PipelineTrainerOptions o;
    o.trainer = options;
    o.schedule = c.schedule;
    o.microBatches = c.micros;
    o.partition = pipeline::Partition::uniform(blocks, c.stages);
    o.livePartition = c.live;
    o.partitionEvery = c.every;
    pipeline::PipelineTrainer t(o, {*built.net, train, nullptr, testing::syntheticObjective(), groups, stageSync,
                                    allocator.get(), controller.get()});
    auto moveIfScripted = [&](int64_t step) {
      const auto move = c.moves.find(step);
      if (!c.live && move != c.moves.end()) t.repartition(pipeline::Partition::parse(move->second, blocks, c.stages));
    };
    moveIfScripted(kBeforeTheFirstStep);
    for (int64_t s = 0; s < options.steps; ++s) {
      EXPECT_EQ(t.step().stage, topology.stageOf(comm.rank()));
      moveIfScripted(s);
      t.gatherModelToRankZero();
      if (comm.rank() != 0) continue;
      for (const auto& p : built.net->parameters()) out.modelAfterStep[s].push_back(p.detach().clone());
      for (const auto& b : built.net->buffers()) out.modelAfterStep[s].push_back(b.detach().clone());
    }
    out.finalPartitionByRank[comm.rank()] = t.partition().str();
    if (controller) out.controllerSaw = controller->seen;
  });
  return out;
}

class PipelineRepartitionTest : public ::testing::TestWithParam<MoveCase> {};

TEST_P(PipelineRepartitionTest, MatchesSingleProcessAfterEveryStepAcrossMoves) {
  const MoveCase& c = GetParam();
  const auto train = testing::syntheticDataset(300, 5);
  const auto options = testing::comparisonOptions(c.optimizer, 6, c.split.total(), 1e-4);
  const auto run = trainWithMoves(c, options, train);
  for (int64_t s = 0; s < options.steps; ++s) {
    auto upTo = options;
    upTo.steps = s + 1;  // the learning-rate schedule still spans all steps (lr.totalSteps)
    const auto reference = testing::referenceTraining(testing::comparisonModel(c.model), upTo, train);
    ASSERT_EQ(run.modelAfterStep[s].size(), reference.size());
    const double diff = testing::maxAbsDifference(run.modelAfterStep[s], reference);
    const double bound = testing::exactnessBound(reference, upTo.steps);
    std::printf("[%s] step %lld: max |param difference| vs single process = %.3g (float bound %.3g)\n", c.name.c_str(),
                static_cast<long long>(s), diff, bound);
    EXPECT_LT(diff, bound) << "after step " << s;
  }
  for (const auto& p : run.finalPartitionByRank) EXPECT_EQ(p, c.moves.rbegin()->second);
  if (!c.live) return;
  // The controller saw every step, every rank's compute time in its slot, and the split in force.
  ASSERT_EQ(run.controllerSaw.size(), static_cast<size_t>(options.steps));
  for (size_t s = 0; s < run.controllerSaw.size(); ++s) {
    const auto& seen = run.controllerSaw[s];
    EXPECT_EQ(seen.step, static_cast<int64_t>(s));
    EXPECT_EQ(seen.shares, c.split.batches);
    ASSERT_EQ(seen.computeMsByRank.size(), static_cast<size_t>(c.stages * c.split.worldSize()));
    for (double ms : seen.computeMsByRank) EXPECT_GT(ms, 0);
    EXPECT_GT(seen.stepMs, 0);
  }
}

using pipeline::ScheduleKind;
INSTANTIATE_TEST_SUITE_P(
    Moves, PipelineRepartitionTest,
    ::testing::Values(
        // cnn has 4 blocks: 0-1,2-3 (uniform) -> 0-2,3 -> 0,1-3; block 2 goes to stage 0 and comes back.
        MoveCase{"cnn_s2_sgd_direct", "cnn", 2, {}, Split{{24}}, {{1, "0-2,3"}, {3, "0,1-3"}}, false, "sgd"},
        MoveCase{"cnn_s2_adam_placed_direct",
                 "cnn",
                 2,
                 {1, 0},
                 Split{{26}},
                 {{1, "0-2,3"}, {3, "0,1-3"}},
                 false,
                 "adam",
                 ScheduleKind::GPipe},
        // Before the first step the optimisers keep no state: the move carries none.
        MoveCase{"cnn_s2_adam_before_first_step",
                 "cnn",
                 2,
                 {},
                 Split{{26}},
                 {{kBeforeTheFirstStep, "0,1-3"}},
                 false,
                 "adam"},
        MoveCase{"cnn_s2_r2_adam_placed_live",
                 "cnn",
                 2,
                 {2, 0, 3, 1},
                 Split{{7, 25}},
                 {{1, "0-2,3"}, {3, "0,1-3"}},
                 true,
                 "adam"},
        MoveCase{"cnn_s2_r2_sgd_live", "cnn", 2, {}, Split{{30, 6}}, {{0, "0-2,3"}, {2, "0,1-3"}}, true, "sgd"},
        // S = 3: 0-1,2,3 (uniform) -> 0,1-2,3 -> 0,1,2-3.
        MoveCase{"cnn_s3_sgd_placed_live",
                 "cnn",
                 3,
                 {2, 0, 1},
                 Split{{27}},
                 {{1, "0,1-2,3"}, {2, "0,1,2-3"}},
                 true,
                 "sgd",
                 ScheduleKind::GPipe},
        // The times gathered every 3 steps (a decision period): the controller still sees steps 0-5 in order,
        // and its moves at steps 2 and 5 (the last of each window) happen there.
        MoveCase{"cnn_s3_adam_placed_live_every_3",
                 "cnn",
                 3,
                 {1, 2, 0},
                 Split{{25}},
                 {{2, "0,1-2,3"}, {5, "0,1,2-3"}},
                 true,
                 "adam",
                 ScheduleKind::OneFOneB,
                 3,
                 3},
        MoveCase{
            "cnn_s3_r2_adam_direct", "cnn", 3, {}, Split{{9, 19}}, {{0, "0,1-2,3"}, {4, "0,1,2-3"}}, false, "adam"}),
    [](const auto& info) { return info.param.name; });

// The whole model's loss and accuracy on `test` with `values` (parameters, then buffers) in it.
metrics::EvalPoint wholeModelOn(const testing::ImageSet& test, const std::vector<at::Tensor>& values, uint64_t seed) {
  auto whole = testing::seededComparisonModel("cnn", seed);
  auto mine = whole.net->parameters();
  const auto buffers = whole.net->buffers();
  mine.insert(mine.end(), buffers.begin(), buffers.end());
  at::NoGradGuard noGrad;
  for (size_t i = 0; i < mine.size(); ++i) mine[i].copy_(values.at(i));
  whole.net->eval();
  const auto logits = whole.net->forward(test.images);
  metrics::EvalPoint point;
  point.loss = at::cross_entropy_loss(logits, test.labels).item<double>();
  point.accuracy = logits.argmax(1).eq(test.labels).sum().item<double>() / test.size();
  return point;
}

// run() with a live partition: the summary counts the moves and names the final partition, rank 0's
// controller writes its outputs into the run directory, and the evaluation at the end (through the moved
// stages) gives the golden model's loss and accuracy.
TEST(PipelineRepartition, RunReportsTheMovesAndTheControllerWritesItsOutputs) {
  const auto train = testing::syntheticDataset(200, 3);
  const auto test = testing::syntheticDataset(120, 4);
  testing::TempDir dir;
  auto options = testing::comparisonOptions("sgd", 4, 16, 0);
  options.runDir = dir.path();
  options.evalAtEnd = true;
  std::vector<metrics::RunSummary> summaries(2);
  std::string wroteTo;
  testing::runRanks(2, [&](comm::Communicator& comm) {
    auto groups = pipeline::formPipelineGroups(comm, pipeline::Topology::of(2, 2));
    comm::FlatAllReduceSync stageSync(*groups.stage);
    auto built = testing::seededComparisonModel("cnn", options.seed);
    std::unique_ptr<orchestrator::Allocator> allocator;
    if (groups.firstStage()) allocator = std::make_unique<testing::ChangingAllocator>(std::vector<Split>{Split{{16}}});
    std::unique_ptr<ScriptedController> controller;
    if (comm.rank() == 0)
      controller = std::make_unique<ScriptedController>(std::map<int64_t, std::string>{{0, "0-2,3"}, {2, "0,1-3"}},
                                                        built.net->blocks().size(), 2);
    pipeline::PipelineTrainerOptions o;
    o.trainer = options;
    o.partition = pipeline::Partition::uniform(built.net->blocks().size(), 2);
    o.livePartition = true;
    pipeline::PipelineTrainer t(o, {*built.net, train, &test, testing::syntheticObjective(), groups, stageSync,
                                    allocator.get(), controller.get()});
    summaries[comm.rank()] = trainer::RunLoop(o.trainer, {t}).run();
    if (controller) wroteTo = controller->wroteTo;
  });
  const auto golden =
      wholeModelOn(test, testing::referenceTraining(testing::comparisonModel("cnn"), options, train), options.seed);
  // The loss of parameters within the float bound of `steps` steps, itself a float sum: that bound of the loss.
  const double lossBound = testing::exactnessBound({at::scalar_tensor(golden.loss)}, options.steps);
  for (const auto& s : summaries) {
    EXPECT_EQ(s.extra.at("repartitions").get<int64_t>(), 2);
    EXPECT_EQ(s.extra.at("pipeline").at("partition").get<std::string>(), "0,1-3");
    ASSERT_EQ(s.evals.size(), 1u);
    EXPECT_NEAR(s.evals[0].loss, golden.loss, lossBound);
    EXPECT_NEAR(s.evals[0].accuracy, golden.accuracy, 1.0 / test.size());
  }
  EXPECT_EQ(wroteTo, dir.path());
}

}  // namespace
}  // namespace balancenet
