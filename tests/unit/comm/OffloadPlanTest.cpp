// Which ranks leave the ring, and to whom: a pure function of the split, so every rank agrees.
#include <gtest/gtest.h>

#include "balancenet/comm/OffloadPlan.h"

namespace balancenet::comm {
namespace {

using Ranks = std::vector<int>;

TEST(OffloadPlan, EvenSplitKeepsEveryoneInTheRing) {
  const auto plan = planOffload({32, 32, 32, 32});
  EXPECT_FALSE(plan.offloads());
  EXPECT_EQ(plan.ring, (Ranks{0, 1, 2, 3}));
  EXPECT_EQ(plan.peerOf, (Ranks{-1, -1, -1, -1}));
}

TEST(OffloadPlan, TestbedSplitOffloadsTheCappedHostToTheFirstFastRank) {
  // Balanced's split for quotas 0.45,0.45,0.45,0.11 (global batch 128).
  const auto plan = planOffload({39, 39, 39, 11});
  EXPECT_TRUE(plan.offloads());
  EXPECT_EQ(plan.ring, (Ranks{0, 1, 2}));
  EXPECT_EQ(plan.peerOf, (Ranks{-1, -1, -1, 0}));
  EXPECT_EQ(plan.clientsOf(0), (Ranks{3}));
  EXPECT_TRUE(plan.clientsOf(1).empty());
}

TEST(OffloadPlan, ThresholdIsStrictlyBelowTheFractionOfTheLargest) {
  EXPECT_FALSE(planOffload({40, 20}, 0.5).offloads());  // exactly half stays
  EXPECT_EQ(planOffload({40, 19}, 0.5).peerOf, (Ranks{-1, 0}));
  EXPECT_FALSE(planOffload({40, 19}, 0.4).offloads());
}

TEST(OffloadPlan, SlowRanksGoRoundRobinOverTheRing) {
  const auto plan = planOffload({20, 2, 18, 3, 1, 0});
  EXPECT_EQ(plan.ring, (Ranks{0, 2}));
  EXPECT_EQ(plan.peerOf, (Ranks{-1, 0, -1, 2, 0, 2}));
  EXPECT_EQ(plan.clientsOf(0), (Ranks{1, 4}));
  EXPECT_EQ(plan.clientsOf(2), (Ranks{3, 5}));
}

TEST(OffloadPlan, OneFastRankTakesEveryone) {
  const auto plan = planOffload({5, 1, 26});
  EXPECT_EQ(plan.ring, (Ranks{2}));
  EXPECT_EQ(plan.peerOf, (Ranks{2, 2, -1}));
}

// A rank with a share of 0 (left out by the balanced policy) is a client that sends nothing, even with offloading off:
// its zero gradient has nothing to add, and its peer must not wait for one.
TEST(OffloadPlan, ARankWithNoShareIsALeftOutClientWhateverTheThreshold) {
  for (double below : {0.5, 0.0}) {
    const auto plan = planOffload({43, 43, 42, 0}, below);
    EXPECT_EQ(plan.ring, (Ranks{0, 1, 2})) << below;
    EXPECT_EQ(plan.peerOf, (Ranks{-1, -1, -1, 0})) << below;
    EXPECT_EQ(plan.leftOut, (std::vector<bool>{false, false, false, true})) << below;
    EXPECT_EQ(plan.clientsOf(0), (Ranks{3})) << below;
    EXPECT_TRUE(plan.sendersTo(0).empty()) << below;
  }
  // Beside an offloaded client with a share: both get the sum back, only one sends.
  const auto plan = planOffload({60, 60, 8, 0});
  EXPECT_EQ(plan.clientsOf(0), (Ranks{2}));
  EXPECT_EQ(plan.clientsOf(1), (Ranks{3}));
  EXPECT_EQ(plan.sendersTo(0), (Ranks{2}));
  EXPECT_TRUE(plan.sendersTo(1).empty());
}

TEST(OffloadPlan, DisabledOrDegenerateSplitsNeverOffload) {
  EXPECT_FALSE(planOffload({40, 1}, 0).offloads());
  EXPECT_FALSE(planOffload({7}).offloads());
  EXPECT_FALSE(planOffload({}).offloads());
  // A fraction above 1 would make the largest rank slow too; it is taken as 1, so the ring stays non-empty.
  EXPECT_EQ(planOffload({40, 40, 39}, 3.0).ring, (Ranks{0, 1}));
}

}  // namespace
}  // namespace balancenet::comm
