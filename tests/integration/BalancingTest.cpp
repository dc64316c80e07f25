// The orchestrator end to end: real processes, an emulated straggler, the split following it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "BinaryFixture.h"
#include "balancenet/core/Median.h"
#include "balancenet/report/RunResults.h"

namespace balancenet::testing {
namespace {

class Balancing : public BinaryFixture {};

// steps.csv's compute_ms per step, in rank order.
std::map<int64_t, std::vector<double>> computeMsByStep(const std::string& stepsCsv) {
  const auto rows = report::readCsv(stepsCsv);
  const int step = report::column(rows[0], "step", stepsCsv), rank = report::column(rows[0], "rank", stepsCsv),
            compute = report::column(rows[0], "compute_ms", stepsCsv);
  std::map<int64_t, std::vector<double>> byStep;
  for (size_t i = 1; i < rows.size(); ++i) {
    auto& row = byStep[std::stoll(rows[i][step])];
    const size_t r = std::stoul(rows[i][rank]);
    row.resize(std::max(row.size(), r + 1));
    row[r] = std::stod(rows[i][compute]);
  }
  return byStep;
}

TEST_F(Balancing, SlowNodeGetsItsShareAfterWarmup) {
  // Node 1 computes 3x slower: the time-balancing split gives it less of the batch, until both take
  // about the same time. How much less is not fixed: the emulated slowdown multiplies the compute time
  // as measured, and CPU contention from outside the test (a busy machine) stretches the slow node's
  // compute more than the fast node's (seen with the CPU busy: 1 to 9 of 64 samples, not 16). What the policy promises
  // is equal step times, so that is what the test holds it to.
  auto r = train({"--nodes", "2", "--model", "cnn", "--width", "0.5", "--dropout", "0", "--global-batch", "64",
                  "--steps", "60", "--slowdown", "1,3", "--policy", "balanced", "--rebalance-every", "5"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  auto run = report::loadRun(dir_.file("run"));
  ASSERT_GE(run.splits.size(), 5u) << "expected a decision every 5 steps";
  EXPECT_EQ(run.splits.front().batches, (std::vector<int64_t>{32, 32}));  // the initial equal split
  // After warm-up (step 20 on), medians, so that one burst of contention does not decide the outcome.
  std::vector<double> shares;
  for (const auto& decision : run.splits) {
    EXPECT_EQ(decision.batches[0] + decision.batches[1], 64);
    if (decision.step >= 20) shares.push_back(decision.batches[1] / 64.0);
  }
  ASSERT_GE(shares.size(), 5u);
  EXPECT_LE(median(shares), 0.4) << "the 3x slower node should get clearly less than half";
  // Equal split: the slow node's compute takes about 3x the fast one's. Balanced: about the same.
  const auto computeMs = computeMsByStep(dir_.file("run/steps.csv"));
  std::vector<double> ratios;
  for (const auto& [step, ms] : computeMs)
    if (step >= 20 && ms.size() == 2 && ms[0] > 0) ratios.push_back(ms[1] / ms[0]);
  ASSERT_GE(ratios.size(), 20u);
  const double ratio = median(ratios);
  EXPECT_GE(ratio, 0.5) << "slow node's compute time / fast node's, median after warm-up";
  EXPECT_LE(ratio, 1.8) << "slow node's compute time / fast node's, median after warm-up";
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
  auto r =
      run({"compare", "--models", "mlp", "--policies", "equal,balanced", "--steps", "20", "--out", dir_.file("cmp"),
           "--nodes", "2", "--slowdown", "1,3", "--global-batch", "32", "--data-dir", dataDir_, "--threads", "1"});
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
