// fp16's dynamic loss scale: GradScaler's rule, step by step.
#include "balancenet/precision/LossScaler.h"

#include <gtest/gtest.h>

#include "balancenet/core/Error.h"

namespace balancenet::precision {
namespace {

TEST(LossScaler, StartsAtTwoToTheSixteenAndDoublesAfterTheGrowthInterval) {
  LossScaler scaler({/*initialScale=*/65536, 2, 0.5, /*growthInterval=*/3, 50});
  EXPECT_EQ(scaler.scale(), 65536);
  EXPECT_TRUE(scaler.update(true));
  EXPECT_TRUE(scaler.update(true));
  EXPECT_EQ(scaler.scale(), 65536);
  EXPECT_TRUE(scaler.update(true));
  EXPECT_EQ(scaler.scale(), 131072);  // the third good step in a row
  EXPECT_EQ(scaler.state().goodSteps, 0);
  EXPECT_EQ(scaler.skippedSteps(), 0);
}

TEST(LossScaler, AnOverflowSkipsTheStepHalvesTheScaleAndRestartsTheGrowthCount) {
  LossScaler scaler({1024, 2, 0.5, /*growthInterval=*/2, 50});
  EXPECT_TRUE(scaler.update(true));
  EXPECT_FALSE(scaler.update(false));
  EXPECT_EQ(scaler.scale(), 512);
  EXPECT_EQ(scaler.state().goodSteps, 0);
  EXPECT_TRUE(scaler.update(true));
  EXPECT_EQ(scaler.scale(), 512);  // one good step since the overflow, not two
  EXPECT_TRUE(scaler.update(true));
  EXPECT_EQ(scaler.scale(), 1024);
  EXPECT_EQ(scaler.skippedSteps(), 1);
}

TEST(LossScaler, TooManySkipsInARowStopTheRunInOneLine) {
  LossScaler scaler({65536, 2, 0.5, 2000, /*maxSkipsInARow=*/4});
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(scaler.update(false));
  EXPECT_TRUE(scaler.update(true));  // a good step resets the count
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(scaler.update(false));
  try {
    scaler.update(false);
    FAIL() << "the fourth skip in a row did not stop the run";
  } catch (const RuntimeFailure& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos);
    EXPECT_NE(message.find("not finite in 4 steps in a row"), std::string::npos) << message;
    EXPECT_NE(message.find("--precision bf16"), std::string::npos) << message;
  }
}

TEST(LossScaler, ARestoredStateGoesOnAsTheSavedOneWould) {
  const LossScalerOptions options{1024, 2, 0.5, /*growthInterval=*/3, 50};
  LossScaler a(options);
  a.update(true);
  a.update(false);
  a.update(true);
  LossScaler b(options);
  b.restore(a.state());
  for (bool finite : {true, true, false, true}) EXPECT_EQ(a.update(finite), b.update(finite));
  EXPECT_EQ(a.scale(), b.scale());
  EXPECT_EQ(a.state().goodSteps, b.state().goodSteps);
  EXPECT_EQ(a.skippedSteps(), 2);
  EXPECT_EQ(b.skippedSteps(), 2);
}

}  // namespace
}  // namespace balancenet::precision
