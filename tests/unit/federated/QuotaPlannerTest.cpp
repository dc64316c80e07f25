// QuotaPlanner: one step count for every client where the batches allow, batches in proportion to speed, the
// slowest clients fewer steps of the smallest batch, probes for the unmeasured.
#include "balancenet/federated/strategies/QuotaPlanner.h"

#include <gtest/gtest.h>

namespace balancenet::federated {
namespace {

const LocalSteps kTwenty{20, 20};
using Counts = std::vector<int64_t>;

TEST(QuotaPlannerTest, EqualStepsWithBatchesInProportionToSpeed) {
  // Speeds in samples/s; median (100 + 50) / 2 = 75: T = 20 x 32 / 75 s. The fastest: 200 x T / 32 = 53 steps.
  const auto plan = planQuotas({200, 100, 50, 25}, kTwenty, 32, 0);
  EXPECT_DOUBLE_EQ(plan.roundSeconds, 20.0 * 32 / 75);
  EXPECT_EQ(plan.steps, (Counts{53, 53, 53, 53}));
  // speed x T / 53: 32.2 -> 32 (at most --local-batch), 16.1, 8.05, 4.03.
  EXPECT_EQ(plan.batches, (Counts{32, 16, 8, 4}));
  // Every client's work fits in T: steps x batch / speed <= T.
  const double speeds[] = {200, 100, 50, 25};
  for (size_t i = 0; i < 4; ++i)
    EXPECT_LE(double(plan.steps[i] * plan.batches[i]) / speeds[i], plan.roundSeconds * (1 + 1e-12)) << i;
}

TEST(QuotaPlannerTest, AClientTooSlowForTheSmallestBatchDoesFewerSteps) {
  // Deadline 5 s, batch 32 (smallest 32 / 8 = 4): the fastest does floor(5 x 100 / 32) = 15 steps; 12 samples/s
  // train 60 samples in T, 4 a step: 15 steps; 6 samples/s: 30 samples, 7 steps of 4.
  const auto plan = planQuotas({100, 50, 12, 6}, kTwenty, 32, 5);
  EXPECT_EQ(plan.roundSeconds, 5);
  EXPECT_EQ(plan.steps, (Counts{15, 15, 15, 7}));
  EXPECT_EQ(plan.batches, (Counts{32, 16, 4, 4}));
  // Far too slow: one step of the smallest batch, whatever T says.
  EXPECT_EQ(planQuotas({100, 0.01}, kTwenty, 32, 5).steps, (Counts{15, 1}));
}

TEST(QuotaPlannerTest, StepsAreCappedAtFourTimesHigh) {
  const auto plan = planQuotas({1000, 500}, kTwenty, 10, 10);  // 1000 x 10 / 10 = 1000 steps wanted
  EXPECT_EQ(plan.steps, (Counts{4 * 20, 4 * 20}));
  EXPECT_EQ(plan.batches, (Counts{10, 10}));  // at most --local-batch, even with time to spare
}

TEST(QuotaPlannerTest, RoundingJustBelowAWholeNumberCountsAsIt) {
  // 7 x (61 x 1 / 7) is 60.999... in doubles: one client at the median runs exactly localSteps.high.
  const auto plan = planQuotas({7}, LocalSteps{61, 61}, 1, 0);
  EXPECT_EQ(plan.steps, (Counts{61}));
  EXPECT_EQ(plan.batches, (Counts{1}));
}

TEST(QuotaPlannerTest, UnmeasuredClientsGetAShortProbeOfTheFullBatch) {
  const LocalSteps drawn{5, 20};
  const auto none = planQuotas({0, 0, 0}, drawn, 32, 0);
  EXPECT_EQ(none.roundSeconds, 0);  // nobody measured, no deadline: no round length yet
  EXPECT_EQ(none.steps, (Counts{kProbeSteps, kProbeSteps, kProbeSteps}));
  EXPECT_EQ(none.batches, (Counts{32, 32, 32}));
  EXPECT_EQ(planQuotas({0}, LocalSteps{1, 20}, 32, 0).steps, (Counts{1}));  // never above the low count
  // The round length comes from the measured clients only: 20 x 32 / 640 = 1 s.
  const auto mixed = planQuotas({0, 640}, drawn, 32, 0);
  EXPECT_DOUBLE_EQ(mixed.roundSeconds, 1);
  EXPECT_EQ(mixed.steps, (Counts{kProbeSteps, 20}));
  EXPECT_EQ(mixed.batches, (Counts{32, 32}));
}

TEST(QuotaPlannerTest, OneClientRunsHighStepsAndNoClientsIsEmpty) {
  const auto one = planQuotas({30}, kTwenty, 3, 0);  // 10 steps/s of 3 samples
  EXPECT_DOUBLE_EQ(one.roundSeconds, 2);
  EXPECT_EQ(one.steps, (Counts{20}));
  EXPECT_TRUE(planQuotas({}, kTwenty, 32, 0).steps.empty());
}

}  // namespace
}  // namespace balancenet::federated
