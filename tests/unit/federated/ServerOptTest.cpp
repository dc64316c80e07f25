// Server optimisers (FedAvgM, FedAdam, FedYogi, FedAdagrad) against hand-computed steps; avg is the strategy's
// update bit for bit; the flags' checks.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "balancenet/federated/StrategyRegistry.h"
#include "balancenet/federated/serveropt/ServerOptimizer.h"
#include "balancenet/federated/strategies/Aggregation.h"
#include "testing/UsageErrors.h"

namespace balancenet::federated {
namespace {

using testing::usageErrorOf;

FederatedOptions withOptimizer(const std::string& name) {
  FederatedOptions o;
  o.serverOpt = name;
  o.serverLr = 0.1;  // eta
  o.serverMomentum = 0.9;
  o.serverBeta2 = 0.99;
  o.serverTau = 0.01;
  return o;
}

// Two steps from x0 = (1, 2, 3) with pseudo-gradients (0.1, -0.2, 0) then (0.3, 0.1, -0.4): the points after each.
std::pair<at::Tensor, at::Tensor> twoSteps(const FederatedOptions& o, ServerOptState& state) {
  const auto x0 = at::tensor({1.0, 2.0, 3.0}, at::kDouble);
  const auto x1 = serverStep(o, x0, x0 + at::tensor({0.1, -0.2, 0.0}, at::kDouble), state);
  const auto x2 = serverStep(o, x1, x1 + at::tensor({0.3, 0.1, -0.4}, at::kDouble), state);
  return {x1, x2};
}

void expectPoint(const at::Tensor& x, std::vector<double> expected) {
  ASSERT_EQ(x.numel(), 3);
  for (int64_t i = 0; i < 3; ++i) EXPECT_NEAR(x[i].item<double>(), expected[size_t(i)], 1e-12) << "coordinate " << i;
}

// avgm: m1 = D1, x1 = x0 + 0.1 D1 = (1.01, 1.98, 3); m2 = 0.9 D1 + D2 = (0.39, -0.08, -0.4), x2 = x1 + 0.1 m2.
TEST(ServerOptimizer, FedAvgMIsServerMomentum) {
  ServerOptState state;
  const auto [x1, x2] = twoSteps(withOptimizer("avgm"), state);
  expectPoint(x1, {1.01, 1.98, 3.0});
  expectPoint(x2, {1.049, 1.972, 2.96});
  EXPECT_FALSE(state.v.defined()) << "avgm keeps no second moment";
}

// The points after each of two steps, from the formulas in ServerOptimizer.h. Coordinate 0, step 1 (m = 0.1 x
// 0.1 = 0.01 for all three): adam: v = 0.99 x 1e-4 + 0.01 x 0.01 = 1.99e-4, x = 1 + 0.001 / (sqrt(1.99e-4) + 0.01);
// yogi: v = 1e-4 - 0.01 x 0.01 x sign(1e-4 - 0.01) = 2e-4; adagrad: v = 1e-4 + 0.01.
TEST(ServerOptimizer, AdaptiveOptimizersTwoSteps) {
  struct Expected {
    std::string name;
    std::vector<double> x1, x2;
  };
  const std::vector<Expected> table{{"adam",
                                     {1.0414821816127866, 1.9381538450942923, 3.0},
                                     {1.1319250568199235, 1.9148793035011595, 2.921885552918683}},
                                    {"yogi",
                                     {1.0414213562373096, 1.9381966011250105, 3.0},
                                     {1.13176972306117, 1.9150047652404796, 2.9219223593595585}},
                                    {"adagrad",
                                     {1.0090498756211208, 1.9904875078027495, 3.0},
                                     {1.0209989233963748, 1.9870662231170537, 2.9902468754881286}}};
  for (const auto& e : table) {
    SCOPED_TRACE(e.name);
    ServerOptState state;
    const auto [x1, x2] = twoSteps(withOptimizer(e.name), state);
    expectPoint(x1, e.x1);
    expectPoint(x2, e.x2);
  }
}

// avg: the strategy built from strategyOptions keeps --server-lr, and serverStep returns its result untouched:
// the same bits as the strategy's aggregation before server optimisers existed.
TEST(ServerOptimizer, AvgIsTheStrategysUpdateBitForBit) {
  FederatedOptions o;
  o.strategy = "fedavg";
  o.serverLr = 0.7;
  auto strategy = makeStrategy(strategyOptions(o));
  std::vector<ClientUpdate> ups(2);
  for (int c = 0; c < 2; ++c) {
    ups[size_t(c)].client = c;
    ups[size_t(c)].delta = at::randn({257}, at::kFloat);
    ups[size_t(c)].shardSamples = 100 + 37 * c;
    ups[size_t(c)].doneSteps = ups[size_t(c)].assignedSteps = 20;
  }
  const auto global = at::randn({257}, at::kFloat);
  auto weights = sampleWeights(ups);
  for (auto& w : weights) w *= 0.7;
  ServerOptState state;
  const auto next = serverStep(o, global, strategy->aggregate(global, ups, 0), state);
  EXPECT_TRUE(at::equal(next, applyWeightedDeltas(global, ups, weights)));
  EXPECT_FALSE(state.m.defined());
}

TEST(ServerOptimizer, ServerLrIsEtaNotTheStrategysScaleForTheAdaptiveOnes) {
  auto o = withOptimizer("adam");
  EXPECT_EQ(strategyOptions(o).serverLr, 1);
  EXPECT_EQ(strategyOptions(withOptimizer("avg")).serverLr, 0.1);
}

TEST(ServerOptimizer, BadFlagsAreUsageErrors) {
  auto bad = [](auto change) {
    FederatedOptions o;
    change(o);
    return usageErrorOf([&] { checkServerOptOptions(o); });
  };
  EXPECT_EQ(bad([](FederatedOptions&) {}), "<no UsageError>");
  EXPECT_EQ(bad([](FederatedOptions& o) { o.serverOpt = "sgd"; }),
            "unknown --server-opt 'sgd'; choose one of: avg, avgm, adam, yogi, adagrad");
  EXPECT_EQ(bad([](FederatedOptions& o) { o.serverMomentum = 1; }), "--server-momentum must be in [0, 1), got 1");
  EXPECT_EQ(bad([](FederatedOptions& o) { o.serverBeta2 = -0.1; }), "--server-beta2 must be in [0, 1), got -0.1");
  EXPECT_EQ(bad([](FederatedOptions& o) { o.clientMomentum = 1.5; }), "--client-momentum must be in [0, 1), got 1.5");
  EXPECT_EQ(bad([](FederatedOptions& o) { o.serverTau = 0; }), "--server-tau must be positive, got 0");
}

}  // namespace
}  // namespace balancenet::federated
