// BalancedPolicy: exact min-max optima (with and without fixed costs), caps, hysteresis under noise,
// quick reaction to a slowdown, and convergence in closed loop.
#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "PolicyTestSupport.h"
#include "balancenet/orchestrator/policies/BalancedPolicy.h"

namespace balancenet::orchestrator {
namespace {

using testing::blankInput;
using testing::bruteForceMinMax;
using testing::maxTime;
using testing::observe;
using V = std::vector<int64_t>;
using TimeFn = std::function<double(int, int64_t)>;

// Closed loop: the nodes run the split in force for a window, the policy decides the next one.
struct Loop {
  PolicyInput in;
  BalancedPolicy policy;
  TimeFn time;
  Decision next() {
    observe(in, time, 10);
    Decision d = policy.decide(in);
    in.current = d.split;
    in.step += 10;
    return d;
  }
};

// Uniform multiplicative noise in [1 - amplitude, 1 + amplitude] from mt19937_64's raw output.
TimeFn noisy(TimeFn exact, double amplitude, uint64_t seed) {
  auto rng = std::make_shared<std::mt19937_64>(seed);
  return [=](int r, int64_t b) {
    const double u = static_cast<double>((*rng)() >> 11) / 9007199254740992.0;  // [0, 1)
    return exact(r, b) * (1 + amplitude * (2 * u - 1));
  };
}

TEST(BalancedPolicy, GreedyIsTheExactMinMax) {
  // t = b, b, b, 4b over 128: T = 39 holds only 39*3 + 9 = 126 samples; T = 40 holds 130, so the optimum is 40.
  // The last two samples at t = 40 go to the lowest ranks among the tied (0, 1, 2 at b = 40, 3 at b = 10).
  EXPECT_EQ(BalancedPolicy::minimizeMaxTime({0, 0, 0, 0}, {1, 1, 1, 4}, 128, {}), (V{40, 40, 39, 9}));
  EXPECT_EQ(BalancedPolicy::minimizeMaxTime({0, 0}, {1, 1}, 2, {}), (V{1, 1}));
  EXPECT_EQ(BalancedPolicy::minimizeMaxTime({0, 0, 0, 0}, {1, 1, 1, 4}, 128, {20, 0, 0, 0}), (V{20, 48, 48, 12}));
}

// The definition minimizeMaxTime must match: from b = 1, one sample at a time to the node whose time after
// taking it is the least (ties to the lower rank). O(B log N): the implementation starts further on.
V oneSampleAtATime(const std::vector<double>& a, const std::vector<double>& c, int64_t total, const V& caps) {
  V b(a.size(), 1);
  auto room = [&](size_t i) { return caps.empty() || caps[i] <= 0 || b[i] < caps[i]; };
  for (int64_t given = static_cast<int64_t>(a.size()); given < total; ++given) {
    size_t best = a.size();
    for (size_t i = 0; i < a.size(); ++i)
      if (room(i) && (best == a.size() || a[i] + c[i] * (b[i] + 1.0) < a[best] + c[best] * (b[best] + 1.0))) best = i;
    if (best == a.size()) break;
    ++b[best];
  }
  return b;
}

TEST(BalancedPolicy, FastGreedyHandsOutTheSameSamplesAsOneAtATime) {
  std::mt19937_64 gen(19);
  std::uniform_real_distribution<double> cost(0.01, 2.0), fixed(0, 20);
  std::uniform_int_distribution<int> small(0, 3);
  for (int trial = 0; trial < 60; ++trial) {
    const bool large = trial >= 50;  // hundreds of nodes: the queue starts from a level, with few nodes in it
    const int n = large ? 50 * (trial - 48) : 1 + trial % 37;
    const int64_t total = n + static_cast<int64_t>(gen() % (large ? 8000 : 3000));
    std::vector<double> a(n), c(n);
    V caps;
    const bool ties = trial % 3 == 0;  // integer costs: many equal times, decided by rank
    for (int i = 0; i < n; ++i) {
      a[i] = ties ? small(gen) : fixed(gen);
      c[i] = ties ? 1 + small(gen) : cost(gen);
    }
    if (trial % 4 == 1) {
      caps.assign(n, 0);
      for (int i = 0; i < n; ++i) caps[i] = small(gen) == 0 ? 0 : 1 + static_cast<int64_t>(gen() % 200);
    }
    ASSERT_EQ(BalancedPolicy::minimizeMaxTime(a, c, total, caps), oneSampleAtATime(a, c, total, caps))
        << "trial " << trial << " n " << n << " total " << total;
  }
}

TEST(BalancedPolicy, ProportionalNodesGetTheExactOptimumInOneDecision) {
  const TimeFn time = [](int r, int64_t b) { return (r == 3 ? 4.0 : 1.0) * static_cast<double>(b); };
  auto in = blankInput(4, 128);
  observe(in, time);
  BalancedPolicy policy;
  const Decision d = policy.decide(in);
  EXPECT_EQ(d.split.batches, (V{40, 40, 39, 9})) << d.note;
  EXPECT_DOUBLE_EQ(maxTime(d.split.batches, time), 40.0);
  EXPECT_DOUBLE_EQ(bruteForceMinMax(4, 128, time), 40.0);
  EXPECT_NEAR(policy.models()[3].c(), 4.0, 1e-12);
  EXPECT_NEAR(policy.models()[3].a(), 0.0, 1e-12);  // one batch size seen, no fixed cost anywhere: a = 0
}

TEST(BalancedPolicy, FixedCostsFromTwoBatchSizes) {
  // t_0 = 20 + 0.5b, t_1 = b, t_2 = 5 + b; B = 120. At level T: b_0 <= 2(T - 20), b_1 <= T, b_2 <= T - 5.
  // T = 41 holds 42 + 41 + 36 = 119 < 120; T = 41.5 holds 43 + 41 + 36 = 120: the unique optimum.
  const double a[] = {20, 0, 5}, c[] = {0.5, 1, 1};
  const TimeFn time = [&](int r, int64_t b) { return a[r] + c[r] * static_cast<double>(b); };
  auto in = blankInput(3, 120);
  for (int r = 0; r < 3; ++r) {
    in.nodes[r].batch = 40;
    in.nodes[r].recent = {{20, time(r, 20)}, {40, time(r, 40)}, {20, time(r, 20)}, {40, time(r, 40)}};
  }
  BalancedPolicy policy;
  const Decision d = policy.decide(in);  // equal split: 45 ms predicted, optimum 41.5 (7.8% better)
  EXPECT_EQ(d.split.batches, (V{43, 41, 36})) << d.note;
  EXPECT_DOUBLE_EQ(bruteForceMinMax(3, 120, time), 41.5);
  EXPECT_NEAR(policy.models()[0].a(), 20.0, 1e-9);
  EXPECT_NEAR(policy.models()[0].c(), 0.5, 1e-12);
}

TEST(BalancedPolicy, LearnsAFixedCostInClosedLoopWithoutMistakingItForASlowdown) {
  // Node 0 is mostly fixed cost (40 + 0.1b), node 1 is proportional and slow (3b), B = 100. The first
  // decision assumes t = c*b and moves node 0 from 50 to ~77 samples, where it is 31% faster than that
  // model predicts; the refit over both batch sizes explains it, so no quick reaction may fire.
  const TimeFn time = [](int r, int64_t b) {
    return r == 0 ? 40 + 0.1 * static_cast<double>(b) : 3.0 * static_cast<double>(b);
  };
  Loop loop{blankInput(2, 100), BalancedPolicy{}, time};
  for (int k = 0; k < 8; ++k) {
    const Decision d = loop.next();
    EXPECT_EQ(d.note.find("refit"), std::string::npos) << "decision " << k << ": " << d.note;
  }
  const double optimum = bruteForceMinMax(2, 100, time);  // b_1 = 16: max(48.4, 48)
  EXPECT_DOUBLE_EQ(optimum, 48.4);
  EXPECT_LE(maxTime(loop.in.current.batches, time), optimum * 1.03) << loop.in.current.str();
}

TEST(BalancedPolicy, HonoursMemoryCaps) {
  const TimeFn time = [](int r, int64_t b) { return (r == 3 ? 4.0 : 1.0) * static_cast<double>(b); };
  auto in = blankInput(4, 128);
  observe(in, time);
  in.nodes[0].maxBatch = 20;
  // Level T with node 0 at 20: 20 + T + T + T/4 = 128 -> T = 48 exactly: 20, 48, 48, 12.
  const Decision d = BalancedPolicy().decide(in);
  EXPECT_EQ(d.split.batches, (V{20, 48, 48, 12})) << d.note;
  const TimeFn capped = [&](int r, int64_t b) { return r == 0 && b > 20 ? 1e9 : time(r, b); };
  EXPECT_DOUBLE_EQ(bruteForceMinMax(4, 128, capped), 48.0);
}

TEST(BalancedPolicy, InfeasibleCapsFillEveryNodeAndSaySo) {
  const TimeFn time = [](int r, int64_t b) { return (r == 3 ? 4.0 : 1.0) * static_cast<double>(b); };
  auto in = blankInput(4, 128);
  observe(in, time);
  for (auto& node : in.nodes) node.maxBatch = 20;
  const Decision d = BalancedPolicy().decide(in);
  // 48 beyond the caps, by speed 1, 1, 1, 1/4: 14.77 x3 and 3.69 -> 15, 15, 15, 3.
  EXPECT_EQ(d.split.batches, (V{35, 35, 35, 23}));
  EXPECT_NE(d.note.find("caps hold only 80 of B = 128"), std::string::npos) << d.note;
}

TEST(BalancedPolicy, HysteresisKeepsHomogeneousNodesStillUnderNoise) {
  const TimeFn exact = [](int, int64_t b) { return 5 + 1.0 * static_cast<double>(b); };
  // B = 4096: one sample is 0.1% of a node's time, so integer granularity alone cannot hide the noise.
  Loop loop{blankInput(4, 4096), BalancedPolicy{}, noisy(exact, 0.02, 42)};
  int kept = 0;
  for (int k = 0; k < 100; ++k) {
    const Decision d = loop.next();
    EXPECT_EQ(d.split, Split::equal(4096, 4)) << "decision " << k << ": " << d.note;
    kept += d.note.find("kept") != std::string::npos;
  }
  EXPECT_EQ(kept, 100);
  // Without hysteresis the same noise does move samples around: the threshold is what holds them still.
  BalancedOptions eager;
  eager.hysteresis = 0;
  eager.noiseMultiplier = 0;
  Loop jittery{blankInput(4, 4096), BalancedPolicy{eager}, noisy(exact, 0.02, 42)};
  int moves = 0;
  for (int k = 0; k < 100; ++k) moves += !(jittery.next().split == Split::equal(4096, 4));
  EXPECT_GT(moves, 0);
}

// The contended case seen on 2 cores with 4 workers: the first window of 5 steps, +-20% per step. A fixed
// 3% threshold lets one-sample moves through (each predicted to gain 3.1% at 32 samples per node); the
// noise-aware threshold holds the equal split. 20 independent first decisions each.
TEST(BalancedPolicy, NoisyHomogeneousNodesKeepTheirSplit) {
  auto movedTrials = [](BalancedOptions options) {
    int moved = 0;
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      BalancedPolicy policy(options);
      PolicyInput in = blankInput(4, 128, 5);
      observe(in, noisy([](int, int64_t b) { return 7.0 * static_cast<double>(b); }, 0.20, seed), 5);
      moved += !(policy.decide(in).split == Split::equal(128, 4));
    }
    return moved;
  };
  EXPECT_EQ(movedTrials(BalancedOptions{}), 0);
  BalancedOptions noiseBlind;
  noiseBlind.noiseMultiplier = 0;
  EXPECT_GT(movedTrials(noiseBlind), 0);
}

TEST(BalancedPolicy, MeasurementNoiseIsTheMedianStandardError) {
  PolicyInput in = blankInput(3, 30);
  observe(
      in, [](int r, int64_t) { return 10.0; }, 4);  // no spread at all
  EXPECT_DOUBLE_EQ(BalancedPolicy::measurementNoise(in), 0);
  in.nodes[1].recent = {{10, 9}, {10, 11}, {10, 9}, {10, 11}};  // mean 10, sd 1.1547, se 0.5774 -> 5.8%
  in.nodes[2].recent = {{10, 8}, {10, 12}, {10, 8}, {10, 12}};  // twice that
  EXPECT_NEAR(BalancedPolicy::measurementNoise(in), 0.057735, 1e-5);
}

TEST(BalancedPolicy, ReactsToAFourfoldSlowdownWithinTwoDecisions) {
  bool slowed = false;
  const TimeFn exact = [&](int r, int64_t b) {
    return (r == 2 && slowed ? 4.0 : 1.0) * (2 + 0.5 * static_cast<double>(b));
  };
  Loop loop{blankInput(4, 128), BalancedPolicy{}, noisy(exact, 0.02, 7)};
  for (int k = 0; k < 20; ++k) loop.next();  // a long, settled history
  ASSERT_EQ(loop.in.current, Split::equal(128, 4));
  slowed = true;
  const Decision first = loop.next();
  const Decision second = loop.next();
  EXPECT_NE(first.note.find("rank 2 refit"), std::string::npos) << first.note;
  // The optimum gives rank 2 about 10 of 128 (4(2 + 0.5b) = 2 + 0.5(128 - b)/3); within two decisions it
  // must be near that, not near its old 32.
  EXPECT_LE(second.split.batches[2], 14) << first.split.str() << " then " << second.split.str();
  EXPECT_GE(second.split.batches[2], 6);
  EXPECT_EQ(second.split.total(), 128);
  // And it stays there.
  for (int k = 0; k < 10; ++k) EXPECT_LE(loop.next().split.batches[2], 14);
}

// Seen on 2 homogeneous workers sharing 2 cores: one window where the whole machine was busy (rank 0
// 1.18x, rank 1 1.32x its model). Reacting to rank 1 alone moved the split to 70/58 and the noise
// threshold then kept it there for the rest of the run (rank 1 waiting 15% of every step). A slowdown
// that every node shows changes no node's relative speed: the split stays.
TEST(BalancedPolicy, AMachineWideSlowdownMovesNoSamples) {
  double burst[2] = {1.0, 1.0};
  const TimeFn exact = [&](int r, int64_t b) { return burst[r] * 4.7 * static_cast<double>(b); };
  Loop loop{blankInput(2, 128), BalancedPolicy{}, noisy(exact, 0.03, 11)};
  for (int k = 0; k < 10; ++k) loop.next();
  ASSERT_EQ(loop.in.current, Split::equal(128, 2));
  burst[0] = 1.18;
  burst[1] = 1.32;
  const Decision during = loop.next();
  EXPECT_EQ(during.note.find("refit"), std::string::npos) << during.note;
  burst[0] = burst[1] = 1.0;
  for (int k = 0; k < 10; ++k) {
    const Decision d = loop.next();
    EXPECT_EQ(d.split, Split::equal(128, 2)) << "decision " << k << " after the busy window: " << d.note;
  }
}

TEST(BalancedPolicy, RecoversWhenTheSlowNodeSpeedsUpAgain) {
  bool slowed = true;
  const TimeFn exact = [&](int r, int64_t b) { return (r == 0 && slowed ? 4.0 : 1.0) * static_cast<double>(b); };
  Loop loop{blankInput(2, 100), BalancedPolicy{}, exact};
  for (int k = 0; k < 5; ++k) loop.next();
  EXPECT_EQ(loop.in.current.batches, (V{20, 80}));
  slowed = false;
  loop.next();
  loop.next();
  EXPECT_EQ(loop.in.current.batches, (V{50, 50}));
}

// Issue 55, T1's measured shape: three hosts at 2.4 ms a sample with 2 ms of their own work a step (optimizer,
// packing), a 0.11-core host at 15 ms a sample whose hand-over and optimizer take 60 ms whatever its share. Its
// own work is a fixed cost its share must make room for (the min-max with it, checked against every split); when
// the host gets its CPU back, so do its samples.
TEST(BalancedPolicy, AHostsOwnWorkIsAFixedCostItsShareMakesRoomForAndGivesBackWhenItShrinks) {
  bool throttled = true;
  const auto perSample = [&](int r) { return r == 3 && throttled ? 15.0 : 2.4; };
  const auto own = [&](int r) { return r == 3 ? (throttled ? 60.0 : 8.0) : 2.0; };
  const TimeFn step = [&](int r, int64_t b) { return own(r) + perSample(r) * static_cast<double>(b); };
  PolicyInput in = blankInput(4, 128);
  BalancedPolicy policy;
  const auto decide = [&] {
    observe(
        in, [&](int r, int64_t b) { return perSample(r) * static_cast<double>(b); }, 10);
    for (int r = 0; r < 4; ++r) in.nodes[r].ownMs = own(r);
    in.current = policy.decide(in).split;
    in.step += 10;
  };
  for (int k = 0; k < 4; ++k) decide();
  EXPECT_LE(in.current.batches[3], 3) << in.current.str();
  EXPECT_NEAR(maxTime(in.current.batches, step), bruteForceMinMax(4, 128, step), 2.5) << in.current.str();
  throttled = false;
  decide();
  decide();
  EXPECT_NEAR(static_cast<double>(in.current.batches[3]), 30, 3) << in.current.str();
}

TEST(BalancedPolicy, TwoNodesWithSlowdownOneAndThreeConverge) {
  // t = s(2 + 0.5b) with s = 1, 3 and B = 64: 2 + 0.5(64 - b) = 3(2 + 0.5b) -> b = 14 (22% of 64).
  const TimeFn exact = [](int r, int64_t b) { return (r == 1 ? 3.0 : 1.0) * (2 + 0.5 * static_cast<double>(b)); };
  Loop loop{blankInput(2, 64), BalancedPolicy{}, noisy(exact, 0.02, 3)};
  for (int k = 0; k < 30; ++k) {
    const Decision d = loop.next();
    if (k >= 3) {
      EXPECT_GE(d.split.share(1), 0.15) << "decision " << k << ": " << d.note;
      EXPECT_LE(d.split.share(1), 0.35) << "decision " << k << ": " << d.note;
    }
  }
  EXPECT_LE(maxTime(loop.in.current.batches, exact), bruteForceMinMax(2, 64, exact) * 1.05) << loop.in.current.str();
}

TEST(BalancedPolicy, BeforeAnyStepUsesTheOpsProbe) {
  auto in = blankInput(2, 100);
  in.nodes[0].opsPerSecond = 1e9;
  in.nodes[1].opsPerSecond = 3e9;
  const Decision d = BalancedPolicy().decide(in);
  EXPECT_EQ(d.split.batches, (V{25, 75})) << d.note;
  EXPECT_NE(d.note.find("opsPerSecond"), std::string::npos);
}

TEST(BalancedPolicy, NodesWithoutMeasurementTakeTheMeanModel) {
  auto in = blankInput(3, 90);
  observe(in, [](int r, int64_t b) { return (r == 0 ? 2.0 : 1.0) * static_cast<double>(b); });
  in.nodes[2].recent.clear();
  in.nodes[2].computeMs = 0;
  // Models c = 2, 1, and 1.5 (the mean) for rank 2: optimum level 2b_0 = b_1 = 1.5b_2 -> 20.8, 41.5, 27.7.
  const Decision d = BalancedPolicy().decide(in);
  EXPECT_EQ(d.split.total(), 90);
  EXPECT_LT(d.split.batches[0], d.split.batches[2]);
  EXPECT_LT(d.split.batches[2], d.split.batches[1]);
}

}  // namespace
}  // namespace balancenet::orchestrator
