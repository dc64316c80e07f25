// The simple policies (equal, static, random, proportional), apportionment, the registry, and what every
// policy guarantees: N entries, each >= 1, summing to B (BNO without normalisation excepted).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "PolicyTestSupport.h"
#include "balancenet/core/Error.h"
#include "balancenet/orchestrator/policies/EqualPolicy.h"
#include "balancenet/orchestrator/policies/PolicyRegistry.h"
#include "balancenet/orchestrator/policies/PolicySupport.h"
#include "balancenet/orchestrator/policies/ProportionalPolicy.h"
#include "balancenet/orchestrator/policies/RandomPolicy.h"
#include "balancenet/orchestrator/policies/StaticPolicy.h"

namespace balancenet::orchestrator {
namespace {

using testing::blankInput;
using testing::observe;
using V = std::vector<int64_t>;

TEST(Apportion, LargestRemainderWithTiesToTheLowerIndex) {
  // Quotas 39.38 x3 and 9.85: floors 39,39,39,9 (126); the two left go to .85, then the first .38.
  EXPECT_EQ(apportion({100, 100, 100, 25}, 128).sizes, (V{40, 39, 39, 10}));
  EXPECT_EQ(apportion({1, 1, 1}, 10).sizes, (V{4, 3, 3}));
}

TEST(Apportion, PinsTinySharesToOneAndCapsAndReSharesTheRest) {
  EXPECT_EQ(apportion({1000, 1, 1}, 10).sizes, (V{8, 1, 1}));
  // Node 0 capped at 30: 98 left over 100,100,25 -> 43.56, 43.56, 10.89 -> 44, 43, 11.
  EXPECT_EQ(apportion({100, 100, 100, 25}, 128, {30, 0, 0, 0}).sizes, (V{30, 44, 43, 11}));
  const auto infeasible = apportion({100, 100, 100, 25}, 128, {20, 20, 20, 20});
  EXPECT_TRUE(infeasible.capsInfeasible);
  // 48 beyond the caps: 14.77 x3 and 3.69 -> 15, 15, 15, 3.
  EXPECT_EQ(infeasible.sizes, (V{35, 35, 35, 23}));
}

TEST(Apportion, UnusableWeightsCountAsEqual) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(apportion({0, 0, 0, 0}, 10).sizes, (V{3, 3, 2, 2}));
  EXPECT_EQ(apportion({nan, -1, 0}, 9).sizes, (V{3, 3, 3}));
}

// At scale (issue 19): 4,096 nodes, B = 65,536, 16 samples a node on average. Weights spread over six
// orders of magnitude put most quotas below 1: the sum stays exactly B, every node keeps its 1 sample,
// and the extremes of B (B = N, B = N + 1) leave no room for rounding errors.
TEST(Apportion, ExactAtFourThousandNodesWithSharesBelowOne) {
  std::vector<double> weights(4096);
  for (int i = 0; i < 4096; ++i) weights[i] = std::pow(10.0, 6.0 * i / 4095);  // 1 ... 1e6
  for (int64_t total : {int64_t{4096}, int64_t{4097}, int64_t{65536}, int64_t{65537}}) {
    const auto sizes = apportion(weights, total).sizes;
    int64_t sum = 0, least = total;
    for (int64_t s : sizes) sum += s, least = std::min(least, s);
    EXPECT_EQ(sum, total) << total;
    EXPECT_EQ(least, 1) << total;
    EXPECT_GE(sizes.back(), sizes.front()) << total;
  }
  EXPECT_EQ(apportion(weights, 4097).sizes.back(), 2);  // the one extra sample goes to the largest weight
}

TEST(WorldSize, RejectsABatchSmallerThanTheNodes) {
  EXPECT_THROW(worldSizeOf(blankInput(4, 3)), UsageError);
  EXPECT_EQ(worldSizeOf(blankInput(4, 4)), 4);
}

TEST(EqualPolicy, IsSplitEqual) {
  EqualPolicy policy;
  EXPECT_EQ(policy.decide(blankInput(4, 10)).split.batches, (V{3, 3, 2, 2}));
  auto in = blankInput(3, 128);
  observe(in, [](int r, int64_t b) { return (r + 1) * 1.0 * b; });  // measurements change nothing
  EXPECT_EQ(policy.decide(in).split, Split::equal(128, 3));
}

TEST(StaticPolicy, ReturnsItsSplitChecksItAgainstTheJobAndScalesItToAnotherB) {
  StaticPolicy policy(Split{{100, 100, 40, 16}});
  EXPECT_EQ(policy.decide(blankInput(4, 256)).split.batches, (V{100, 100, 40, 16}));
  // The launcher checks --split against the job (Split::parse); here a mismatch of N is a bug, not bad input.
  EXPECT_THROW(policy.decide(blankInput(3, 256)), InternalError);
  // Another B (--global-batch auto or a schedule): the split's proportions, apportioned to it.
  EXPECT_EQ(policy.decide(blankInput(4, 128)).split.batches, (V{50, 50, 20, 8}));
  EXPECT_EQ(policy.decide(blankInput(4, 200)).split.total(), 200);
}

TEST(RandomPolicy, IsReproducibleValidAndDiffersBetweenSteps) {
  RandomPolicy a(7), b(7), other(8);
  for (int64_t step = 0; step < 50; step += 5) {
    const Split s = a.decide(blankInput(4, 128, step)).split;
    EXPECT_EQ(s, b.decide(blankInput(4, 128, step)).split) << "same seed and step";
    ASSERT_EQ(s.worldSize(), 4);
    EXPECT_EQ(s.total(), 128);
    for (int64_t v : s.batches) EXPECT_GE(v, 1);
    EXPECT_FALSE(s == a.decide(blankInput(4, 128, step + 5)).split) << "step " << step;
    EXPECT_FALSE(s == other.decide(blankInput(4, 128, step)).split) << "seed";
  }
  EXPECT_EQ(a.decide(blankInput(4, 4)).split.batches, (V{1, 1, 1, 1}));
  EXPECT_EQ(a.decide(blankInput(1, 9)).split.batches, (V{9}));
}

TEST(RandomPolicy, SpreadsOverManySplits) {
  RandomPolicy policy(1);
  int64_t smallest = 128, largest = 0;
  for (int64_t step = 0; step < 200; ++step) {
    const auto s = policy.decide(blankInput(2, 128, step)).split;
    smallest = std::min(smallest, s.batches[0]);
    largest = std::max(largest, s.batches[0]);
  }
  EXPECT_LT(smallest, 20);
  EXPECT_GT(largest, 108);
}

TEST(ProportionalPolicy, SplitsByMeasuredSpeedWithLargestRemainder) {
  ProportionalPolicy policy;
  auto in = blankInput(4, 128);
  const double speed[] = {100, 100, 100, 25};  // samples per ms
  observe(in, [&](int r, int64_t b) { return static_cast<double>(b) / speed[r]; });
  // 128 * 100/325 = 39.38 (x3), 128 * 25/325 = 9.85: floors 39,39,39,9; remainders .85 then .38 (rank 0).
  EXPECT_EQ(policy.decide(in).split.batches, (V{40, 39, 39, 10}));
  in.nodes[0].maxBatch = 30;  // 98 left over 100,100,25: 43.56, 43.56, 10.89
  EXPECT_EQ(policy.decide(in).split.batches, (V{30, 44, 43, 11}));
  for (auto& node : in.nodes) node.maxBatch = 20;
  const Decision capped = policy.decide(in);
  EXPECT_EQ(capped.split.batches, (V{35, 35, 35, 23}));
  EXPECT_NE(capped.note.find("caps"), std::string::npos) << capped.note;
}

TEST(ProportionalPolicy, FallsBackToOpsThenEqual) {
  ProportionalPolicy policy;
  auto in = blankInput(2, 100);
  in.nodes[0].opsPerSecond = 1e9;
  in.nodes[1].opsPerSecond = 3e9;
  EXPECT_EQ(policy.decide(in).split.batches, (V{25, 75}));
  in.nodes[1].opsPerSecond = 0;
  EXPECT_EQ(policy.decide(in).split.batches, (V{50, 50}));
  // One measured node out of two is not enough to compare speeds: ops decide.
  in.nodes[1].opsPerSecond = 3e9;
  in.nodes[0].batch = 50;
  in.nodes[0].computeMs = 1;
  EXPECT_EQ(policy.decide(in).split.batches, (V{25, 75}));
  EXPECT_DOUBLE_EQ(ProportionalPolicy::measuredSpeed(in.nodes[0]), 50.0);
}

TEST(PolicyRegistry, BuildsEveryNamedPolicy) {
  EXPECT_EQ(policyNames(), (std::vector<std::string>{"equal", "random", "static", "bno", "proportional", "balanced"}));
  for (const auto& name : policyNames()) {
    PolicyOptions options;
    options.name = name;
    options.staticSplit = Split{{1, 2}};
    EXPECT_EQ(makePolicy(options)->name(), name);
  }
  EXPECT_EQ(PolicyOptions{}.name, "balanced");
}

TEST(PolicyRegistry, RejectsUnknownNamesAndStaticWithoutSplit) {
  PolicyOptions options;
  options.name = "fastest";
  try {
    makePolicy(options);
    FAIL() << "accepted --policy fastest";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "unknown --policy 'fastest'; choose one of: equal, random, static, bno, proportional, balanced");
  }
  options.name = "static";
  EXPECT_THROW(makePolicy(options), UsageError);
  options.name = "balanced";
  options.balanced.smoothing = 0;
  EXPECT_THROW(makePolicy(options), UsageError);
}

// Inputs from plain to hostile: every policy must still give N entries >= 1 (and sum to B, except raw BNO).
std::vector<PolicyInput> variedInputs() {
  std::vector<PolicyInput> inputs;
  inputs.push_back(blankInput(4, 128));
  auto measured = blankInput(4, 128);
  observe(measured, [](int r, int64_t b) { return 2 + (r == 3 ? 4.0 : 1.0) * b; });
  for (int i = 0; i < 4; ++i) {
    measured.nodes[i].opsPerSecond = 1e9 * (i + 1);
    measured.nodes[i].memoryUsedBytes = 1e8 * (4 - i);
    measured.nodes[i].latencyMs = {1.0 * i, 2, 3, 0};
    measured.nodes[i].latencyMs[i] = 0;
  }
  inputs.push_back(measured);
  auto hostile = measured;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  hostile.nodes[0].computeMs = nan;
  hostile.nodes[0].recent = {{32, nan}, {32, -1}, {0, 5}};
  hostile.nodes[1].opsPerSecond = -5;
  hostile.nodes[2].memoryUsedBytes = std::numeric_limits<double>::infinity();
  hostile.nodes[3].latencyMs = {nan};
  hostile.nodes[3].maxBatch = 2;
  inputs.push_back(hostile);
  auto tight = blankInput(5, 5);  // B == N: everyone exactly 1
  inputs.push_back(tight);
  auto single = blankInput(1, 64);
  observe(single, [](int, int64_t b) { return 1.0 * b; });
  inputs.push_back(single);
  return inputs;
}

TEST(EveryPolicy, ReturnsNEntriesOfAtLeastOne) {
  for (bool normalize : {false, true}) {
    for (const auto& name : policyNames()) {
      PolicyOptions options;
      options.name = name;
      options.bnoNormalize = normalize;
      int index = 0;
      for (const PolicyInput& in : variedInputs()) {
        options.staticSplit = in.current;
        auto policy = makePolicy(options);
        for (int repeat = 0; repeat < 3; ++repeat) {  // stateful policies: a second look at the same data
          const Decision d = policy->decide(in);
          SCOPED_TRACE(name + (normalize ? " normalised" : "") + " input " + std::to_string(index) + ": " + d.note);
          ASSERT_EQ(d.split.worldSize(), static_cast<int>(in.nodes.size()));
          for (int64_t v : d.split.batches) EXPECT_GE(v, 1);
          if (name != "bno" || normalize) {
            EXPECT_EQ(d.split.total(), in.globalBatch);
          }
          EXPECT_FALSE(d.note.empty());
        }
        ++index;
      }
    }
  }
}

}  // namespace
}  // namespace balancenet::orchestrator
