// Ranks over hosts of different sizes: prefix sums by node rank, no gaps; --nproc-per-node's list syntax.
#include "balancenet/job/HostLayout.h"

#include <gtest/gtest.h>

#include <set>

#include "balancenet/job/JobConfig.h"
#include "testing/UsageErrors.h"

namespace balancenet::job {
namespace {

using balancenet::testing::usageErrorOf;

TEST(HostLayout, RanksFollowNodeRanksWithoutGaps) {
  const auto layout = hostLayout({3, 1, 2});
  EXPECT_EQ(layout.world, 6);
  EXPECT_EQ(layout.firstRanks, (std::vector<int>{0, 3, 4}));
  std::multiset<int> ranks;
  for (int k = 0; k < 3; ++k)
    for (int local = 0; local < layout.workers[k]; ++local) {
      const int rank = layout.firstRanks[k] + local;
      ranks.insert(rank);
      EXPECT_EQ(layout.hostOf(rank), k) << rank;
    }
  EXPECT_EQ(ranks, (std::multiset<int>{0, 1, 2, 3, 4, 5}));  // each exactly once
  EXPECT_EQ(hostLayout({2}).firstRanks, (std::vector<int>{0}));
}

TEST(HostLayout, ACountBelowOneOrNoHostIsRefused) {
  EXPECT_NE(usageErrorOf([] {
              hostLayout({2, 0});
            }).find("host 1 must run at least 1 worker, got 0"),
            std::string::npos);
  EXPECT_NE(usageErrorOf([] { hostLayout({}); }).find("at least one host"), std::string::npos);
}

TEST(HostLayout, LaunchOptionsUseTheAgreedCounts) {
  LaunchOptions l;
  l.nnodes = 2;
  l.nodeRank = 1;
  l.nprocPerNode = 1;
  EXPECT_EQ(l.worldSize(), 2);  // not known yet: every host assumed alike
  EXPECT_EQ(l.firstRank(), 1);
  l.hostWorkers = {3, 1};
  EXPECT_EQ(l.worldSize(), 4);
  EXPECT_EQ(l.firstRank(), 3);
}

TEST(HostLayout, NprocPerNodeTakesOneCountOrOnePerHost) {
  EXPECT_EQ(parseWorkersPerHost("3"), (std::vector<int>{3}));
  EXPECT_EQ(parseWorkersPerHost("3,1,2"), (std::vector<int>{3, 1, 2}));
  EXPECT_EQ(workersPerHostText({3, 1, 2}), "3,1,2");
  for (const char* bad : {"0", "2,0", "", "two", "2,", ",2", " 2", "+2", "-1", "2;1", "99999999999"}) {
    const auto message = usageErrorOf([&] { parseWorkersPerHost(bad); });
    EXPECT_NE(message.find("--nproc-per-node must be"), std::string::npos) << bad << ": " << message;
    EXPECT_NE(message.find("got '" + std::string(bad) + "'"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace balancenet::job
