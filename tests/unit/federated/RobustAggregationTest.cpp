// Coordinate-wise trimmed mean with each strategy's weights, FedNova's momentum normalisation, and the server's
// refusal of broken or outsized updates (UpdateCheck).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "balancenet/federated/StrategyRegistry.h"
#include "balancenet/federated/UpdateCheck.h"
#include "balancenet/federated/strategies/Aggregation.h"
#include "balancenet/federated/strategies/TrimmedMean.h"
#include "testing/UsageErrors.h"

namespace balancenet::federated {
namespace {

using testing::usageErrorOf;

std::vector<ClientUpdate> updatesOf(const std::vector<std::vector<double>>& deltas, std::vector<int64_t> steps = {}) {
  std::vector<ClientUpdate> ups;
  for (size_t i = 0; i < deltas.size(); ++i) {
    ClientUpdate u;
    u.client = static_cast<int>(i);
    u.delta = at::tensor(deltas[i], at::kDouble);
    u.shardSamples = 100;
    u.doneSteps = u.assignedSteps = steps.empty() ? 5 : steps[i];
    ups.push_back(u);
  }
  return ups;
}

at::Tensor aggregateWith(const std::string& strategy, double trimBeta, const std::vector<ClientUpdate>& ups) {
  FederatedOptions o;
  o.strategy = strategy;
  o.trimBeta = trimBeta;
  return makeStrategy(o)->aggregate(at::zeros({ups[0].delta.numel()}, at::kDouble), ups, 0);
}

// Five equal shards; per coordinate the one largest and smallest go (floor(0.2 x 5) = 1): the outlier 100 and
// -50 are gone, the middle three averaged.
TEST(TrimmedMean, DropsTheOutliersPerCoordinate) {
  const auto ups = updatesOf({{1, -50}, {2, 0}, {3, 1}, {4, 2}, {100, 3}});
  const auto trimmed = aggregateWith("fedavg", 0.2, ups);
  EXPECT_DOUBLE_EQ(trimmed[0].item<double>(), 3);
  EXPECT_DOUBLE_EQ(trimmed[1].item<double>(), 1);
  const auto mean = aggregateWith("fedavg", 0, ups);
  EXPECT_DOUBLE_EQ(mean[0].item<double>(), 22) << "the plain mean follows the outlier";
  EXPECT_NEAR(aggregateWith("fedavg", 0.1, ups)[0].item<double>(), 22, 1e-12) << "floor(0.1 x 5) = 0: no trimming";
}

// Shard weights stay with their values: of the kept ones, the weighted mean; the total weight (serverLr) kept.
TEST(TrimmedMean, KeptValuesKeepTheirShardWeights) {
  auto ups = updatesOf({{0}, {1}, {4}, {1000}});
  ups[1].shardSamples = 300;  // kept (1) weighs 300, kept (4) 100 after the trim of 0 and 1000
  EXPECT_DOUBLE_EQ(aggregateWith("fedavg", 0.25, ups)[0].item<double>(), (300 * 1 + 100 * 4) / 400.0);
}

// FedNova trims the normalised d_i = delta_i / a_i, not the raw deltas, and scales by tau_eff over all accepted:
// d = (1, 2, 600) from deltas (2, 6, 600) over steps (2, 3, 1); kept d = 2; tau_eff = (2 + 3 + 1) / 3 = 2.
TEST(TrimmedMean, FedNovaTrimsTheNormalisedUpdates) {
  const auto ups = updatesOf({{2}, {6}, {600}}, {2, 3, 1});
  EXPECT_DOUBLE_EQ(aggregateWith("fednova", 0.34, ups)[0].item<double>(), 4);
}

// The mean path of fednova is the formula before --aggregator and --client-momentum existed, bit for bit.
TEST(TrimmedMean, FedNovaMeanIsTheOldFormulaBitForBit) {
  std::vector<ClientUpdate> ups(3);
  std::vector<double> oldWeights;
  double tauEff = 0;
  for (int c = 0; c < 3; ++c) {
    ups[size_t(c)] = {c, at::randn({101}, at::kFloat), 20, 3 + 4 * c, 0, 100 * (c + 1), 0, 0};
    tauEff += (100.0 * (c + 1)) / 600.0 * double(3 + 4 * c);
  }
  for (int c = 0; c < 3; ++c) oldWeights.push_back(0.5 * tauEff * ((100.0 * (c + 1)) / 600.0) / double(3 + 4 * c));
  FederatedOptions o;
  o.strategy = "fednova";
  o.serverLr = 0.5;
  const auto global = at::randn({101}, at::kFloat);
  EXPECT_TRUE(at::equal(makeStrategy(o)->aggregate(global, ups, 0), applyWeightedDeltas(global, ups, oldWeights)));
}

// Momentum 0.5 with a constant gradient: directions g, 1.5 g, 1.75 g, so 3 steps move 4.25 g.
TEST(TrimmedMean, FedNovaStepWeightCountsMomentum) {
  EXPECT_EQ(fedNovaStepWeight(7, 0), 7);
  EXPECT_DOUBLE_EQ(fedNovaStepWeight(3, 0.5), 4.25);
}

TEST(TrimmedMean, AggregatorFlag) {
  EXPECT_EQ(parseAggregator("mean"), 0);
  EXPECT_EQ(parseAggregator("trimmed-mean"), 0.1);
  EXPECT_EQ(parseAggregator("trimmed-mean:0.25"), 0.25);
  EXPECT_EQ(parseAggregator("trimmed-mean:0"), 0);
  const std::string bad = "--aggregator must be mean, trimmed-mean or trimmed-mean:BETA with BETA in [0, 0.5), got ";
  EXPECT_EQ(usageErrorOf([] { parseAggregator("trimmed-mean:0.5"); }), bad + "'trimmed-mean:0.5'");
  EXPECT_EQ(usageErrorOf([] { parseAggregator("trimmed-mean:-0.1"); }), bad + "'trimmed-mean:-0.1'");
  EXPECT_EQ(usageErrorOf([] { parseAggregator("median"); }), bad + "'median'");
  EXPECT_EQ(usageErrorOf([] { parseAggregator("trimmed-mean:x"); }), bad + "'trimmed-mean:x'");
}

TEST(UpdateCheck, NonFiniteAndWrongSizeAreRejected) {
  auto nans = at::ones({5}, at::kFloat);
  nans[1] = NAN;
  nans[3] = NAN;
  EXPECT_EQ(rejectionReason(nans, 5, {}, 0), "2 NaN values");
  auto inf = at::ones({5}, at::kFloat);
  inf[0] = -INFINITY;
  EXPECT_EQ(rejectionReason(inf, 5, {}, 0), "1 infinite values");
  EXPECT_EQ(rejectionReason(at::ones({4}), 5, {}, 0), "4 values, the model has 5");
  EXPECT_EQ(rejectionReason(at::Tensor(), 5, {}, 0), "0 values, the model has 5");
  EXPECT_EQ(rejectionReason(at::ones({5}), 5, {}, 0), std::nullopt);
}

TEST(UpdateCheck, HugeNormAgainstTheMedianOfAtLeastThreeOthers) {
  const auto big = at::full({4}, 10.0);  // norm 20
  EXPECT_EQ(rejectionReason(big, 4, {1, 1.9, 3}, 0), "norm 20 > 10 x the median 1.9 of the other updates");
  EXPECT_EQ(rejectionReason(big, 4, {1, 2, 3}, 0), std::nullopt) << "exactly 10 x is not above";
  EXPECT_EQ(rejectionReason(big, 4, {1, 2.5, 3}, 0), std::nullopt) << "20 is not above 25";
  EXPECT_EQ(rejectionReason(big, 4, {1, 2}, 0), std::nullopt) << "two others: no limit";
  EXPECT_EQ(rejectionReason(big, 4, {1, 2, NAN}, 0), std::nullopt) << "a NaN peer does not count";
  EXPECT_EQ(rejectionReason(big, 4, {}, 19.5), "norm 20 > --max-update-norm 19.5");
  EXPECT_EQ(rejectionReason(big, 4, {1, 1, 1}, 21), std::nullopt) << "an explicit limit replaces the median rule";
}

// Per round, each update against the others: the outlier goes, the normal ones (whose peers include it) stay.
TEST(UpdateCheck, RoundRejectionsLeaveTheOthersIn) {
  std::vector<at::Tensor> deltas{at::full({3}, 1.0), at::full({3}, 1.2),  at::full({3}, 0.9),
                                 at::full({3}, 1.1), at::full({3}, 50.0), at::full({3}, NAN)};
  const auto reasons = roundRejections(deltas, 3, 0);
  ASSERT_EQ(reasons.size(), 6u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(reasons[size_t(i)], std::nullopt) << i;
  EXPECT_TRUE(reasons[4].has_value());
  EXPECT_EQ(reasons[5], "3 NaN values");
  std::vector<double> recent;
  for (int i = 0; i < 20; ++i) rememberNorm(recent, i);
  EXPECT_EQ(recent.size(), kRecentNorms);
  EXPECT_EQ(recent.front(), 20 - double(kRecentNorms));
}

}  // namespace
}  // namespace balancenet::federated
