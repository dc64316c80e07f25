// Hosts of different sizes (issue 31): each host's launcher gives its own --nproc-per-node, under its own CPU quota.
// (host 0: 1.0 core, 2 workers; host 1: 0.2 core, 1 worker.) The ranks come out without gaps, each worker sizes its
// threads by its own host, the training equals one process, and the balanced policy gives the slow host's worker a
// smaller share.
#include <gtest/gtest.h>

#include <map>

#include <nlohmann/json.hpp>

#include "CsvRows.h"
#include "TestbedFixture.h"
#include "balancenet/core/Median.h"
#include "testing/FloatBound.h"
#include "testing/ReferenceTraining.h"

namespace balancenet::testing {
namespace {

using UnequalHosts = TestbedFixture;

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_F(UnequalHosts, TwoWorkersOnAFullCoreAndOneOnAFifthShareRanksThreadsAndTheBatch) {
  Testbed bed({"1.0", "0.2"});
  workersOnHost_ = {2, 1};
  defaultThreads_ = true;
  constexpr int kSteps = 20, kBatch = 240;
  // Compute-heavy enough for the quotas to show (see BalancingOnHostsTest), deterministic (no dropout).
  const std::vector<std::string> common{
      "--model", "cnn",  "--width",   "0.25", "--global-batch", std::to_string(kBatch),
      "--lr",    "0.02", "--dropout", "0",    "--steps",        std::to_string(kSteps)};
  auto multi = common;
  multi.insert(multi.end(), {"--policy", "balanced", "--log-level", "debug", "--save-params", dir_.file("multi.pt")});
  const auto hosts = trainOnHosts(bed, multi);
  for (int h = 0; h < bed.hosts(); ++h) {
    ASSERT_FALSE(hosts[h].timedOut) << "host " << h << " hung:\n" << hosts[h].output;
    ASSERT_EQ(hosts[h].exitCode, 0) << "host " << h << ":\n" << hosts[h].output;
  }
  // Ranks 0 and 1 on host 0 (local 0 and 1 of 2), rank 2 on host 1 (local 0 of 1): each exactly once.
  const std::string& h0 = hosts[0].output;
  const std::string& h1 = hosts[1].output;
  EXPECT_NE(h0.find("hosts: 3 workers (2,1 by node rank); this host runs ranks 0-1"), std::string::npos) << h0;
  EXPECT_NE(h1.find("hosts: 3 workers (2,1 by node rank); this host runs ranks 2-2"), std::string::npos) << h1;
  const std::map<std::string, const std::string*> identities{{"rank 0 of 3: local rank 0 of 2 on this host", &h0},
                                                             {"rank 1 of 3: local rank 1 of 2 on this host", &h0},
                                                             {"rank 2 of 3: local rank 0 of 1 on this host", &h1}};
  for (const auto& [line, output] : identities) {
    EXPECT_EQ(occurrences(h0 + h1, line), 1u) << line;
    EXPECT_EQ(occurrences(*output, line), 1u) << line;
  }
  EXPECT_EQ(h1.find("[rank 0]"), std::string::npos);
  EXPECT_EQ(h0.find("[rank 2]"), std::string::npos);
  // Each worker's threads: its own host's quota shared by its own host's workers.
  EXPECT_EQ(occurrences(h0, "(cgroup quota 1 cores in"), 2u) << h0;
  EXPECT_EQ(occurrences(h0, "shared by 2 local workers (LOCAL_WORLD_SIZE)"), 2u) << h0;
  EXPECT_NE(h1.find("threads: 1 per worker: 0.2 cores (cgroup quota 0.2 cores in"), std::string::npos) << h1;
  EXPECT_NE(h1.find("shared by 1 local worker (LOCAL_WORLD_SIZE)"), std::string::npos) << h1;
  expectEveryStepTrained(kSteps, kBatch, 3);

  // The balanced policy saw each worker as it is: host 1's worker (0.2 core) slower than host 0's (0.5 each).
  std::map<int, std::vector<double>> shares;  // by rank, steps after the first rebalances
  for (const auto& row : readCsvRows(runDir(0) + "/steps.csv"))
    if (std::stoi(row.at("step")) >= kSteps / 2)
      shares[std::stoi(row.at("rank"))].push_back(std::stod(row.at("batch")) / kBatch);
  const double fast = (median(shares[0]) + median(shares[1])) / 2, slow = median(shares[2]);
  std::printf(
      "median share in the second half: ranks 0,1 (host 0, 1.0 core / 2) %.3f, rank 2 (host 1, 0.2 core) %.3f\n", fast,
      slow);
  EXPECT_LT(slow, 0.85 * fast);

  // Exact: the parameters of one process training the whole global batch (the balanced split moves every few
  // steps; each step's samples stay the same).
  auto single = common;
  single.insert(single.end(), {"--nodes", "1", "--threads", "1", "--save-params", dir_.file("single.pt"), "--run-dir",
                               dir_.file("one")});
  const auto one = train(single);
  ASSERT_EQ(one.exitCode, 0) << one.output;
  const auto oneProcess = loadSavedParameters(dir_.file("single.pt"));
  const double diff = maxAbsDifference(loadSavedParameters(dir_.file("multi.pt")), oneProcess);
  // Three uneven shares summed in another order over 20 steps of a CNN (1.8e-5 measured).
  const double bound = exactnessBound(oneProcess, kSteps);
  std::printf("hosts of 2 and 1 workers (balanced) vs 1 process: max |param difference| = %.3g (float bound %.3g)\n",
              diff, bound);
  EXPECT_LT(diff, bound);
}

}  // namespace
}  // namespace balancenet::testing
