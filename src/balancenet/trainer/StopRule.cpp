// Ending a run early, the same step on every rank.
#include "balancenet/trainer/StopRule.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace balancenet::trainer {

std::string toString(StopReason reason) {
  switch (reason) {
    case StopReason::Accuracy:
      return "accuracy";
    case StopReason::TimeBudget:
      return "time_budget";
    case StopReason::Steps:
      break;
  }
  return "steps";
}

StopRule::StopRule(const TrainerOptions& options)
    : evalEvery_(options.evalEvery),
      targetAccuracy_(options.stopAtAccuracy),
      timeBudgetS_(options.timeBudgetS),
      endStep_(options.steps) {}

void StopRule::observe(const metrics::EvalPoint& point) {
  if (targetAccuracy_ <= 0 || point.accuracy < targetAccuracy_ || point.step >= endStep_) return;
  endStep_ = point.step;
  reason_ = StopReason::Accuracy;
}

void StopRule::agreeOnTime(comm::Collectives& comm, int64_t done, double trainSeconds, double lastStepSeconds) {
  if (timeBudgetS_ <= 0) return;
  // Rank 0's proposal; a decided end (an earlier one, or the accuracy's) stays.
  int64_t end = endStep_;
  if (comm.rank() == 0 && end > done + 1 && trainSeconds + lastStepSeconds >= timeBudgetS_) end = done + 1;
  std::vector<at::Tensor> decision{at::full({1}, end, at::kLong)};
  comm.broadcast(decision, 0);
  const int64_t agreed = decision[0].item<int64_t>();
  if (agreed < endStep_) {
    endStep_ = agreed;
    reason_ = StopReason::TimeBudget;
  }
}

int64_t StopRule::horizon(int64_t done) const {
  if (endsAt(done)) return done;
  int64_t earliest = endStep_;
  if (targetAccuracy_ > 0 && evalEvery_ > 0) earliest = std::min(earliest, (done / evalEvery_ + 1) * evalEvery_);
  return earliest;
}

}  // namespace balancenet::trainer
