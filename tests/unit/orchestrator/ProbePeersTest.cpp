// probePeers / probePairs: ring neighbours first, distinct seeded peers, all pairs when k covers everyone.
#include <gtest/gtest.h>

#include <set>

#include "balancenet/orchestrator/ProbePeers.h"

namespace balancenet::orchestrator {
namespace {

TEST(ProbePeers, RingNeighboursThenDistinctRandomPeers) {
  for (int rank : {0, 7, 4095}) {
    const auto peers = probePeers(rank, 4096, 8, 3);
    ASSERT_EQ(peers.size(), 8u);
    EXPECT_EQ(peers[0], (rank + 1) % 4096);
    EXPECT_EQ(peers[1], (rank + 4095) % 4096);
    std::set<int> distinct(peers.begin(), peers.end());
    EXPECT_EQ(distinct.size(), 8u);
    EXPECT_EQ(distinct.count(rank), 0u);
    for (int p : peers) EXPECT_TRUE(p >= 0 && p < 4096);
    EXPECT_EQ(peers, probePeers(rank, 4096, 8, 3));  // a pure function: every rank computes the same
  }
  EXPECT_NE(probePeers(0, 4096, 8, 3), probePeers(0, 4096, 8, 4));
}

TEST(ProbePeers, KCoveringEveryoneIsAllPairs) {
  EXPECT_EQ(probePeers(1, 4, 0), (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(probePeers(1, 4, 3), (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(probePeers(1, 4, 9), (std::vector<int>{0, 2, 3}));
  EXPECT_TRUE(probePeers(0, 1, 8).empty());
  EXPECT_EQ(probePairs(4, 0).size(), 6u);
}

TEST(ProbePeers, PairsAreLinearInN) {
  const auto pairs = probePairs(4096, 8, 1);
  EXPECT_LE(pairs.size(), 4096u * 8);
  EXPECT_GE(pairs.size(), 4096u * 4);  // each pair counted once, even when both ends chose it
  for (const auto& [a, b] : pairs) ASSERT_LT(a, b);
}

// What a rank hands comm::probeLinks: the round's pairs (the same on every rank) and its own peers.
TEST(ProbePeers, SelectionIsThePairsAndThisRanksPeers) {
  EXPECT_FALSE(probeSelection(2, 16, 0, 5).has_value());  // all pairs: probeLinks' default
  for (int rank : {0, 9}) {
    const auto s = probeSelection(rank, 16, 3, 5);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->pairs, probePairs(16, 3, 5));
    EXPECT_EQ(s->peers, probePeers(rank, 16, 3, 5));
  }
  EXPECT_EQ(probeSelection(1, 4, 9)->peers, (std::vector<int>{0, 2, 3}));  // k >= N-1 keeps the peers' form
}

}  // namespace
}  // namespace balancenet::orchestrator
