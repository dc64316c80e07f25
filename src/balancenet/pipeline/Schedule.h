// Schedule: the order in which one stage runs the forwards and backwards of a step's micro-batches.
#pragma once
#include <string>
#include <vector>

namespace balancenet::pipeline {

enum class ScheduleKind { GPipe, OneFOneB };

// "gpipe" | "1f1b"; throws UsageError otherwise, listing both.
ScheduleKind parseScheduleKind(const std::string& name);
std::string scheduleName(ScheduleKind kind);

struct Action {
  enum Kind { Forward, Backward } kind;
  int micro;  // 0 .. M-1
  bool operator==(const Action& other) const { return kind == other.kind && micro == other.micro; }
};

// Stage `stage` (0-based) of `stages`, with `micros` micro-batches:
// - GPipe: F0 .. F(M-1), then B0 .. B(M-1) (in the order the last stage returns them).
// - 1F1B: min(S - 1 - stage, M) warm-up forwards, then alternately one forward and one backward until
//   the forwards are done, then the remaining backwards. Micro-batches go backward in forward order.
// Every stage runs each micro-batch's forward once and its backward once, forward first.
std::vector<Action> stageActions(ScheduleKind kind, int stage, int stages, int micros);

// The most micro-batches whose activations a stage holds at once under its action list (forwarded,
// not yet backwarded): M for GPipe, min(S - stage, M) for 1F1B.
int peakInFlight(const std::vector<Action>& actions);

// Runs all stages' action lists against each other, each action taking one unit of time, where a
// forward of micro m at stage s > 0 needs stage s-1's forward of m done, and a backward of m at stage
// s < S-1 needs stage s+1's backward of m done (receives block; sends never do: the engine posts them
// asynchronously). Returns each stage's (start time) per action, in list order; throws InternalError
// naming the stuck stages if some action can never start (a deadlock).
// The proof by exhaustion the tests run for every schedule, S and M; also the analytical timeline.
std::vector<std::vector<int>> simulateSchedule(ScheduleKind kind, int stages, int micros);
// The same for any action lists (stage s runs lists[s]), whatever their origin: simulateSchedule runs it on
// stageActions's lists; tests run it on broken lists to show that it does find a deadlock. Here a backward
// of m also needs the same stage's forward of m done (its activations).
std::vector<std::vector<int>> simulateActions(const std::vector<std::vector<Action>>& lists);

// (S - 1) / (M + S - 1): the idle fraction of a flushed pipeline of equal stages.
double analyticalBubble(int stages, int micros);

}  // namespace balancenet::pipeline
