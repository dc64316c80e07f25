// StepClock: compute, sync and data times of a step from the events a Python loop reports.
#include "balancenet/session/StepClock.h"

#include <gtest/gtest.h>

namespace balancenet::session {
namespace {

using Clock = StepClock::Clock;
Clock::time_point at(double ms) {
  return Clock::time_point(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(ms)));
}

TEST(StepClock, OneBackwardSplitsTheStepIntoComputeAndTheSyncAfterIt) {
  StepClock clock;
  clock.begin(at(1000));
  clock.dataLoaded(4);
  clock.backwardDone(at(1030));  // 30 ms of forward and backward
  clock.reduced(at(1020));       // an early bucket finished during backward: no wait
  clock.reduced(at(1042));       // the last one 12 ms after backward
  const auto t = clock.end(at(1050));
  EXPECT_DOUBLE_EQ(t.computeMs, 30);
  EXPECT_NEAR(t.syncMs, 12, 1e-9);
  EXPECT_DOUBLE_EQ(t.updateMs, 50);
  EXPECT_DOUBLE_EQ(t.dataMs, 4);
  EXPECT_FALSE(clock.running());
}

TEST(StepClock, AccumulatedBackwardsAddTheirSyncsAndComputeExcludesThem) {
  StepClock clock;
  clock.begin(at(0));
  clock.backwardDone(at(10));
  clock.reduced(at(15));  // first micro-batch's sync: 5 ms
  clock.backwardDone(at(25));
  clock.reduced(at(28));  // second: 3 ms
  const auto t = clock.end(at(30));
  EXPECT_NEAR(t.syncMs, 8, 1e-9);
  EXPECT_NEAR(t.computeMs, 20, 1e-9);  // 25 ms to the last backward, less the 5 ms waited before it
  EXPECT_NEAR(clock.computeMsAt(at(30)), 22, 1e-9);
}

TEST(StepClock, ALateCallbackOfAnEarlierBucketDoesNotShortenTheSync) {
  StepClock clock;
  clock.begin(at(0));
  clock.backwardDone(at(10));
  clock.reduced(at(20));
  clock.reduced(at(12));
  EXPECT_NEAR(clock.end(at(21)).syncMs, 10, 1e-9);
}

TEST(StepClock, WithoutAReportedBackwardTheWholeStepIsCompute) {
  StepClock clock;
  clock.begin(at(0));
  const auto t = clock.end(at(40));
  EXPECT_DOUBLE_EQ(t.computeMs, 40);
  EXPECT_DOUBLE_EQ(t.syncMs, 0);
}

TEST(StepClock, ANewStepStartsFromZero) {
  StepClock clock;
  clock.begin(at(0));
  clock.dataLoaded(7);
  clock.backwardDone(at(5));
  clock.reduced(at(9));
  clock.end(at(10));
  clock.begin(at(100));
  const auto t = clock.end(at(110));
  EXPECT_DOUBLE_EQ(t.dataMs, 0);
  EXPECT_DOUBLE_EQ(t.syncMs, 0);
  EXPECT_DOUBLE_EQ(t.computeMs, 10);
}

}  // namespace
}  // namespace balancenet::session
