// Schedules: the action lists of gpipe and 1f1b, and the simulation that proves them deadlock-free for every
// S = 1..8 and M = 1..2S+1 (the S = 2, 3, 4 with M = 1, S, 2S+1 among them).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "balancenet/core/Error.h"
#include "balancenet/pipeline/Schedule.h"
#include "testing/UsageErrors.h"

namespace balancenet::pipeline {
namespace {

using testing::usageErrorOf;
const ScheduleKind kKinds[] = {ScheduleKind::GPipe, ScheduleKind::OneFOneB};

Action F(int micro) { return {Action::Forward, micro}; }
Action B(int micro) { return {Action::Backward, micro}; }

// The InternalError's message simulateActions throws for `lists`, or "<no InternalError>".
std::string deadlockOf(const std::vector<std::vector<Action>>& lists) {
  try {
    simulateActions(lists);
  } catch (const InternalError& e) {
    return e.what();
  }
  return "<no InternalError>";
}

int positionOf(const std::vector<Action>& actions, const Action& action) {
  return static_cast<int>(std::find(actions.begin(), actions.end(), action) - actions.begin());
}

// f_s(k) of docs/pipeline.md: how many forwards come before `action` in the list.
int forwardsBefore(const std::vector<Action>& actions, const Action& action) {
  const auto at = std::find(actions.begin(), actions.end(), action);
  return static_cast<int>(
      std::count_if(actions.begin(), at, [](const Action& a) { return a.kind == Action::Forward; }));
}

TEST(ScheduleKind, ParsesBothNamesAndRefusesOthersNamingThem) {
  EXPECT_EQ(parseScheduleKind("gpipe"), ScheduleKind::GPipe);
  EXPECT_EQ(parseScheduleKind("1f1b"), ScheduleKind::OneFOneB);
  for (auto kind : kKinds) EXPECT_EQ(parseScheduleKind(scheduleName(kind)), kind);
  EXPECT_EQ(usageErrorOf([] { parseScheduleKind("1F1B"); }), "--schedule must be gpipe or 1f1b; got '1F1B'");
  EXPECT_EQ(usageErrorOf([] { parseScheduleKind(""); }), "--schedule must be gpipe or 1f1b; got ''");
}

TEST(StageActions, GPipeRunsEveryForwardThenEveryBackward) {
  const std::vector<Action> expected{F(0), F(1), F(2), B(0), B(1), B(2)};
  for (int stage = 0; stage < 3; ++stage) EXPECT_EQ(stageActions(ScheduleKind::GPipe, stage, 3, 3), expected);
}

TEST(StageActions, OneFOneBMatchesTheHandWrittenListsForFourStagesAndEightMicroBatches) {
  // Stage 0 warms up with S-1 = 3 forwards; the last stage answers each forward at once.
  EXPECT_EQ(stageActions(ScheduleKind::OneFOneB, 0, 4, 8),
            (std::vector<Action>{F(0), F(1), F(2), F(3), B(0), F(4), B(1), F(5), B(2), F(6), B(3), F(7), B(4), B(5),
                                 B(6), B(7)}));
  EXPECT_EQ(stageActions(ScheduleKind::OneFOneB, 1, 4, 8),
            (std::vector<Action>{F(0), F(1), F(2), B(0), F(3), B(1), F(4), B(2), F(5), B(3), F(6), B(4), F(7), B(5),
                                 B(6), B(7)}));
  EXPECT_EQ(stageActions(ScheduleKind::OneFOneB, 3, 4, 8),
            (std::vector<Action>{F(0), B(0), F(1), B(1), F(2), B(2), F(3), B(3), F(4), B(4), F(5), B(5), F(6), B(6),
                                 F(7), B(7)}));
  // Fewer micro-batches than the warm-up: all forwards, then all backwards.
  EXPECT_EQ(stageActions(ScheduleKind::OneFOneB, 0, 4, 2), (std::vector<Action>{F(0), F(1), B(0), B(1)}));
}

TEST(StageActions, RefusesImpossibleArgumentsAsABug) {
  EXPECT_THROW(stageActions(ScheduleKind::GPipe, 4, 4, 8), InternalError);
  EXPECT_THROW(stageActions(ScheduleKind::GPipe, -1, 4, 8), InternalError);
  EXPECT_THROW(stageActions(ScheduleKind::OneFOneB, 0, 4, 0), InternalError);
  EXPECT_THROW(stageActions(ScheduleKind::OneFOneB, 0, 0, 1), InternalError);
}

TEST(PeakInFlight, CountsForwardedMicroBatchesNotYetBackwarded) {
  EXPECT_EQ(peakInFlight({}), 0);
  EXPECT_EQ(peakInFlight({F(0), B(0), F(1), B(1)}), 1);
  EXPECT_EQ(peakInFlight({F(0), F(1), B(0), F(2), F(3), B(1), B(2), B(3)}), 3);
}

TEST(Simulation, TimesTwoStagesOfOneFOneBByHand) {
  // Stage 0: F0@0 F1@1, then B0 once stage 1 did F0@1 B0@2, B1 after stage 1's F1@3 B1@4.
  const auto starts = simulateSchedule(ScheduleKind::OneFOneB, 2, 2);
  EXPECT_EQ(starts[0], (std::vector<int>{0, 1, 3, 5}));
  EXPECT_EQ(starts[1], (std::vector<int>{1, 2, 3, 4}));
}

// The exhaustive check the deadlock-freedom argument of docs/pipeline.md refers to.
TEST(Simulation, EverySchedulePassesEveryMicroBatchOnceWithoutDeadlockAndTheExpectedBubble) {
  for (auto kind : kKinds) {
    for (int S = 1; S <= 8; ++S) {
      for (int M = 1; M <= 2 * S + 1; ++M) {
        SCOPED_TRACE(scheduleName(kind) + " S=" + std::to_string(S) + " M=" + std::to_string(M));
        std::vector<std::vector<Action>> lists;
        for (int s = 0; s < S; ++s) {
          const auto actions = stageActions(kind, s, S, M);
          ASSERT_EQ(actions.size(), static_cast<size_t>(2 * M)) << "stage " << s;
          std::vector<int> backwardOrder;
          for (int m = 0; m < M; ++m) {
            const int f = positionOf(actions, F(m)), b = positionOf(actions, B(m));
            EXPECT_EQ(std::count(actions.begin(), actions.end(), F(m)), 1) << "stage " << s << " F" << m;
            EXPECT_EQ(std::count(actions.begin(), actions.end(), B(m)), 1) << "stage " << s << " B" << m;
            EXPECT_LT(f, b) << "stage " << s << " micro " << m;
          }
          for (const auto& a : actions)
            if (a.kind == Action::Backward) backwardOrder.push_back(a.micro);
          EXPECT_TRUE(std::is_sorted(backwardOrder.begin(), backwardOrder.end())) << "stage " << s;
          EXPECT_EQ(peakInFlight(actions), kind == ScheduleKind::GPipe ? M : std::min(S - s, M)) << "stage " << s;
          // docs/pipeline.md's premise: before B(k), a stage has forwarded at least what the next one has.
          for (int k = 0; s > 0 && k < M; ++k) {
            EXPECT_GE(forwardsBefore(lists[s - 1], B(k)), forwardsBefore(actions, B(k))) << "stage " << s << " B" << k;
          }
          lists.push_back(actions);
        }
        std::vector<std::vector<int>> starts;
        ASSERT_NO_THROW(starts = simulateSchedule(kind, S, M));
        int makespan = 0;
        for (int s = 0; s < S; ++s) {
          ASSERT_EQ(starts[s].size(), lists[s].size());
          // One action at a time, in list order; a forward never before the stage before finished it.
          EXPECT_TRUE(std::adjacent_find(starts[s].begin(), starts[s].end(), std::greater_equal<int>()) ==
                      starts[s].end());
          for (int m = 0; s > 0 && m < M; ++m) {
            EXPECT_GE(starts[s][positionOf(lists[s], F(m))], starts[s - 1][positionOf(lists[s - 1], F(m))] + 1);
          }
          makespan = std::max(makespan, starts[s].back() + 1);
        }
        EXPECT_EQ(makespan, 2 * (M + S - 1));
        // Each stage is busy 2M of the makespan's units: the rest is the bubble.
        EXPECT_DOUBLE_EQ(1.0 - 2.0 * M / makespan, analyticalBubble(S, M));
      }
    }
  }
}

TEST(Simulation, FindsTheDeadlockOfAFirstStageThatSkipsItsWarmUp) {
  // Stage 0 waits for the gradient of micro 0 while stage 1 waits for the activation of micro 1.
  EXPECT_EQ(deadlockOf({{F(0), B(0), F(1), B(1)}, {F(0), F(1), B(0), B(1)}}),
            "internal error (a bug; please report it): pipeline schedule deadlock at time 2: stage 0 waits to run B0 "
            "for stage 1's B0; stage 1 waits to run F1 for stage 0's F1");
}

TEST(Simulation, FindsABackwardBeforeItsOwnForwardAndAForwardThatNeverComes) {
  EXPECT_NE(deadlockOf({{B(0), F(0)}}).find("stage 0 waits to run B0 for its own F0"), std::string::npos);
  // Stage 0 never runs F1: once it has finished, stage 1 waits alone.
  EXPECT_EQ(deadlockOf({{F(0), B(0)}, {F(0), B(0), F(1), B(1)}}),
            "internal error (a bug; please report it): pipeline schedule deadlock at time 4: stage 1 waits to run F1 "
            "for stage 0's F1");
  EXPECT_EQ(deadlockOf({{F(0), B(0)}, {F(0), B(0)}}), "<no InternalError>");
}

TEST(AnalyticalBubble, IsStagesMinusOneOverMicroBatchesPlusStagesMinusOne) {
  EXPECT_DOUBLE_EQ(analyticalBubble(4, 8), 3.0 / 11.0);
  EXPECT_DOUBLE_EQ(analyticalBubble(1, 5), 0.0);
}

}  // namespace
}  // namespace balancenet::pipeline
