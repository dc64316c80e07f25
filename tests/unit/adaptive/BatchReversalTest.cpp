// A move back toward the previous B goes ahead only on measurements that show its gain.
#include <gtest/gtest.h>

#include "balancenet/adaptive/BatchReversal.h"
#include "balancenet/adaptive/GoodputPlanner.h"

namespace balancenet::adaptive {
namespace {

constexpr double kNoNoiseScale = -1;  // efficiency 1: goodput is samples per second

TEST(BatchReversal, GoodputIsMeasuredOnlyOverEnoughSteps) {
  EXPECT_DOUBLE_EQ(measuredGoodput({128, 100, kMinMeasuredSteps}, kNoNoiseScale, 128), 1280);
  EXPECT_EQ(measuredGoodput({128, 100, kMinMeasuredSteps - 1}, kNoNoiseScale, 128), 0);
  EXPECT_EQ(measuredGoodput({0, 100, 10}, kNoNoiseScale, 128), 0);
  // At a noise scale, a sample above the base batch counts less: (phi + B0) / (phi + B).
  EXPECT_NEAR(measuredGoodput({256, 100, 5}, 256, 128), 2560 * 384.0 / 512.0, 1e-9);
}

TEST(BatchReversal, OnlyAMoveBackTowardThePreviousBatchNeedsMeasurements) {
  const MeasuredSteps current{64, 50, 10};
  // No previous B, or a move on in the same direction (128 -> 64 -> 32): the prediction decides.
  EXPECT_FALSE(reversalRefusal(current, 128, {}, kNoNoiseScale, 128, 0.05));
  EXPECT_FALSE(reversalRefusal(current, 32, {128, 100, 10}, kNoNoiseScale, 128, 0.05));
  EXPECT_FALSE(reversalRefusal(current, 64, {128, 100, 10}, kNoNoiseScale, 128, 0.05));  // no move
  // Back toward 128 (to it, or short of it, or past it): measured 1280 there against 1280 here: refused.
  for (int64_t proposed : {96, 128, 200}) {
    const auto why = reversalRefusal(current, proposed, {128, 100, 10}, kNoNoiseScale, 128, 0.05);
    ASSERT_TRUE(why) << proposed;
    EXPECT_NE(why->find("within the 5% hysteresis"), std::string::npos) << *why;
  }
  // 128 measured 10% better than 64: the reversal goes ahead; 4% better: within the hysteresis, refused.
  EXPECT_FALSE(reversalRefusal(current, 128, {128, 100 / 1.10, 10}, kNoNoiseScale, 128, 0.05));
  EXPECT_TRUE(reversalRefusal(current, 128, {128, 100 / 1.04, 10}, kNoNoiseScale, 128, 0.05));
  // Too few steps at either B: no evidence, refused.
  EXPECT_TRUE(reversalRefusal({64, 50, 2}, 128, {128, 50, 10}, kNoNoiseScale, 128, 0.05));
  EXPECT_TRUE(reversalRefusal(current, 128, {128, 50, 2}, kNoNoiseScale, 128, 0.05));
}

}  // namespace
}  // namespace balancenet::adaptive
