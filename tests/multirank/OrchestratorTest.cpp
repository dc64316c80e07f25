// The orchestrator on thread ranks: metrics from every rank reach the policy, and every rank applies
// the decided split from the same step on.
#include <gtest/gtest.h>

#include <fstream>
#include <mutex>

#include "balancenet/orchestrator/Orchestrator.h"
#include "testing/TempDir.h"
#include "testing/ThreadRanks.h"

namespace balancenet {
namespace {

// Records what it was given and adds one sample to the last rank at every decision (the total grows,
// as with the paper's BNO).
class ScriptedPolicy : public orchestrator::Policy {
 public:
  explicit ScriptedPolicy(std::vector<orchestrator::PolicyInput>* seen) : seen_(seen) {}
  std::string name() const override { return "scripted"; }
  orchestrator::Decision decide(const orchestrator::PolicyInput& input) override {
    seen_->push_back(input);
    Split next = input.current;
    next.batches.back() += 1;
    return {next, "one more sample"};
  }

 private:
  std::vector<orchestrator::PolicyInput>* seen_;
};

// Steps [from, to) of one rank: each takes the split in force and reports its share at `computeMs`.
std::vector<Split> runSteps(orchestrator::Orchestrator& orch, int rank, int64_t from, int64_t to, double computeMs) {
  std::vector<Split> splits;
  for (int64_t step = from; step < to; ++step) {
    Split s = orch.splitFor(step);
    metrics::StepRecord r;
    r.step = step;
    r.rank = rank;
    r.batch = s.batches[rank];
    r.computeMs = computeMs;
    orch.observe(r);
    splits.push_back(s);
  }
  return splits;
}

TEST(Orchestrator, GathersEveryRankAndAppliesTheSameSplitEverywhere) {
  testing::TempDir dir;
  std::vector<orchestrator::PolicyInput> seen;  // only rank 0's policy decides
  std::mutex mutex;
  std::vector<std::vector<Split>> splitsByRank(3);
  testing::runRanks(3, [&](comm::Communicator& comm) {
    orchestrator::OrchestratorOptions options;
    options.rebalanceEvery = 4;
    options.flopsPerSample = 1e6;
    options.globalBatch = 30;
    options.memoryPerSampleBytes = 1e6;
    options.runDir = dir.path();
    auto sampler = [&comm] {
      orchestrator::NodeSample s;
      s.residentBytes = 1e6 * (comm.rank() + 1);
      s.memoryAvailableBytes = 1e8;
      s.latencyMs = std::vector<double>(3, 0.5);
      return s;
    };
    orchestrator::Orchestrator orch(std::make_unique<ScriptedPolicy>(&seen), Split{{10, 10, 10}}, comm, sampler,
                                    options);
    for (int64_t step = 0; step < 9; ++step) {
      Split s = orch.splitFor(step);
      metrics::StepRecord r;
      r.step = step;
      r.rank = comm.rank();
      r.batch = s.batches[comm.rank()];
      r.computeMs = 10.0 * (comm.rank() + 1);  // rank 2 is the slowest
      r.syncMs = 30.0 - 10.0 * comm.rank();    // and waits least
      orch.observe(r);
      std::lock_guard<std::mutex> lock(mutex);
      splitsByRank[comm.rank()].push_back(s);
    }
  });
  for (int r = 1; r < 3; ++r)
    for (size_t s = 0; s < splitsByRank[0].size(); ++s)
      EXPECT_EQ(splitsByRank[r][s], splitsByRank[0][s]) << "step " << s;
  EXPECT_EQ(splitsByRank[0][3].batches, (std::vector<int64_t>{10, 10, 10}));
  EXPECT_EQ(splitsByRank[0][4].batches, (std::vector<int64_t>{10, 10, 11}));  // decided at step 4
  EXPECT_EQ(splitsByRank[0][8].batches, (std::vector<int64_t>{10, 10, 12}));  // and again at step 8

  ASSERT_EQ(seen.size(), 2u);
  const auto& first = seen[0];
  EXPECT_EQ(first.step, 4);
  EXPECT_EQ(seen[1].globalBatch, 30);  // the nominal B, though the split in force sums to 31
  EXPECT_EQ(seen[1].current.total(), 31);
  ASSERT_EQ(first.nodes.size(), 3u);
  EXPECT_DOUBLE_EQ(first.nodes[2].computeMs, 30.0);
  EXPECT_EQ(first.nodes[2].recent.size(), 3u);    // steps 1-3: step 0 (warm-up) is not a measurement
  EXPECT_DOUBLE_EQ(first.nodes[0].waitMs, 20.0);  // 30 ms in the sync vs the least, rank 2's 10 ms
  EXPECT_DOUBLE_EQ(first.nodes[2].waitMs, 0.0);
  EXPECT_DOUBLE_EQ(first.nodes[1].memoryUsedBytes, 2e6);
  EXPECT_DOUBLE_EQ(first.nodes[0].opsPerSecond, 3 * 1e6 * 10 / 0.010);  // 3 x FLOPs x samples / s
  EXPECT_EQ(first.nodes[1].latencyMs, std::vector<double>(3, 0.5));
  EXPECT_EQ(first.nodes[0].maxBatch, 10 + 80);  // the batch in force + 0.8 x 100 MB available / 1 MB per sample

  std::ifstream log(dir.file("splits.csv"));
  std::string line;
  int rows = 0;
  while (std::getline(log, line)) ++rows;
  EXPECT_EQ(rows, 1 + 3 * 3);  // header, the initial split and two decisions, one row per rank
}

// --rebalance-budget: the first decision has no cost measured yet; from the second on, a budget no
// rebalance can meet widens the period on every rank at once (decisions at 2 and 4, then none until 640).
TEST(Orchestrator, ABudgetWidensThePeriodOnEveryRank) {
  for (double budget : {0.0, 1e-9}) {
    std::vector<orchestrator::PolicyInput> seen;
    std::mutex mutex;
    std::vector<std::vector<Split>> splitsByRank(3);
    testing::runRanks(3, [&](comm::Communicator& comm) {
      orchestrator::OrchestratorOptions options;
      options.rebalanceEvery = 2;
      options.globalBatch = 30;
      options.rebalanceBudget = budget;
      orchestrator::Orchestrator orch(std::make_unique<ScriptedPolicy>(&seen), Split{{10, 10, 10}}, comm, nullptr,
                                      options);
      auto splits = runSteps(orch, comm.rank(), 0, 9, 5);
      std::lock_guard<std::mutex> lock(mutex);
      splitsByRank[comm.rank()] = std::move(splits);
    });
    ASSERT_EQ(seen.size(), budget > 0 ? 2u : 4u) << budget;  // steps 2, 4 (, 6, 8)
    for (int r = 1; r < 3; ++r) EXPECT_EQ(splitsByRank[r], splitsByRank[0]) << budget;
  }
}

// A run resumed at a step where a decision falls has measured nothing yet: the split of the checkpoint stays
// until the next decision, which sees the resumed steps (before, the policy decided on an empty window and
// fell back to its prior, the equal split).
TEST(Orchestrator, AResumeOnADecisionStepKeepsTheSplitUntilStepsAreMeasured) {
  std::vector<orchestrator::PolicyInput> seen;
  std::vector<std::string> saved(2);
  std::vector<std::vector<Split>> resumedSplits(2);
  orchestrator::OrchestratorOptions options;
  options.rebalanceEvery = 2;
  options.globalBatch = 20;
  testing::runRanks(2, [&](comm::Communicator& comm) {
    orchestrator::Orchestrator orch(std::make_unique<ScriptedPolicy>(&seen), Split{{10, 10}}, comm, nullptr, options);
    runSteps(orch, comm.rank(), 0, 4,
             5);  // decides at 2: {10, 11}; the checkpoint after step 3, whose next step decides
    saved[comm.rank()] = orch.saveState();
  });
  ASSERT_EQ(seen.size(), 1u);
  testing::runRanks(2, [&](comm::Communicator& comm) {
    orchestrator::Orchestrator orch(std::make_unique<ScriptedPolicy>(&seen), Split{{10, 10}}, comm, nullptr, options);
    orch.loadState(saved[comm.rank()]);
    resumedSplits[comm.rank()] = runSteps(orch, comm.rank(), 4, 7, 5);
  });
  ASSERT_EQ(seen.size(), 2u);  // not at step 4, with nothing measured; at step 6
  EXPECT_EQ(seen[1].step, 6);
  EXPECT_EQ(seen[1].nodes[0].recent.size(), 2u);  // steps 4 and 5
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(resumedSplits[r][0].batches, (std::vector<int64_t>{10, 11})) << r;  // step 4: the checkpoint's
    EXPECT_EQ(resumedSplits[r][2].batches, (std::vector<int64_t>{10, 12})) << r;  // step 6: decided anew
  }
}

// --probe-peers 1: each rank's row carries (peer, latency) once, not a latency per rank, and the policy
// sees which peer each latency is to.
TEST(Orchestrator, ProbePeersTravelAsPairs) {
  std::vector<orchestrator::PolicyInput> seen;
  testing::runRanks(3, [&](comm::Communicator& comm) {
    orchestrator::OrchestratorOptions options;
    options.rebalanceEvery = 2;
    options.globalBatch = 30;
    options.probePeers = 1;
    auto sampler = [&comm] {
      orchestrator::NodeSample s;
      if (comm.rank() != 2) {  // rank 2 has measured nothing yet
        s.latencyPeers = {(comm.rank() + 1) % 3};
        s.latencyMs = {0.5 + comm.rank()};
      }
      return s;
    };
    orchestrator::Orchestrator orch(std::make_unique<ScriptedPolicy>(&seen), Split{{10, 10, 10}}, comm, sampler,
                                    options);
    for (int64_t step = 0; step < 3; ++step) {
      orch.splitFor(step);
      metrics::StepRecord r;
      r.step = step;
      r.batch = 10;
      r.computeMs = 5;
      orch.observe(r);
    }
  });
  ASSERT_EQ(seen.size(), 1u);
  const auto& nodes = seen[0].nodes;
  EXPECT_EQ(nodes[0].latencyPeers, std::vector<int>{1});
  EXPECT_EQ(nodes[0].latencyMs, std::vector<double>{0.5});
  EXPECT_EQ(nodes[1].latencyPeers, std::vector<int>{2});
  EXPECT_EQ(nodes[1].latencyMs, std::vector<double>{1.5});
  EXPECT_TRUE(nodes[2].latencyPeers.empty());
  EXPECT_TRUE(nodes[2].latencyMs.empty());
}

}  // namespace
}  // namespace balancenet
