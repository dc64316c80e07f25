#include "balancenet/federated/strategies/QuotaPlanner.h"

#include <gtest/gtest.h>

namespace balancenet::federated {
namespace {

const LocalSteps kTwenty{20, 20};

TEST(QuotaPlannerTest, QuotasAreProportionalToSpeedOverTheMedianClientsRound) {
  // Median of the four speeds: (50 + 25) / 2 = 37.5 steps/s, so T = 20 / 37.5 s.
  const auto plan = planQuotas({100, 50, 25, 12.5}, kTwenty, 0);
  EXPECT_DOUBLE_EQ(plan.roundSeconds, 20 / 37.5);
  EXPECT_EQ(plan.steps, (std::vector<int64_t>{53, 26, 13, 6}));
  // An odd count: the middle speed's client runs exactly localSteps.high.
  EXPECT_EQ(planQuotas({80, 40, 10}, kTwenty, 0).steps, (std::vector<int64_t>{40, 20, 5}));
}

TEST(QuotaPlannerTest, TheMedianClientGetsExactlyHighDespiteRounding) {
  // 7 x (61 / 7) is 60.999... in doubles.
  EXPECT_EQ(planQuotas({7}, LocalSteps{61, 61}, 0).steps, (std::vector<int64_t>{61}));
}

TEST(QuotaPlannerTest, AGivenDeadlineIsTheRoundLength) {
  const auto plan = planQuotas({10, 5, 2.5}, kTwenty, 2);
  EXPECT_EQ(plan.roundSeconds, 2);
  EXPECT_EQ(plan.steps, (std::vector<int64_t>{20, 10, 5}));
}

TEST(QuotaPlannerTest, QuotasAreClampedToOneAndFourTimesHigh) {
  const auto plan = planQuotas({1000, 0.01}, kTwenty, 10);
  EXPECT_EQ(plan.steps, (std::vector<int64_t>{4 * 20, 1}));
}

TEST(QuotaPlannerTest, UnmeasuredClientsGetAShortProbe) {
  const LocalSteps drawn{5, 20};
  const auto none = planQuotas({0, 0, 0}, drawn, 0);
  EXPECT_EQ(none.roundSeconds, 0);  // nobody measured, no deadline: no round length yet
  EXPECT_EQ(none.steps, (std::vector<int64_t>{kProbeSteps, kProbeSteps, kProbeSteps}));
  EXPECT_EQ(planQuotas({0}, LocalSteps{1, 20}, 0).steps, (std::vector<int64_t>{1}));  // never above the low count
  // The round length comes from the measured clients only.
  const auto mixed = planQuotas({0, 40}, drawn, 0);
  EXPECT_DOUBLE_EQ(mixed.roundSeconds, 0.5);
  EXPECT_EQ(mixed.steps, (std::vector<int64_t>{kProbeSteps, 20}));
}

TEST(QuotaPlannerTest, OneClientRunsHighStepsAndNoClientsIsEmpty) {
  const auto one = planQuotas({30}, kTwenty, 0);
  EXPECT_DOUBLE_EQ(one.roundSeconds, 20.0 / 30.0);
  EXPECT_EQ(one.steps, (std::vector<int64_t>{20}));
  EXPECT_TRUE(planQuotas({}, kTwenty, 0).steps.empty());
}

}  // namespace
}  // namespace balancenet::federated
