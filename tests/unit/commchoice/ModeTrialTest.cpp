// ModeTrial: the round-robin schedule, the median decision, late and missing times, drift that lasts, the trials'
// share of the steps.
#include <gtest/gtest.h>

#include "balancenet/commchoice/ModeTrial.h"

namespace balancenet::commchoice {
namespace {

// Runs `steps` steps, each mode taking `msOf(mode, step)`, the time of each step recorded one step late (as
// AutoSync does, the job's first step has none). Returns the mode of every step.
template <typename MsOf>
std::vector<int> run(ModeTrial& trial, int64_t steps, MsOf msOf) {
  std::vector<int> modes;
  for (int64_t s = 0; s < steps; ++s) {
    modes.push_back(trial.modeFor(s));
    if (s >= 2) trial.record(s - 1, msOf(modes[s - 1], s - 1));
  }
  return modes;
}

// As run(), with the split of each step noted before its mode is asked for (AutoSync::beginStep).
template <typename SplitOf, typename MsOf>
std::vector<int> runWithSplits(ModeTrial& trial, int64_t steps, SplitOf splitOf, MsOf msOf) {
  std::vector<int> modes;
  for (int64_t s = 0; s < steps; ++s) {
    trial.noteSplit(s, splitOf(s));
    modes.push_back(trial.modeFor(s));
    if (s >= 2) trial.record(s - 1, msOf(modes[s - 1], s - 1));
  }
  return modes;
}

const std::vector<int64_t> kEqual{32, 32, 32, 32};
const std::vector<int64_t> kSettled{42, 40, 40, 6};  // T1's: the 0.11-core host with 6 of 128

TEST(ModeTrialTest, SplitMovedIsTheShareOfTheBatchThatChangedHands) {
  EXPECT_DOUBLE_EQ(splitMoved(kEqual, kEqual), 0);
  EXPECT_DOUBLE_EQ(splitMoved({1, 1}, {3, 1}), 0.25);
  EXPECT_DOUBLE_EQ(splitMoved({2, 2}, {1, 1}), 0);               // the same proportions of another batch
  EXPECT_NEAR(splitMoved(kEqual, kSettled), 26.0 / 128, 1e-12);  // 10 + 8 + 8 to the fast hosts, from the slow one
  EXPECT_DOUBLE_EQ(splitMoved({1, 1}, {1, 1, 1}), 1);            // another world
}

// Under the first split a is faster, under the settled one b: a trial that mixed both would keep a (its medians are
// mostly the first split's); started again at the move, it measures the split the job runs and keeps b.
TEST(ModeTrialTest, ATrialStartsAgainWhereTheSplitMovesAndDecidesWithTheNewSplit) {
  ModeTrial trial({"a", "b"}, TrialSettings{1, 3});
  const auto splitOf = [](int64_t s) { return s < 6 ? kEqual : kSettled; };
  const auto msOf = [&](int mode, int64_t s) {
    if (s < 6) return mode == 0 ? 50.0 : 100.0;
    return mode == 0 ? 20.0 : 10.0;
  };
  const auto modes = runWithSplits(trial, 20, splitOf, msOf);
  ASSERT_EQ(trial.decisions().size(), 1u);
  const auto& d = trial.decisions()[0];
  EXPECT_EQ(d.chosen, 1);
  EXPECT_EQ(d.split, kSettled);
  EXPECT_EQ(d.medianMs, (std::vector<double>{20, 10}));
  EXPECT_NE(d.reason.find("again from step 6: the split moved"), std::string::npos) << d.reason;
  for (int s = 6; s < 14; ++s) EXPECT_EQ(modes[s], (s - 6) % 2) << s;  // the round robin from step 6
  // Counted once: the first attempt's 6 steps and the second's 8.
  EXPECT_EQ(trial.stepsInTrials(), 14);

  // The same times without the splits noted: the mixed trial keeps a.
  ModeTrial blind({"a", "b"}, TrialSettings{1, 3});
  run(blind, 20, msOf);
  ASSERT_EQ(blind.decisions().size(), 1u);
  EXPECT_EQ(blind.decisions()[0].chosen, 0);
}

TEST(ModeTrialTest, ASmallMoveOfTheSplitDoesNotStartTheTrialAgain) {
  ModeTrial trial({"a", "b"}, TrialSettings{1, 3});
  const std::vector<int64_t> nudged{34, 32, 31, 31};  // 2 of 128 moved: under 10%
  runWithSplits(
      trial, 12, [&](int64_t s) { return s < 4 ? kEqual : nudged; }, [](int mode, int64_t) { return 10.0 + mode; });
  ASSERT_EQ(trial.decisions().size(), 1u);
  EXPECT_EQ(trial.decisions()[0].reason, "start");
  EXPECT_EQ(trial.decisions()[0].step, 7);
}

// A policy that keeps moving the split cannot keep the trial from ending: after maxSplitRestarts it runs to the end.
TEST(ModeTrialTest, TheSplitStartsATrialAgainAtMostMaxSplitRestartsTimes) {
  TrialSettings settings{1, 3};
  settings.maxSplitRestarts = 2;
  ModeTrial trial({"a", "b"}, settings);
  runWithSplits(
      trial, 40, [](int64_t s) { return (s / 3) % 2 == 0 ? kEqual : kSettled; },
      [](int mode, int64_t) { return 10.0 + mode; });
  ASSERT_EQ(trial.decisions().size(), 1u);
  EXPECT_EQ(trial.decisions()[0].step, 6 + 7);  // restarts at steps 3 and 6, then 8 steps
}

// Once decided, a split that moved for good (a host that got faster or slower) is measured again, as a drift is:
// not sooner than minStepsBetween after the decision, within the trials' share.
TEST(ModeTrialTest, AfterTheDecisionAMovedSplitStartsANewTrial) {
  TrialSettings settings{1, 3};
  settings.minStepsBetween = 20;
  settings.maxTrialShare = 1;
  ModeTrial trial({"a", "b"}, settings);
  runWithSplits(
      trial, 60, [](int64_t s) { return s < 15 ? kEqual : kSettled; }, [](int mode, int64_t) { return 10.0 + mode; });
  ASSERT_EQ(trial.decisions().size(), 2u);
  EXPECT_EQ(trial.decisions()[0].split, kEqual);
  EXPECT_EQ(trial.decisions()[1].split, kSettled);
  EXPECT_NE(trial.decisions()[1].reason.find("the split moved"), std::string::npos) << trial.decisions()[1].reason;
  EXPECT_EQ(trial.decisions()[1].step, 27 + 7);  // not before step 7 + 20, then 8 steps
}

TEST(ModeTrialTest, TriesEveryCandidateRoundRobinThenKeepsTheFastest) {
  ModeTrial trial({"a", "b", "c"}, TrialSettings{1, 3});
  EXPECT_EQ(trial.trialSteps(), 12);
  const auto modes = run(trial, 30, [](int mode, int64_t) { return mode == 1 ? 10.0 : 20.0; });
  for (int s = 0; s < 12; ++s) EXPECT_EQ(modes[s], s % 3) << s;
  ASSERT_EQ(trial.decisions().size(), 1u);
  EXPECT_EQ(trial.decisions()[0].chosen, 1);
  EXPECT_EQ(trial.decisions()[0].medianMs, (std::vector<double>{20, 10, 20}));
  EXPECT_EQ(trial.decisions()[0].reason, "start");
  for (int s = 13; s < 30; ++s) EXPECT_EQ(modes[s], 1) << s;
  EXPECT_TRUE(trial.decided());
}

TEST(ModeTrialTest, WarmUpRoundIsDroppedAndTheMedianResistsOneOutlier) {
  ModeTrial trial({"a", "b"}, TrialSettings{1, 3});
  // a's first use is very slow (connection set-up), and one of b's measured steps is hit by a stall.
  run(trial, 12, [](int mode, int64_t s) {
    if (mode == 0) return s == 0 ? 500.0 : 12.0;
    return s == 5 ? 90.0 : 11.0;
  });
  ASSERT_EQ(trial.decisions().size(), 1u);
  EXPECT_EQ(trial.decisions()[0].chosen, 1);
  EXPECT_DOUBLE_EQ(trial.decisions()[0].medianMs[1], 11.0);
}

TEST(ModeTrialTest, TieGoesToTheEarlierCandidate) {
  ModeTrial trial({"a", "b"}, TrialSettings{1, 2});
  run(trial, 10, [](int, int64_t) { return 7.0; });
  ASSERT_FALSE(trial.decisions().empty());
  EXPECT_EQ(trial.decisions()[0].chosen, 0);
}

TEST(ModeTrialTest, StepAfterTheTrialRunsTheBestSoFarUntilTheLastTimeArrives) {
  ModeTrial trial({"a", "b"}, TrialSettings{0, 2});
  std::vector<double> ms{30, 10, 30, 10};
  for (int64_t s = 0; s < 4; ++s) {
    EXPECT_EQ(trial.modeFor(s), s % 2);
    if (s >= 1) trial.record(s - 1, ms[s - 1]);
  }
  EXPECT_FALSE(trial.decided());
  EXPECT_EQ(trial.modeFor(4), 1);  // b's one time so far beats a's
  EXPECT_TRUE(trial.record(3, ms[3]));
  EXPECT_TRUE(trial.decided());
}

TEST(ModeTrialTest, DriftStartsANewTrialNotSoonerThanAllowed) {
  TrialSettings settings{1, 2, 4, 0.25, 20, 8, 0.2};
  ModeTrial trial({"a", "b"}, settings);
  // b is fastest until step 40, then it becomes three times slower than a.
  const auto modes = run(trial, 80, [](int mode, int64_t s) {
    if (mode == 0) return 15.0;
    return s < 40 ? 10.0 : 45.0;
  });
  ASSERT_GE(trial.decisions().size(), 2u);
  EXPECT_EQ(trial.decisions()[0].chosen, 1);
  EXPECT_EQ(trial.decisions()[1].chosen, 0);
  EXPECT_NE(trial.decisions()[1].reason.find("drifted"), std::string::npos);
  EXPECT_GE(trial.decisions()[1].step - trial.decisions()[0].step, settings.minStepsBetween);
  EXPECT_EQ(modes.back(), 0);
}

TEST(ModeTrialTest, SteadyTimesNeverStartAnotherTrial) {
  ModeTrial trial({"a", "b", "c"}, TrialSettings{1, 3, 8, 0.25, 10});
  run(trial, 300, [](int mode, int64_t s) { return 10.0 + mode + 0.5 * (s % 3); });
  EXPECT_EQ(trial.decisions().size(), 1u);
}

// A stall of a few steps (a neighbour's burst on a shared machine) moves a window's median, but does not last: no
// re-trial, whose slower modes would cost more than the stall.
TEST(ModeTrialTest, ADriftThatPassesStartsNoTrial) {
  ModeTrial trial({"a", "b"}, TrialSettings{1, 2, 4, 0.25, 20, 8, 1.0});
  run(trial, 400, [](int mode, int64_t s) {
    const bool stalled = s % 100 >= 60 && s % 100 < 66;  // 6 slow steps every 100
    return (mode == 0 ? 15.0 : 10.0) * (stalled ? 3 : 1);
  });
  EXPECT_EQ(trial.decisions().size(), 1u);
  EXPECT_EQ(trial.stepsInTrials(), 6);
}

// Times that drift for good again and again (a split that keeps moving): the trials stay within their share of
// the steps, the first one with them.
TEST(ModeTrialTest, TrialsStayWithinTheirShareOfTheSteps) {
  TrialSettings settings{1, 3, 8, 0.25, 20};  // 4 candidates: 16 steps a trial; 5% of the steps
  ModeTrial trial({"a", "b", "c", "d"}, settings);
  const int64_t steps = 2000;
  // Every 50 steps the time doubles or halves: each phase is a lasting drift.
  run(trial, steps, [](int mode, int64_t s) { return (10.0 + mode) * ((s / 50) % 2 ? 2 : 1); });
  const auto& decisions = trial.decisions();
  for (size_t k = 1; k < decisions.size(); ++k)  // the trials up to the k-th re-trial, within the share at its end
    EXPECT_LE(static_cast<double>((k + 1) * trial.trialSteps()), settings.maxTrialShare * (decisions[k].step + 1))
        << "re-trial decided at step " << decisions[k].step;
  EXPECT_LE(trial.stepsInTrials(), settings.maxTrialShare * steps);
  EXPECT_GE(trial.decisions().size(), 3u) << "lasting drifts re-try within the share";
}

TEST(ModeTrialTest, ACandidateWithAMarginMustBeatTheChoiceBeforeItByThatMuch) {
  const std::vector<double> margins{0, 0.1, 0.1};
  EXPECT_EQ(chooseOf({100, 95, 99}, margins), 0) << "5% faster is within the noise a lossy exchange must clear";
  EXPECT_EQ(chooseOf({100, 90, 99}, margins), 1) << "90 * 1.1 = 99 < 100";
  EXPECT_EQ(chooseOf({100, 50, 46}, margins), 1) << "the third must beat the second's 50 by 10%, not only the first";
  EXPECT_EQ(chooseOf({100, 50, 40}, margins), 2);
  EXPECT_EQ(chooseOf({0, 50, 40}, margins), 2) << "a candidate without a time never wins";
  EXPECT_EQ(chooseOf({100, 95}, {}), 1) << "no margins: the least median";
}

TEST(ModeTrialTest, TheTrialKeepsTheExactModeWhereTheLossyOneOnlyTies) {
  ModeTrial trial({"exact", "lossy"}, TrialSettings{1, 3}, {0, 0.1});
  run(trial, 20, [](int mode, int64_t) { return mode == 0 ? 100.0 : 97.0; });
  ASSERT_EQ(trial.decisions().size(), 1u);
  EXPECT_EQ(trial.decisions()[0].chosen, 0);
  ModeTrial slowLink({"exact", "lossy"}, TrialSettings{1, 3}, {0, 0.1});
  run(slowLink, 20, [](int mode, int64_t) { return mode == 0 ? 100.0 : 30.0; });
  EXPECT_EQ(slowLink.decisions()[0].chosen, 1);
}

// A float32 exchange on a slow link: after the first measured round, b (20x the fastest so far) runs no more rounds;
// a (2.5x) stays within dropRatio and runs them all. Times arrive a step late: at the second measured round's start
// c's first time is still on its way, so only a's and b's count.
TEST(ModeTrialTest, ACandidateFarSlowerAfterItsFirstRoundRunsNoMore) {
  ModeTrial trial({"a", "b", "c"}, TrialSettings{1, 3});
  EXPECT_EQ(trial.trialSteps(), 12);  // at most
  const auto modes = run(trial, 20, [](int mode, int64_t) { return mode == 0 ? 50.0 : mode == 1 ? 400.0 : 20.0; });
  EXPECT_EQ(std::vector<int>(modes.begin(), modes.begin() + 10), (std::vector<int>{0, 1, 2, 0, 1, 2, 0, 2, 0, 2}));
  ASSERT_EQ(trial.decisions().size(), 1u);
  const auto& d = trial.decisions()[0];
  EXPECT_EQ(d.chosen, 2);
  EXPECT_EQ(d.dropped, (std::vector<bool>{false, true, false}));
  EXPECT_DOUBLE_EQ(d.medianMs[1], 400.0);  // its one measured step, reported
  EXPECT_EQ(trial.stepsInTrials(), 10);
  for (int s = 10; s < 20; ++s) EXPECT_EQ(modes[s], 2) << s;
  ModeTrial everyRound({"a", "b", "c"}, TrialSettings{1, 3, 8, 0.25, 100, 8, 0.05, 0});  // dropRatio 0: never
  run(everyRound, 20, [](int mode, int64_t) { return mode == 0 ? 50.0 : mode == 1 ? 400.0 : 20.0; });
  EXPECT_EQ(everyRound.stepsInTrials(), 12);
}

// The drop compares best steps: b, the fastest, stalls on its first measured step (60 ms for 17), which put the
// fastest median so far at 38.5 and kept a (80 ms, 4.7x b's 17) in every round; b's best drops it from the third.
TEST(ModeTrialTest, AStallOnTheFastestsFirstStepDoesNotKeepAFarSlowerCandidate) {
  ModeTrial trial({"a", "b", "c"}, TrialSettings{1, 3});
  const auto modes = run(trial, 14, [](int mode, int64_t s) {
    if (mode == 0) return 80.0;
    if (mode == 1) return s == 4 ? 60.0 : 17.0;
    return 40.0;
  });
  EXPECT_EQ(std::vector<int>(modes.begin(), modes.begin() + 11), (std::vector<int>{0, 1, 2, 0, 1, 2, 0, 1, 2, 1, 2}));
  ASSERT_EQ(trial.decisions().size(), 1u);
  EXPECT_EQ(trial.decisions()[0].dropped, (std::vector<bool>{true, false, false}));
  EXPECT_EQ(trial.decisions()[0].chosen, 1);
}

TEST(ModeTrialTest, MedianOfEvenAndOddCounts) {
  EXPECT_DOUBLE_EQ(medianOf({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(medianOf({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(medianOf({}), 0);
}

}  // namespace
}  // namespace balancenet::commchoice
