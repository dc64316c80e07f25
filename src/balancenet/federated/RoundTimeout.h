// RoundTimeout: how long the server waits for a task's answer before it counts the client as dead, from the
// client's measured speed (a silent, e.g. SIGSTOPped, client must not hold a round up forever).
#pragma once
#include <cstdint>

namespace balancenet::federated {

// The rule's constants; see docs/federated.md ("When a client counts as dead").
struct TimeoutRule {
  double computeMultiple = 4;      // of the expected compute time: speeds vary (shared machines, pacing)
  double firstRoundS = 120;        // expected compute of a task when no client has been measured yet
  double transferBytesPerS = 1e6;  // the model's way out and back at no less than this (1 MB/s)
  double slackS = 30;              // --peer-timeout: start-up, scheduling, a slow link's latency
};

struct TaskTiming {
  int64_t samples = 0;          // assigned: local steps x batch
  double samplesPerSecond = 0;  // the client's measured speed; 0: not measured
  double slowestMeasured = 0;   // the slowest measured speed among all clients; 0: none measured
  int64_t modelBytes = 0;       // one message (header and flat model)
  double deadlineS = 0;         // the task's own deadline (0: none)
};

// Seconds of compute the server expects of the task: samples / speed (the client's own, else the slowest
// measured one), else rule.firstRoundS; with a deadline, at most the deadline.
double expectedComputeSeconds(const TaskTiming& task, const TimeoutRule& rule);

// The give-up time after sending: computeMultiple x expected compute (a task with a deadline: the deadline,
// which the client keeps itself) + two model transfers at transferBytesPerS + slackS.
double giveUpSeconds(const TaskTiming& task, const TimeoutRule& rule);

// A task's deadline (seconds of local training) under --time-budget-s: the strategy's own (0: none), cut to the
// budget's remaining time so that the clients stop at the budget and the round ends there instead of running
// on past it (at least kLeastTaskSeconds, so a task sent right at the budget still has a step's room).
// budgetS 0: no budget, the task's deadline as it was.
inline constexpr double kLeastTaskSeconds = 0.05;
double deadlineWithinBudget(double taskDeadlineS, double budgetS, double elapsedS);

}  // namespace balancenet::federated
