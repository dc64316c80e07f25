// Planner: the cost model on a hand-computed example, the searches against brute force (every slot
// permutation and every cut) on seeded random instances, heterogeneity, memory caps, equal-FLOPs cuts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <random>
#include <set>

#include "balancenet/core/Error.h"
#include "balancenet/pipeline/MemoryEstimate.h"
#include "balancenet/pipeline/Schedule.h"
#include "balancenet/pipeline/planner/CostModel.h"
#include "balancenet/pipeline/planner/Planner.h"
#include "balancenet/pipeline/planner/RangeSearch.h"
#include "testing/UsageErrors.h"

namespace balancenet::pipeline {
namespace {

using testing::usageErrorOf;

models::BlockInfo plannerBlock(int64_t parameters, int64_t outputElements, int64_t memoryPerSample, int64_t flops = 0) {
  models::BlockInfo b;
  b.name = "b" + std::to_string(parameters);
  b.kind = "conv";
  b.parameters = parameters;
  b.flopsPerSample = flops;
  b.outputShape = {outputElements};
  b.outputElementsPerSample = outputElements;
  b.memoryPerSampleBytes = memoryPerSample;
  return b;
}

NodeCosts uniformNode(size_t blocks, double forwardMs, double backwardMs, double capBytes = 0) {
  NodeCosts n;
  n.forwardMs.assign(blocks, forwardMs);
  n.backwardMs.assign(blocks, backwardMs);
  n.memoryLimitBytes = capBytes;
  return n;
}

// 3 blocks; node 0 costs 2 ms per sample per block, node 1 twice that; 400 bytes/ms links, 0.5 ms latency.
PlanInput handInput(int nodes) {
  PlanInput in;
  in.blocks = {plannerBlock(10, 100, 1000), plannerBlock(20, 50, 1000), plannerBlock(30, 10, 1000)};
  for (int node = 0; node < nodes; ++node) in.nodes.push_back(uniformNode(3, 1.0 + node % 2, 1.0 + node % 2));
  in.links.bytesPerMs.assign(nodes, std::vector<double>(nodes, 400));
  in.links.latencyMs = 0.5;
  in.globalBatch = 8;
  in.microBatches = 4;
  return in;
}

Placement placementOf(int stages, int replicas, const std::string& cut, std::vector<int> slots, int blocks,
                      int micros = 4) {
  Placement p;
  p.stages = stages;
  p.replicas = replicas;
  p.microBatches = micros;
  p.partition = Partition::parse(cut, blocks, stages);
  p.slotRanks = std::move(slots);
  return p;
}

TEST(PlannerCostModel, TransferIsLatencyPlusBytesOverBandwidthAndFreeOnOneNode) {
  LinkCosts links;
  EXPECT_EQ(links.transferMs(0, 1, 1e6), 0);  // no links measured: free
  links.bytesPerMs = {{0, 400}, {100, 0}};
  links.latencyMs = 0.5;
  EXPECT_DOUBLE_EQ(links.transferMs(0, 1, 400), 1.5);
  EXPECT_DOUBLE_EQ(links.transferMs(1, 0, 400), 4.5);
  EXPECT_EQ(links.transferMs(1, 1, 400), 0);
}

TEST(PlannerCostModel, PipelineStepIsComputeTransferFillAndDrain) {
  const auto in = handInput(2);
  const auto p = predict(in, placementOf(2, 1, "0-1,2", {0, 1}, 3));
  // m = 4 micro-batches of u = 2. Stage 0 on node 0: 2 x (2 + 2) = 8 ms compute, plus the activation of
  // block 1 (2 x 4 x 50 = 400 bytes) there and its gradient back: 2 x (0.5 + 400 / 400) = 3 ms -> 11.
  // Stage 1 on node 1: 2 x 4 = 8. Step: 11 + 8 + (4 - 1) x 11 = 52.
  EXPECT_EQ(p.shares, (std::vector<int64_t>{8}));
  EXPECT_DOUBLE_EQ(p.slotStageMs[0], 11);
  EXPECT_DOUBLE_EQ(p.slotStageMs[1], 8);
  EXPECT_DOUBLE_EQ(p.slotComputeMs[0], 32);  // 8 samples x 4 ms
  EXPECT_DOUBLE_EQ(p.slotComputeMs[1], 32);
  EXPECT_DOUBLE_EQ(p.syncMs, 0);
  EXPECT_DOUBLE_EQ(p.stepMs, 52);
  EXPECT_TRUE(p.fits);
  // The other order puts the slow node first: 2 x 8 + 3 = 19 and 2 x 2 = 4: 19 + 4 + 3 x 19 = 80.
  EXPECT_DOUBLE_EQ(predict(in, placementOf(2, 1, "0-1,2", {1, 0}, 3)).stepMs, 80);
}

TEST(PlannerCostModel, DataParallelSharesBalanceAndReplicasSyncOverTheRing) {
  auto in = handInput(2);
  in.globalBatch = 9;
  const auto p = predict(in, placementOf(1, 2, "0-2", {0, 1}, 3, 1));
  // Node 0 takes 6 ms a sample, node 1 12: shares 6 and 3 finish together at 36 ms. The all-reduce of
  // 60 parameters (240 bytes): 2 (2-1)/2 x 240 bytes at 400 bytes/ms + 2 latencies = 0.6 + 1.
  EXPECT_EQ(p.shares, (std::vector<int64_t>{6, 3}));
  EXPECT_DOUBLE_EQ(p.syncMs, 1.6);
  EXPECT_DOUBLE_EQ(p.stepMs, 37.6);
  // Given shares are kept.
  auto given = placementOf(1, 2, "0-2", {0, 1}, 3, 1);
  given.shares = {4, 5};
  EXPECT_DOUBLE_EQ(predict(in, given).stepMs, 60 + 1.6);
}

TEST(PlannerCostModel, ASlotOverItsCapDoesNotFitAndIsNamed) {
  auto in = handInput(2);
  // 1F1B stage 0 of 2 holds 2 micro-batches of 2: 30 parameters x 12 bytes + 2000 bytes x 2 x 2 = 8360.
  in.nodes[0].memoryLimitBytes = 8359;
  const auto p = predict(in, placementOf(2, 1, "0-1,2", {0, 1}, 3));
  EXPECT_FALSE(p.fits);
  EXPECT_NE(p.memoryNote.find("node 0 (stage 0, blocks 0-1)"), std::string::npos) << p.memoryNote;
  in.nodes[0].memoryLimitBytes = 8360;
  EXPECT_TRUE(predict(in, placementOf(2, 1, "0-1,2", {0, 1}, 3)).fits);
  EXPECT_THROW(predict(in, placementOf(2, 1, "0-1,2", {0, 0}, 3)), InternalError);
}

TEST(PlannerCostModel, InFlightAndMemoryMatchTheScheduleAndTheEstimate) {
  for (auto kind : {ScheduleKind::GPipe, ScheduleKind::OneFOneB})
    for (int stages = 2; stages <= 4; ++stages)
      for (int micros = 1; micros <= 6; ++micros)
        for (int s = 0; s < stages; ++s)
          EXPECT_EQ(planner::inFlightMicroBatches(kind, s, stages, micros),
                    peakInFlight(stageActions(kind, s, stages, micros)));
  const auto in = handInput(1);
  const planner::CostTable table(in);
  EXPECT_DOUBLE_EQ(table.memoryBytes(1, 3, 3, 2),
                   static_cast<double>(estimateStageMemory(in.blocks, {1, 3}, 3, 2, "sgd").total()));
}

// A random instance: heterogeneous per-block costs, optional symmetric links and memory caps.
PlanInput randomInstance(std::mt19937& rng, int nodes, int blocks, bool links, bool caps, ScheduleKind kind) {
  std::uniform_real_distribution<double> ms(0.1, 3.0), speed(1.0, 4.0), rate(50, 500);
  std::uniform_int_distribution<int64_t> count(10, 5000);
  PlanInput in;
  for (int b = 0; b < blocks; ++b) in.blocks.push_back(plannerBlock(count(rng), count(rng), count(rng)));
  for (int node = 0; node < nodes; ++node) {
    const double slow = speed(rng);
    NodeCosts n;
    for (int b = 0; b < blocks; ++b) {
      n.forwardMs.push_back(slow * ms(rng));
      n.backwardMs.push_back(slow * ms(rng));
    }
    if (caps) n.memoryLimitBytes = 30000.0 * std::uniform_real_distribution<double>(4, 40)(rng);
    in.nodes.push_back(n);
  }
  if (links) {
    in.links.bytesPerMs.assign(nodes, std::vector<double>(nodes, 0));
    for (int a = 0; a < nodes; ++a)
      for (int b = a + 1; b < nodes; ++b) in.links.bytesPerMs[a][b] = in.links.bytesPerMs[b][a] = rate(rng);
    in.links.latencyMs = 0.2;
  }
  in.globalBatch = std::uniform_int_distribution<int64_t>(nodes, 24)(rng);
  in.microBatches = std::uniform_int_distribution<int>(0, 5)(rng);
  in.schedule = kind;
  return in;
}

TEST(PlannerSearch, EnumeratesEveryCutOnce) {
  std::set<std::string> cuts;
  planner::forEachPartition(7, 3, [&](const Partition& p) { cuts.insert(p.str()); });
  EXPECT_EQ(cuts.size(), 15u);  // C(6, 2)
  EXPECT_EQ(planner::choose(6, 2, 1e9), 15);
  EXPECT_EQ(cuts.count("0-4,5,6"), 1u);
  EXPECT_EQ(cuts.count("0,1,2-6"), 1u);
}

// Every slot permutation and every cut, predicted: the least step that fits.
std::optional<double> bruteForce(const PlanInput& in, int stages) {
  const int n = static_cast<int>(in.nodes.size());
  std::vector<int> slots(n);
  std::iota(slots.begin(), slots.end(), 0);
  std::optional<double> best;
  do {
    planner::forEachPartition(in.blocks.size(), stages, [&](const Partition& cut) {
      Placement p;
      p.stages = stages;
      p.replicas = n / stages;
      p.microBatches = planner::plannedMicroBatches(in, stages);
      p.partition = cut;
      p.slotRanks = slots;
      p = predict(in, p);
      if (p.fits && (!best || p.stepMs < *best)) best = p.stepMs;
    });
  } while (std::next_permutation(slots.begin(), slots.end()));
  return best;
}

TEST(PlannerSearch, MatchesBruteForceOnRandomInstances) {
  std::mt19937 rng(17);
  int compared = 0, nothingFits = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int nodes = 2 + trial % 4;  // 2..5
    const int blocks = std::uniform_int_distribution<int>(nodes, nodes == 5 ? 6 : 8)(rng);
    const auto kind = trial % 2 ? ScheduleKind::GPipe : ScheduleKind::OneFOneB;
    const auto in = randomInstance(rng, nodes, blocks, trial % 3 != 0, trial % 4 >= 2, kind);
    for (int stages = 1; stages <= nodes; ++stages) {
      if (nodes % stages) continue;
      const auto expected = bruteForce(in, stages);
      const auto ranked = rankPlacements(in, PlanRequest{stages, {}});
      ASSERT_EQ(ranked.empty(), !expected) << "trial " << trial << " stages " << stages;
      if (!expected) {
        ++nothingFits;
        continue;
      }
      ++compared;
      const auto& got = ranked.front();
      EXPECT_NEAR(got.stepMs, *expected, 1e-9 * *expected) << "trial " << trial << ": " << got.describe();
      // What the search returns is what predict() says of it.
      EXPECT_DOUBLE_EQ(predict(in, got).stepMs, got.stepMs);
      EXPECT_TRUE(got.fits);
      EXPECT_EQ(got.method, "exact");
    }
  }
  EXPECT_GT(compared, 60);
  EXPECT_GT(nothingFits, 0);  // the caps do bite in some instances
}

TEST(PlannerSearch, RanksEveryShapeBestFirst) {
  std::mt19937 rng(5);
  const auto in = randomInstance(rng, 4, 7, true, false, ScheduleKind::OneFOneB);
  const auto ranked = rankPlacements(in, PlanRequest{});
  ASSERT_EQ(ranked.size(), 3u);  // S = 1, 2, 4
  for (size_t i = 1; i < ranked.size(); ++i) EXPECT_LE(ranked[i - 1].stepMs, ranked[i].stepMs);
  EXPECT_EQ(planPlacement(in, PlanRequest{}).stepMs, ranked.front().stepMs);
}

TEST(PlannerSearch, TheSlowNodeGetsTheLightRange) {
  PlanInput in;
  for (int b = 0; b < 8; ++b) in.blocks.push_back(plannerBlock(100, 100, 100));
  in.nodes = {uniformNode(8, 1, 1), uniformNode(8, 4, 4)};  // node 1 is 4x slower
  in.globalBatch = 16;
  const auto p = planPlacement(in, PlanRequest{2, {}});
  const auto slow = p.partition.stages[p.topology().stageOf(1)];
  const auto fast = p.partition.stages[p.topology().stageOf(0)];
  EXPECT_LT(slow.size(), fast.size()) << p.describe();
  // M = 8 micro-batches of 2: k blocks on the fast node take 4k ms, the rest 16 (8 - k) on the slow one;
  // k = 7: 28 + 16 + 7 x 28 = 240 beats k = 6: 24 + 32 + 7 x 32 = 280.
  EXPECT_EQ(slow.size(), 1u) << p.describe();
  EXPECT_EQ(p.method, "exact");
  // The uniform cut is worse than the plan.
  Placement uniform = p;
  uniform.partition = Partition::uniform(8, 2);
  uniform.shares.clear();
  EXPECT_GT(predict(in, uniform).stepMs, p.stepMs);
}

TEST(PlannerSearch, AMemoryCapForcesBlocksOffANode) {
  PlanInput in;
  for (int b = 0; b < 6; ++b) in.blocks.push_back(plannerBlock(b == 5 ? 100000 : 10, 10, 10));
  in.nodes = {uniformNode(6, 1, 1), uniformNode(6, 1, 1)};
  in.globalBatch = 8;
  // Node 0 cannot hold the last (large) block: 100000 parameters x 12 bytes.
  in.nodes[0].memoryLimitBytes = 1e6;
  for (int stages : {2}) {
    const auto p = planPlacement(in, PlanRequest{stages, {}});
    EXPECT_TRUE(p.fits);
    EXPECT_EQ(p.topology().stageOf(1), stages - 1) << p.describe();
  }
  // Data parallelism needs the whole model on node 0: it is not among the ranked shapes.
  for (const auto& p : rankPlacements(in, PlanRequest{})) EXPECT_GT(p.stages, 1) << p.describe();
}

TEST(PlannerSearch, NothingFitsNamesTheTightestNode) {
  PlanInput in;
  for (int b = 0; b < 4; ++b) in.blocks.push_back(plannerBlock(100000, 10, 10));
  in.nodes = {uniformNode(4, 1, 1, 2 * 1048576.0), uniformNode(4, 1, 1, 1048576.0)};
  in.globalBatch = 8;
  EXPECT_TRUE(rankPlacements(in, PlanRequest{}).empty());
  EXPECT_EQ(usageErrorOf([&] {
              planPlacement(in, PlanRequest{2, {}});
            }),
            "no placement with --pipeline-stages 2 fits every node's memory; the tightest is node 1 with "
            "--memory-limit-mb 1 (try more stages or nodes, a smaller batch, or a larger limit)");
}

TEST(PlannerSearch, FixedSlotsSearchOnlyTheCut) {
  PlanInput in;
  for (int b = 0; b < 8; ++b) in.blocks.push_back(plannerBlock(100, 100, 100));
  in.nodes = {uniformNode(8, 4, 4), uniformNode(8, 1, 1)};
  in.globalBatch = 16;
  const auto p = planPlacement(in, PlanRequest{2, {0, 1}});
  EXPECT_EQ(p.slotRanks, (std::vector<int>{0, 1}));
  EXPECT_EQ(p.partition.str(), "0,1-7");  // rank 0, 4x slower, stays first and gets one block
}

// Beyond the exact sizes (12! slot assignments) the replica and data-parallel shapes are searched
// heuristically: what comes back must still be a valid placement that fits where one fits, and never be
// worse than the naive one (ranks in order, equal block counts, balanced shares).
TEST(PlannerSearch, HeuristicReplicaAndDataParallelShapesAreValidAndBeatRankOrder) {
  std::mt19937 rng(12);
  auto in = randomInstance(rng, 12, 30, true, false, ScheduleKind::OneFOneB);
  in.globalBatch = 96;
  for (auto& row : in.links.bytesPerMs)
    for (auto& rate : row) rate *= 100;  // the replicas' all-reduce should not drown the compute
  // The last block has twice the parameters of all the others (small activations): with S = 3 only the
  // nodes capped at 0 (those that run stage 2 in rank order) can hold it, so a placement that ignores the
  // caps does not fit. The others can hold any range without it, at any micro-batch.
  int64_t others = 0;
  for (auto& block : in.blocks) {
    block.memoryPerSampleBytes = 1;
    others += block.parameters;
  }
  in.blocks.back().parameters = 2 * others;
  const planner::CostTable table(in);
  const double withoutLast = table.memoryBytes(0, in.blocks.size() - 1, in.globalBatch, in.globalBatch);
  for (int stages : {3, 1}) {
    for (int node = 0; node < 12; ++node)
      in.nodes[node].memoryLimitBytes = stages == 3 && node % 3 != 2 ? withoutLast : 0;
    const int replicas = 12 / stages;
    Placement naive;
    naive.stages = stages;
    naive.replicas = replicas;
    naive.microBatches = planner::plannedMicroBatches(in, stages);
    naive.partition = Partition::uniform(in.blocks.size(), stages);
    naive.slotRanks.resize(12);
    std::iota(naive.slotRanks.begin(), naive.slotRanks.end(), 0);
    naive = predict(in, naive);
    ASSERT_TRUE(naive.fits) << naive.memoryNote;
    if (stages == 3) {
      auto misplaced = naive;
      std::swap(misplaced.slotRanks[0], misplaced.slotRanks[2]);
      ASSERT_FALSE(predict(in, misplaced).fits);  // the caps bite
    }

    const auto ranked = rankPlacements(in, PlanRequest{stages, {}});
    ASSERT_EQ(ranked.size(), 1u) << "stages " << stages;
    const auto& got = ranked.front();
    EXPECT_EQ(got.method, "heuristic");
    EXPECT_EQ(got.stages, stages);
    EXPECT_EQ(got.replicas, replicas);
    auto slots = got.slotRanks;
    std::sort(slots.begin(), slots.end());
    EXPECT_EQ(slots, naive.slotRanks) << got.describe();  // a permutation of the ranks
    ASSERT_EQ(got.partition.stageCount(), stages);
    size_t covered = 0;
    for (const auto& range : got.partition.stages) {
      EXPECT_EQ(range.first, covered) << got.describe();
      EXPECT_GT(range.end, range.first) << got.describe();
      covered = range.end;
    }
    EXPECT_EQ(covered, in.blocks.size()) << got.describe();
    ASSERT_EQ(got.shares.size(), static_cast<size_t>(replicas));
    EXPECT_EQ(std::accumulate(got.shares.begin(), got.shares.end(), int64_t{0}), in.globalBatch);
    EXPECT_GE(*std::min_element(got.shares.begin(), got.shares.end()), 1);
    EXPECT_TRUE(got.fits) << got.memoryNote;
    EXPECT_DOUBLE_EQ(predict(in, got).stepMs, got.stepMs);
    EXPECT_LE(got.stepMs, naive.stepMs) << "stages " << stages << ": " << got.describe();
  }
}

TEST(PlannerEqualFlops, MinimisesTheLargestStagesFlops) {
  std::vector<models::BlockInfo> blocks;
  for (int64_t flops : {5, 1, 1, 1, 1, 1, 10, 2}) blocks.push_back(plannerBlock(1, 1, 1, flops));
  EXPECT_EQ(equalFlopsPartition(blocks, 2).str(), "0-5,6-7");  // 10 | 12
  EXPECT_EQ(equalFlopsPartition(blocks, 3).str(), "0-5,6,7");  // 10 | 10 | 2
  EXPECT_EQ(equalFlopsPartition(blocks, 8).str(), "0,1,2,3,4,5,6,7");
  EXPECT_EQ(usageErrorOf([&] { equalFlopsPartition(blocks, 9); }),
            "--pipeline-stages 9 needs at least 9 blocks but the model has 8 (balancenet models --blocks MODEL "
            "lists them)");
}

TEST(PlannerExplain, PrintsTheCostTableAndEachSlot) {
  const auto in = handInput(2);
  const auto p = predict(in, placementOf(2, 1, "0-1,2", {0, 1}, 3));
  EXPECT_EQ(p.describe(), "2 stages x 1 replica, partition 0-1,2, slots 0,1");
  const auto text = explainPlacement(in, p);
  EXPECT_NE(text.find("    1  b20              2.000     4.000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("placement: 2 stages x 1 replica, partition 0-1,2, slots 0,1, M 4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("predicted step 52.00 ms (sync 0.00 ms), 153.8 samples/s"), std::string::npos) << text;
  EXPECT_NE(text.find("    0       0    0       0-1       32.00    11.000        0.0       none\n"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace balancenet::pipeline
