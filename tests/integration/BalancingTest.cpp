// The orchestrator end to end: real processes, an emulated straggler, the split following it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "BinaryFixture.h"
#include "balancenet/report/RunResults.h"

namespace balancenet::testing {
namespace {

class Balancing : public BinaryFixture {};

TEST_F(Balancing, SlowNodeGetsItsShareAfterWarmup) {
  // Node 1 computes 3x slower: the time-balancing split gives it about 1/4 of the batch.
  auto r = train({"--nodes", "2", "--model", "cnn", "--width", "0.5", "--dropout", "0", "--global-batch", "64",
                  "--steps", "60", "--slowdown", "1,3", "--policy", "balanced", "--rebalance-every", "5"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  auto run = report::loadRun(dir_.file("run"));
  ASSERT_GE(run.splits.size(), 5u) << "expected a decision every 5 steps";
  EXPECT_EQ(run.splits.front().batches, (std::vector<int64_t>{32, 32}));  // the initial equal split
  // After warm-up (step 20 on), the median decision, so one decision taken during a burst of CPU
  // contention (from outside the test suite: ctest runs these tests alone) does not decide the outcome.
  std::vector<double> shares;
  for (const auto& decision : run.splits) {
    EXPECT_EQ(decision.batches[0] + decision.batches[1], 64);
    if (decision.step >= 20) shares.push_back(decision.batches[1] / 64.0);
  }
  ASSERT_GE(shares.size(), 5u);
  std::sort(shares.begin(), shares.end());
  const double median = shares[shares.size() / 2];
  EXPECT_GE(median, 0.15);
  EXPECT_LE(median, 0.35);
}

TEST_F(Balancing, BnoReportsItsEffectiveGlobalBatch) {
  auto r = train({"--nodes", "2", "--model", "mlp", "--global-batch", "64", "--steps", "12", "--policy", "bno",
                  "--rebalance-every", "5"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  auto run = report::loadRun(dir_.file("run"));
  ASSERT_GE(run.splits.size(), 2u);
  EXPECT_TRUE(run.summary.contains("effective_global_batch"));
  EXPECT_GT(run.summary["effective_global_batch"].get<double>(), 0);
}

TEST_F(Balancing, CompareWritesTablesAndCharts) {
  auto r = run({"compare", "--models", "mlp", "--policies", "equal,balanced", "--steps", "20", "--out",
                dir_.file("cmp"), "--nodes", "2", "--slowdown", "1,3", "--global-batch", "32", "--data-dir", dataDir_,
                "--threads", "1"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("balanced"), std::string::npos) << r.output;
  std::ifstream csv(dir_.file("cmp/compare.csv"));
  std::string line;
  int lines = 0;
  while (std::getline(csv, line)) ++lines;
  EXPECT_EQ(lines, 3);  // header + 2 runs
  EXPECT_TRUE(std::filesystem::exists(dir_.file("cmp/update_time_mlp.png")));
  EXPECT_TRUE(std::filesystem::exists(dir_.file("cmp/split_mlp_balanced.png")));
}

}  // namespace
}  // namespace balancenet::testing
