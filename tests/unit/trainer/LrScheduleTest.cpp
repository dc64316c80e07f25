// Learning-rate schedules, checked against values computed by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "balancenet/core/Error.h"
#include "balancenet/trainer/LrSchedule.h"

namespace balancenet::trainer {
namespace {

TEST(LrSchedule, WarmupThenCosineToTheMinimum) {
  LrSchedule s;
  s.baseLr = 0.1;
  s.warmupSteps = 4;
  s.decay = LrSchedule::Decay::Cosine;
  s.totalSteps = 14;
  s.minLr = 0.01;
  EXPECT_DOUBLE_EQ(s.at(0), 0.025);
  EXPECT_DOUBLE_EQ(s.at(3), 0.1);
  EXPECT_DOUBLE_EQ(s.at(4), 0.1);
  EXPECT_NEAR(s.at(9), 0.01 + 0.09 * 0.5, 1e-12);  // half way through the decay
  EXPECT_NEAR(s.at(14), 0.01, 1e-12);
  EXPECT_NEAR(s.at(100), 0.01, 1e-12);  // stays at the floor past the end
}

TEST(LrSchedule, StepDecay) {
  LrSchedule s;
  s.baseLr = 1;
  s.decay = LrSchedule::Decay::Step;
  s.stepEvery = 10;
  s.gamma = 0.5;
  EXPECT_DOUBLE_EQ(s.at(9), 1);
  EXPECT_DOUBLE_EQ(s.at(10), 0.5);
  EXPECT_DOUBLE_EQ(s.at(25), 0.25);
}

TEST(LrSchedule, ParsesNamesAndRejectsOthers) {
  EXPECT_EQ(LrSchedule::parseDecay("cosine"), LrSchedule::Decay::Cosine);
  EXPECT_EQ(LrSchedule::parseDecay("constant"), LrSchedule::Decay::Constant);
  EXPECT_THROW(LrSchedule::parseDecay("linear"), UsageError);
}

}  // namespace
}  // namespace balancenet::trainer
