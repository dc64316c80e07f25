// BnoPolicy: equations (1)-(5) of the paper on hand-computed cases, normalisation and degenerate inputs.
#include <gtest/gtest.h>

#include <cmath>

#include "PolicyTestSupport.h"
#include "balancenet/orchestrator/policies/BnoPolicy.h"

namespace balancenet::orchestrator {
namespace {

using testing::blankInput;
using V = std::vector<int64_t>;

// Three nodes, B = 128.
//   OPS = 100, 300, 100          -> K  = 0.2, 0.6, 0.2                              (1)
//   MU  = 3, 1, 1                -> MW = 1-3/5, 1-1/5, 1-1/5 = 0.4, 0.8, 0.8        (2)
//   NL row 0 = [0, 10, 20]  max 20 -> NCW = 1, 0.5, 0    sum 1.5                     (4)
//   NL row 1 = [10, 0, 40]  max 40 -> NCW = 0.75, 1, 0   sum 1.75
//   NL row 2 = [20, 40, 0]  max 40 -> NCW = 0.5, 0, 1    sum 1.5
//   BS_0 = floor((0.2 + 0.4 + 1.5 ) / 3 * 128) = floor(0.7  * 128) = floor( 89.6 ) =  89  (5)
//   BS_1 = floor((0.6 + 0.8 + 1.75) / 3 * 128) = floor(1.05 * 128) = floor(134.4 ) = 134
//   BS_2 = floor((0.2 + 0.8 + 1.5 ) / 3 * 128) = floor(5/6  * 128) = floor(106.67) = 106
//   effective global batch 89 + 134 + 106 = 329.
PolicyInput paperCase() {
  auto in = blankInput(3, 128);
  const double ops[] = {100, 300, 100}, mu[] = {3, 1, 1};
  const std::vector<std::vector<double>> nl = {{0, 10, 20}, {10, 0, 40}, {20, 40, 0}};
  for (int i = 0; i < 3; ++i) {
    in.nodes[i].opsPerSecond = ops[i];
    in.nodes[i].memoryUsedBytes = mu[i];
    in.nodes[i].latencyMs = nl[i];
  }
  return in;
}

TEST(BnoPolicy, FollowsEquationsOneToFive) {
  const auto f = BnoPolicy::fractions(paperCase());
  ASSERT_EQ(f.size(), 3u);
  EXPECT_NEAR(f[0], 0.7, 1e-12);
  EXPECT_NEAR(f[1], 1.05, 1e-12);  // the j = i term (NCW_ii = 1) is kept, as written
  EXPECT_NEAR(f[2], 2.5 / 3, 1e-12);
  BnoPolicy policy;
  const Decision d = policy.decide(paperCase());
  EXPECT_EQ(d.split.batches, (V{89, 134, 106}));
  EXPECT_NE(d.note.find("effective global batch 329"), std::string::npos) << d.note;
}

TEST(BnoPolicy, NormalisedSumsToB) {
  // Weights 89, 134, 106 (sum 329) over 128: 34.63, 52.13, 41.24 -> floors 34, 52, 41 (127), +1 to rank 0.
  BnoPolicy policy(true);
  const Decision d = policy.decide(paperCase());
  EXPECT_EQ(d.split.batches, (V{35, 52, 41}));
  EXPECT_EQ(d.split.total(), 128);
}

TEST(BnoPolicy, SingleNodeGetsTwoThirdsOfB) {
  // K = 1, MW = 1 - 1 = 0, NCW_11 = 1 (all latencies 0): floor(2/3 * 128) = 85.
  auto in = blankInput(1, 128);
  in.nodes[0].opsPerSecond = 5e9;
  in.nodes[0].memoryUsedBytes = 1e9;
  in.nodes[0].latencyMs = {0};
  EXPECT_EQ(BnoPolicy().decide(in).split.batches, (V{85}));
  EXPECT_EQ(BnoPolicy(true).decide(in).split.batches, (V{128}));
}

TEST(BnoPolicy, NothingMeasuredHasNoNaN) {
  // N = 3: K = 1/3, MW = 1 - 1/3, every NCW_ij = 1 (max latency 0) -> (1/3 + 2/3 + 3) / 3 * 30 = 40 exactly,
  // which binary rounding must not floor to 39.
  auto in = blankInput(3, 30);
  for (double f : BnoPolicy::fractions(in)) EXPECT_TRUE(std::isfinite(f));
  EXPECT_EQ(BnoPolicy().decide(in).split.batches, (V{40, 40, 40}));
  EXPECT_EQ(BnoPolicy(true).decide(in).split.batches, (V{10, 10, 10}));
  in.nodes.clear();  // no metrics at all: N from the current split
  EXPECT_EQ(BnoPolicy().decide(in).split.batches, (V{40, 40, 40}));
}

TEST(BnoPolicy, FloorsAtOneSample) {
  // B = 1 with one node: floor(2/3) = 0 -> max(0, 1) = 1.
  auto in = blankInput(1, 1);
  EXPECT_EQ(BnoPolicy().decide(in).split.batches, (V{1}));
}

TEST(BnoPolicy, ShortLatencyRowsCountMissingAsZero) {
  // Row 0 = [0, 10] on 3 nodes: NL_02 = 0 -> NCW = 1, 0, 1 (sum 2); rows 1, 2 all zero -> sum 3 each.
  auto in = blankInput(3, 60);
  in.nodes[0].latencyMs = {0, 10};
  const auto f = BnoPolicy::fractions(in);
  EXPECT_NEAR(f[0], (1.0 / 3 + 2.0 / 3 + 2) / 3, 1e-12);
  EXPECT_NEAR(f[1], (1.0 / 3 + 2.0 / 3 + 3) / 3, 1e-12);
  EXPECT_EQ(BnoPolicy().decide(in).split.batches, (V{60, 80, 80}));
}

}  // namespace
}  // namespace balancenet::orchestrator

namespace balancenet::orchestrator {
namespace {

// --probe-peers: latencies to sampled peers (NodeMetrics::latencyPeers). Sampling every other rank is
// the exact formula; a sample of uniform latencies estimates the sum exactly too (every NCW is 0 but the
// max's), and with a spread the estimate is 1 + (N-1) x the sampled mean.
TEST(BnoPolicy, SampledPeersEstimateTheSumOverJ) {
  auto exact = paperCase();
  auto sampled = paperCase();
  for (int i = 0; i < 3; ++i) {
    sampled.nodes[i].latencyPeers.clear();
    sampled.nodes[i].latencyMs.clear();
    for (int j = 0; j < 3; ++j) {
      if (j == i) continue;
      sampled.nodes[i].latencyPeers.push_back(j);
      sampled.nodes[i].latencyMs.push_back(exact.nodes[i].latencyMs[j]);
    }
  }
  const auto f = BnoPolicy::fractions(exact), g = BnoPolicy::fractions(sampled);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(f[i], g[i], 1e-12) << i;

  // 1,000 nodes; node 0 sampled ranks 1..4 at 10, 20, 30, 40 ms: NCW = 0.75, 0.5, 0.25, 0 (mean 0.375),
  // sum ~= 1 + 999 x 0.375 = 375.625.
  auto big = blankInput(1000, 100000);
  big.nodes[0].latencyPeers = {1, 2, 3, 4};
  big.nodes[0].latencyMs = {10, 20, 30, 40};
  const auto h = BnoPolicy::fractions(big);
  const double k = 1.0 / 1000, mw = 1.0 - 1.0 / 1000;  // nothing measured: equal K and MW
  EXPECT_NEAR(h[0], (k + mw + 375.625) / 3, 1e-9);
  EXPECT_NEAR(h[1], (k + mw + 1000) / 3, 1e-9);  // no peer measured: every NCW = 1, as with all latencies 0
}

}  // namespace
}  // namespace balancenet::orchestrator
