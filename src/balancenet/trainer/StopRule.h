// StopRule: when a run ends before --steps: at the first evaluation that reaches --stop-at-accuracy, or when
// rank 0's training time reaches --time-budget-s. Every rank reaches the same decision at the same step.
#pragma once
#include <cstdint>
#include <string>

#include "balancenet/comm/group/Collectives.h"
#include "balancenet/metrics/RunSummary.h"
#include "balancenet/trainer/TrainerOptions.h"

namespace balancenet::trainer {

enum class StopReason { Steps, Accuracy, TimeBudget };
std::string toString(StopReason reason);  // summary.json's "stopped_by": steps | accuracy | time_budget

class StopRule {
 public:
  explicit StopRule(const TrainerOptions& options);

  // An evaluation after step `point.step` (identical on every rank): the run ends there if it reaches the target.
  void observe(const metrics::EvalPoint& point);
  // Collective over `comm` when a time budget is set (nothing otherwise), after every step and before the
  // boundaries, so that a worker admitted at a boundary takes part from its first step. Rank 0 decides and
  // broadcasts the step the run ends at: one step ahead, when its training time plus the last step's would
  // reach the budget, so no boundary ever admits a worker into a run that ends there.
  void agreeOnTime(comm::Collectives& comm, int64_t done, double trainSeconds, double lastStepSeconds);

  // Whether the run ends after step `done`.
  bool endsAt(int64_t done) const { return done >= endStep_; }
  // The step the boundaries are told the run ends at after step `done`: `done` itself when it ends there,
  // else the earliest step it may end at (the next evaluation while a target is set): a boundary must not
  // admit a worker at a step the run may end at.
  int64_t horizon(int64_t done) const;
  StopReason reason() const { return reason_; }

 private:
  int64_t evalEvery_;
  double targetAccuracy_, timeBudgetS_;
  int64_t endStep_;
  StopReason reason_ = StopReason::Steps;
};

}  // namespace balancenet::trainer
