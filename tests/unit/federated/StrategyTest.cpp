#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "balancenet/core/Error.h"
#include "balancenet/federated/StrategyRegistry.h"
#include "balancenet/federated/strategies/Aggregation.h"
#include "balancenet/federated/strategies/ClientSampling.h"
#include "balancenet/federated/strategies/QuotaPlanner.h"
#include "testing/UsageErrors.h"

namespace balancenet::federated {
namespace {

RoundContext contextOf(int clients, int64_t round = 0, std::vector<double> speeds = {}) {
  RoundContext ctx;
  ctx.round = round;
  for (int c = 0; c < clients; ++c) ctx.clients.push_back({c, true, 100, speeds.empty() ? 0 : speeds[size_t(c)]});
  return ctx;
}

FederatedOptions optionsFor(const std::string& strategy) {
  FederatedOptions o;
  o.strategy = strategy;
  return o;
}

ClientUpdate update(int client, std::vector<float> delta, int64_t shardSamples, int64_t doneSteps,
                    int64_t assignedSteps = 0, int64_t baseVersion = 0) {
  ClientUpdate u;
  u.client = client;
  u.delta = at::tensor(delta, at::kFloat);
  u.shardSamples = shardSamples;
  u.doneSteps = doneSteps;
  u.assignedSteps = assignedSteps ? assignedSteps : doneSteps;
  u.baseVersion = baseVersion;
  return u;
}

std::vector<float> values(const at::Tensor& t) {
  const auto c = t.contiguous();
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}

std::vector<int> clientsOf(const std::vector<ClientTask>& tasks) {
  std::vector<int> ids;
  for (const auto& t : tasks) ids.push_back(t.client);
  return ids;
}

TEST(ClientSamplingTest, FractionOfTheAvailableClientsDrawnPerRound) {
  auto ctx = contextOf(10);
  ctx.clients[3].available = false;
  ctx.clients[7].available = false;
  std::set<std::vector<int>> samples;
  for (int64_t round = 0; round < 30; ++round) {
    ctx.round = round;
    const auto s = sampleClients(ctx, 0.5, 1);
    ASSERT_EQ(s.size(), 4u);  // round(0.5 x 8)
    EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
    EXPECT_EQ(std::set<int>(s.begin(), s.end()).size(), s.size());
    for (int c : s) EXPECT_TRUE(c != 3 && c != 7 && c >= 0 && c < 10) << c;
    EXPECT_EQ(sampleClients(ctx, 0.5, 1), s);  // a function of (seed, round): a resumed run draws the same
    samples.insert(s);
  }
  EXPECT_GT(samples.size(), 10u);  // 70 possible samples: rounds draw different ones
  ctx.round = 0;
  EXPECT_NE(sampleClients(ctx, 0.5, 1), sampleClients(ctx, 0.5, 2));
}

TEST(ClientSamplingTest, RoundsTheCountAndTakesAtLeastOne) {
  EXPECT_EQ(sampleClients(contextOf(5), 0.3, 1).size(), 2u);  // round(1.5) = 2
  EXPECT_EQ(sampleClients(contextOf(5), 0.01, 1).size(), 1u);
  EXPECT_EQ(sampleClients(contextOf(5), 1, 1), (std::vector<int>{0, 1, 2, 3, 4}));
  auto none = contextOf(3);
  for (auto& c : none.clients) c.available = false;
  EXPECT_TRUE(sampleClients(none, 1, 1).empty());
}

TEST(ClientSamplingTest, LocalStepsFixedOrDrawnPerRoundAndClient) {
  EXPECT_EQ(drawLocalSteps({20, 20}, 1, 5, 3), 20);
  std::set<int64_t> seen;
  for (int64_t round = 0; round < 20; ++round)
    for (int c = 0; c < 8; ++c) {
      const auto n = drawLocalSteps({5, 15}, 1, round, c);
      EXPECT_TRUE(n >= 5 && n <= 15) << n;
      EXPECT_EQ(n, drawLocalSteps({5, 15}, 1, round, c));
      seen.insert(n);
    }
  EXPECT_EQ(seen.size(), 11u);  // 160 draws reach every count in [5, 15]
}

TEST(StrategyTest, FedAvgFedProxFedNovaTasksCarryStepsDeadlineAndMu) {
  for (const std::string name : {"fedavg", "fedprox", "fednova"}) {
    auto o = optionsFor(name);
    o.fraction = 0.5;
    o.localSteps = {5, 15};
    o.deadlineS = 3;
    o.mu = 0.25;
    auto strategy = makeStrategy(o);
    EXPECT_EQ(strategy->name(), name);
    EXPECT_FALSE(strategy->asynchronous());
    const auto ctx = contextOf(8, 4);
    const auto tasks = strategy->configure(ctx);
    EXPECT_EQ(clientsOf(tasks), sampleClients(ctx, 0.5, o.seed)) << name;
    for (const auto& t : tasks) {
      EXPECT_EQ(t.localSteps, drawLocalSteps(o.localSteps, o.seed, 4, t.client)) << name;
      EXPECT_EQ(t.deadlineS, 3) << name;
      EXPECT_EQ(t.mu, name == "fedprox" ? 0.25 : 0) << name;
    }
  }
}

TEST(StrategyTest, FedAvgAveragesCompleteUpdatesByShardSize) {
  auto o = optionsFor("fedavg");
  auto fedavg = makeStrategy(o);
  const auto global = at::tensor(std::vector<float>{1, 2});
  const std::vector<ClientUpdate> ups = {update(0, {1, 0}, 100, 5), update(1, {0, 2}, 300, 5)};
  // p = (0.25, 0.75): (1 + 0.25, 2 + 1.5).
  EXPECT_EQ(values(fedavg->aggregate(global, ups, 0)), (std::vector<float>{1.25f, 3.5f}));
  o.serverLr = 0.5;
  EXPECT_EQ(values(makeStrategy(o)->aggregate(global, ups, 0)), (std::vector<float>{1.125f, 2.75f}));
}

TEST(StrategyTest, FedAvgDropsPartialWorkFedNovaAndBalancedKeepIt) {
  const auto partial = update(0, {1}, 10, 3, 5);
  const auto complete = update(0, {1}, 10, 5, 5);
  const auto nothing = update(0, {0}, 10, 0, 5);
  for (const std::string name : {"fedavg", "fedprox", "fedbuff"}) {
    auto s = makeStrategy(optionsFor(name));
    EXPECT_FALSE(s->accepts(partial)) << name;
    EXPECT_FALSE(s->accepts(nothing)) << name;
    EXPECT_TRUE(s->accepts(complete)) << name;
  }
  for (const std::string name : {"fednova", "balanced"}) {
    auto s = makeStrategy(optionsFor(name));
    EXPECT_TRUE(s->accepts(partial)) << name;
    EXPECT_FALSE(s->accepts(nothing)) << name;
    EXPECT_TRUE(s->accepts(complete)) << name;
  }
}

TEST(StrategyTest, FedNovaNormalisesByLocalStepsOnHandComputedNumbers) {
  // p = (0.25, 0.75), a = (2, 6): d = ({1, 2}, {1, 0}), tau_eff = 0.5 + 4.5 = 5,
  // sum p d = (0.25 + 0.75, 0.5) = (1, 0.5); new = global + 5 x (1, 0.5).
  const std::vector<ClientUpdate> ups = {update(0, {2, 4}, 100, 2), update(1, {6, 0}, 300, 6)};
  const auto global = at::tensor(std::vector<float>{1, -1});
  for (const std::string name : {"fednova", "balanced"})
    EXPECT_EQ(values(makeStrategy(optionsFor(name))->aggregate(global, ups, 0)), (std::vector<float>{6, 1.5f})) << name;
  // FedAvg would move by p-weighted raw deltas, (0.5 + 4.5, 1): biased towards the client with 6 steps.
  EXPECT_EQ(values(makeStrategy(optionsFor("fedavg"))->aggregate(global, ups, 0)), (std::vector<float>{6, 0}));
  auto o = optionsFor("fednova");
  o.serverLr = 0.5;
  EXPECT_EQ(values(makeStrategy(o)->aggregate(global, ups, 0)), (std::vector<float>{3.5f, 0.25f}));
}

TEST(StrategyTest, FedNovaWithEqualStepsEqualsFedAvg) {
  at::manual_seed(3);
  const auto global = at::randn({50});
  std::vector<ClientUpdate> ups;
  for (int c = 0; c < 4; ++c) {
    ClientUpdate u = update(c, {}, 50 * (c + 1), 7);
    u.delta = at::randn({50});
    ups.push_back(u);
  }
  const auto nova = makeStrategy(optionsFor("fednova"))->aggregate(global, ups, 0);
  const auto avg = makeStrategy(optionsFor("fedavg"))->aggregate(global, ups, 0);
  EXPECT_LT((nova - avg).abs().max().item<float>(), 1e-6);
}

TEST(StrategyTest, FedBuffGivesEveryAvailableClientWorkAndWeighsStaleUpdatesDown) {
  auto o = optionsFor("fedbuff");
  o.bufferSize = 3;
  o.localSteps = {5, 15};
  o.fraction = 0.25;  // not fedbuff's: every idle client works
  auto fedbuff = makeStrategy(o);
  EXPECT_TRUE(fedbuff->asynchronous());
  EXPECT_EQ(fedbuff->bufferSize(), 3);
  auto ctx = contextOf(6, 9);
  ctx.clients[2].available = false;
  const auto tasks = fedbuff->configure(ctx);
  EXPECT_EQ(clientsOf(tasks), (std::vector<int>{0, 1, 3, 4, 5}));
  for (const auto& t : tasks) EXPECT_EQ(t.localSteps, drawLocalSteps(o.localSteps, o.seed, 9, t.client));

  EXPECT_EQ(stalenessWeight(0), 1);
  EXPECT_EQ(stalenessWeight(3), 0.5);
  EXPECT_DOUBLE_EQ(stalenessWeight(8), 1.0 / 3);
  // Version 5; staleness 0 and 3: (1/2) x (1 x 4 + 0.5 x 4) = 3, whatever the shard sizes.
  const std::vector<ClientUpdate> ups = {update(0, {4}, 10, 5, 5, 5), update(1, {4}, 990, 5, 5, 2)};
  EXPECT_EQ(values(fedbuff->aggregate(at::zeros({1}), ups, 5)), (std::vector<float>{3}));
  EXPECT_THROW(fedbuff->aggregate(at::zeros({1}), ups, 4), InternalError);  // an update from the future
}

TEST(StrategyTest, BalancedGivesQuotasFromMeasuredSpeedsAndAMarginDeadline) {
  auto balanced = makeStrategy(optionsFor("balanced"));  // local steps 20 of 32, no deadline, all clients
  // Median speed (200 + 100) / 2 = 150 samples/s: T = 20 x 32 / 150 s; the fastest runs floor(400 T / 32) = 53
  // steps; the others the same steps with batches floor(speed x T / 53).
  const auto tasks = balanced->configure(contextOf(4, 2, {400, 200, 100, 50}));
  ASSERT_EQ(tasks.size(), 4u);
  const int64_t batches[] = {32, 16, 8, 4};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(tasks[i].client, int(i));
    EXPECT_EQ(tasks[i].localSteps, 53);
    EXPECT_EQ(tasks[i].batch, batches[i]);
    EXPECT_DOUBLE_EQ(tasks[i].deadlineS, 1.5 * 20 * 32 / 150);
    EXPECT_EQ(tasks[i].mu, 0);
  }
  // The first round: nobody measured, so a short probe and no deadline.
  for (const auto& t : balanced->configure(contextOf(4))) {
    EXPECT_EQ(t.localSteps, kProbeSteps);
    EXPECT_EQ(t.deadlineS, 0);
  }
  // --deadline-s T and --fraction: the sampled clients' speeds alone set the plan.
  auto o = optionsFor("balanced");
  o.deadlineS = 2;
  o.fraction = 0.5;
  const auto ctx = contextOf(4, 7, {320, 160, 80, 40});
  const auto sampled = makeStrategy(o)->configure(ctx);
  EXPECT_EQ(clientsOf(sampled), sampleClients(ctx, 0.5, o.seed));
  std::vector<double> speeds;
  for (const auto& t : sampled) speeds.push_back(ctx.clients[size_t(t.client)].samplesPerSecond);
  const auto plan = planQuotas(speeds, o.localSteps, o.localBatch, 2);
  for (size_t i = 0; i < sampled.size(); ++i) {
    EXPECT_EQ(sampled[i].localSteps, plan.steps[i]);
    EXPECT_EQ(sampled[i].batch, plan.batches[i]);
    EXPECT_EQ(sampled[i].deadlineS, 3);
  }
}

TEST(StrategyTest, AggregateRefusesMismatchedUpdates) {
  auto fedavg = makeStrategy(optionsFor("fedavg"));
  EXPECT_THROW(fedavg->aggregate(at::zeros({2}), {update(0, {1, 2, 3}, 10, 1)}, 0), InternalError);
  EXPECT_THROW(fedavg->aggregate(at::zeros({2}), {}, 0), InternalError);
}

TEST(StrategyRegistryTest, BuildsEveryNameAndRefusesBadOptions) {
  for (const auto& name : strategyNames()) EXPECT_EQ(makeStrategy(optionsFor(name))->name(), name);
  EXPECT_EQ(testing::usageErrorOf([] { makeStrategy(optionsFor("fedsgd")); }),
            "unknown --strategy 'fedsgd'; choose one of: fedavg, fedprox, fednova, fedbuff, balanced");
  auto bad = [](auto change) {
    auto o = optionsFor("fedavg");
    change(o);
    return testing::usageErrorOf([&] { makeStrategy(o); });
  };
  EXPECT_NE(bad([](auto& o) { o.fraction = 0; }).find("--fraction"), std::string::npos);
  EXPECT_NE(bad([](auto& o) { o.fraction = 1.5; }).find("--fraction"), std::string::npos);
  EXPECT_NE(bad([](auto& o) { o.localSteps = {0, 0}; }).find("--local-steps"), std::string::npos);
  EXPECT_NE(bad([](auto& o) { o.localSteps = {9, 3}; }).find("--local-steps"), std::string::npos);
  EXPECT_NE(bad([](auto& o) { o.deadlineS = -1; }).find("--deadline-s"), std::string::npos);
  EXPECT_NE(bad([](auto& o) { o.mu = -1; }).find("--mu"), std::string::npos);
  EXPECT_NE(bad([](auto& o) { o.serverLr = 0; }).find("--server-lr"), std::string::npos);
  EXPECT_NE(bad([](auto& o) { o.bufferSize = 0; }).find("--buffer"), std::string::npos);
}

}  // namespace
}  // namespace balancenet::federated
