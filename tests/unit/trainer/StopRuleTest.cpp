// StopRule: the accuracy target ends the run at its evaluation; the time budget is rank 0's decision, one
// step ahead, taken by every rank; the horizon the boundaries see never lets them plan past a possible end.
#include <gtest/gtest.h>

#include <atomic>

#include "balancenet/trainer/StopRule.h"
#include "testing/ThreadRanks.h"

namespace balancenet::trainer {
namespace {

TrainerOptions options(int64_t steps, int64_t evalEvery, double accuracy, double budget) {
  TrainerOptions o;
  o.steps = steps;
  o.evalEvery = evalEvery;
  o.stopAtAccuracy = accuracy;
  o.timeBudgetS = budget;
  return o;
}

TEST(StopRule, WithoutTargetsTheRunEndsAtItsSteps) {
  StopRule rule(options(10, 5, 0, 0));
  rule.observe({5, 0.99, 0.1, 1.0});
  EXPECT_FALSE(rule.endsAt(9));
  EXPECT_TRUE(rule.endsAt(10));
  EXPECT_EQ(rule.horizon(3), 10);
  EXPECT_EQ(rule.horizon(10), 10);
  EXPECT_EQ(toString(rule.reason()), "steps");
}

TEST(StopRule, EndsAtTheFirstEvaluationReachingTheTarget) {
  StopRule rule(options(100, 4, 0.8, 0));
  // Before a possible end (the next evaluation), the boundaries see that step as the end.
  EXPECT_EQ(rule.horizon(1), 4);
  EXPECT_EQ(rule.horizon(4), 8);
  rule.observe({4, 0.79, 0.5, 1.0});
  EXPECT_FALSE(rule.endsAt(4));
  rule.observe({8, 0.80, 0.4, 2.0});
  EXPECT_TRUE(rule.endsAt(8));
  EXPECT_EQ(rule.horizon(8), 8);  // the boundaries are told the run ends here (the last checkpoint)
  EXPECT_EQ(toString(rule.reason()), "accuracy");
  rule.observe({12, 0.9, 0.3, 3.0});  // a later evaluation (after a recovery) does not move the end back out
  EXPECT_TRUE(rule.endsAt(8));
}

TEST(StopRule, TimeBudgetIsRankZerosDecisionOneStepAheadOnEveryRank) {
  std::atomic<int> agreed{0};
  testing::runRanks(3, [&](comm::Communicator& comm) {
    StopRule rule(options(1000, 0, 0, 10.0));
    // Each rank's own clock: only rank 0's counts (the others' say the budget is long past, or far off).
    const double offset = comm.rank() == 1 ? 100 : comm.rank() == 2 ? -100 : 0;
    rule.agreeOnTime(comm, 5, 8.0 + offset, 1.0);  // rank 0: 9 s after the next step, under 10
    EXPECT_FALSE(rule.endsAt(6));
    EXPECT_EQ(rule.horizon(5), 1000);
    rule.agreeOnTime(comm, 6, 9.0 + offset, 1.0);  // rank 0: the next step reaches 10 s
    EXPECT_FALSE(rule.endsAt(6));                  // never at once: a boundary at 6 may have admitted a worker
    EXPECT_EQ(rule.horizon(6), 7);                 // and none is admitted at 6 for 7
    EXPECT_TRUE(rule.endsAt(7));
    EXPECT_EQ(toString(rule.reason()), "time_budget");
    agreed += rule.endsAt(7) ? 1 : 0;
  });
  EXPECT_EQ(agreed, 3);
}

TEST(StopRule, AWorkerJoiningAfterTheDecisionLearnsTheEndFromRankZero) {
  testing::runRanks(2, [&](comm::Communicator& comm) {
    StopRule rule(options(1000, 0, 0, 10.0));
    rule.agreeOnTime(comm, 6, 9.5, 1.0);  // the end is decided: step 7
    // Rank 1 is replaced by a worker admitted at step 6 (a fresh rule, its own clock near 0): at its first
    // boundary, 7, it learns rank 0's end.
    StopRule joiner(options(1000, 0, 0, 10.0));
    auto& mine = comm.rank() == 0 ? rule : joiner;
    mine.agreeOnTime(comm, 7, comm.rank() == 0 ? 10.5 : 0.1, 1.0);
    EXPECT_TRUE(mine.endsAt(7));
    EXPECT_EQ(mine.horizon(7), 7);
  });
}

}  // namespace
}  // namespace balancenet::trainer
