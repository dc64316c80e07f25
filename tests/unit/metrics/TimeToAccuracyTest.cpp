// time_to_accuracy: the first evaluation at or above each target, null when none reached it.
#include <gtest/gtest.h>

#include "balancenet/metrics/TimeToAccuracy.h"

namespace balancenet::metrics {
namespace {

TEST(TimeToAccuracy, FirstEvaluationAtOrAboveEachTargetAndNullForTheOthers) {
  const std::vector<EvalPoint> evals{{10, 0.65, 1.0, 2.5}, {20, 0.80, 0.6, 5.0}, {30, 0.78, 0.7, 7.5}};
  const auto t = timeToAccuracy(evals);
  EXPECT_EQ(t.size(), std::size(kAccuracyTargets));
  EXPECT_TRUE(t.at("0.70").is_object());
  EXPECT_EQ(t.at("0.70").at("step"), 20);
  EXPECT_DOUBLE_EQ(t.at("0.70").at("seconds").get<double>(), 5.0);
  EXPECT_EQ(t.at("0.80").at("step"), 20);  // "at or above"
  EXPECT_TRUE(t.at("0.85").is_null());
}

TEST(TimeToAccuracy, TheRunsOwnTargetIsAddedBesideTheCommonOnes) {
  const auto t = timeToAccuracy({{4, 0.5, 1.0, 1.25}}, 0.42);
  EXPECT_EQ(t.size(), std::size(kAccuracyTargets) + 1);
  EXPECT_EQ(t.at("0.42").at("step"), 4);
  EXPECT_TRUE(t.at("0.70").is_null());
  EXPECT_EQ(accuracyKey(0.875), "0.875");  // not rounded to another target's key
  EXPECT_EQ(accuracyKey(0.8), "0.80");
}

}  // namespace
}  // namespace balancenet::metrics
