// LrScaling: each rule's factor at hand-computed points, AdaScale's limits, auto by optimizer, parse errors.
#include <gtest/gtest.h>

#include <limits>

#include "balancenet/adaptive/LrScaling.h"
#include "balancenet/core/Error.h"

namespace balancenet::adaptive {
namespace {

TEST(LrScaling, FactorsAtHandComputedPoints) {
  EXPECT_DOUBLE_EQ(lrFactor(LrScaling::None, 32, 128, 100), 1.0);
  EXPECT_DOUBLE_EQ(lrFactor(LrScaling::Linear, 32, 128, 100), 4.0);
  EXPECT_DOUBLE_EQ(lrFactor(LrScaling::Sqrt, 32, 128, 100), 2.0);
  // r = B (phi + B0) / (B0 (phi + B)) = 128 * 132 / (32 * 228)
  EXPECT_DOUBLE_EQ(lrFactor(LrScaling::AdaScale, 32, 128, 100), 16896.0 / 7296.0);
  EXPECT_DOUBLE_EQ(lrFactor(LrScaling::Linear, 64, 32, 100), 0.5);  // below the base batch too
  // AdaScale runs from 1 to linear:
  EXPECT_DOUBLE_EQ(lrFactor(LrScaling::AdaScale, 32, 128, -1), 1.0);  // unknown: no growth blind
  EXPECT_DOUBLE_EQ(lrFactor(LrScaling::AdaScale, 32, 128, 0), 1.0);   // all signal: larger B, same step
  EXPECT_DOUBLE_EQ(lrFactor(LrScaling::AdaScale, 32, 128, std::numeric_limits<double>::infinity()), 4.0);
  EXPECT_NEAR(lrFactor(LrScaling::AdaScale, 32, 128, 1e9), 4.0, 1e-5);  // all noise: linear
  EXPECT_DOUBLE_EQ(lrFactor(LrScaling::AdaScale, 32, 32, 100), 1.0);
  EXPECT_THROW(lrFactor(LrScaling::Linear, 0, 32, 1), InternalError);
}

TEST(LrScaling, ParsesNamesAutoByOptimizerAndErrors) {
  for (auto rule : {LrScaling::None, LrScaling::Linear, LrScaling::Sqrt, LrScaling::AdaScale})
    EXPECT_EQ(parseLrScaling(lrScalingName(rule), "sgd"), rule);
  EXPECT_EQ(parseLrScaling("auto", "sgd"), LrScaling::AdaScale);
  EXPECT_EQ(parseLrScaling("auto", "adam"), LrScaling::Sqrt);
  EXPECT_EQ(parseLrScaling("auto", "adamw"), LrScaling::Sqrt);
  // errors name the valid values
  try {
    parseLrScaling("cubic", "sgd");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--lr-scaling must be auto, none, linear, sqrt or adascale; got 'cubic'");
  }
  EXPECT_THROW(parseLrScaling("Linear", "sgd"), UsageError);
  EXPECT_THROW(parseLrScaling("auto", "lamb"), UsageError);
}

}  // namespace
}  // namespace balancenet::adaptive
