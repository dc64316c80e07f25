// The give-up time of a task (see RoundTimeout.h).
#include "balancenet/federated/RoundTimeout.h"

#include <algorithm>

namespace balancenet::federated {

double expectedComputeSeconds(const TaskTiming& task, const TimeoutRule& rule) {
  const double speed = task.samplesPerSecond > 0 ? task.samplesPerSecond : task.slowestMeasured;
  const double expected = speed > 0 ? static_cast<double>(task.samples) / speed : rule.firstRoundS;
  return task.deadlineS > 0 ? std::min(expected, task.deadlineS) : expected;
}

double giveUpSeconds(const TaskTiming& task, const TimeoutRule& rule) {
  // A deadline is kept by the client itself: past it only the transfer and the slack remain.
  const double compute =
      task.deadlineS > 0 ? task.deadlineS : rule.computeMultiple * expectedComputeSeconds(task, rule);
  const double transfer = 2.0 * static_cast<double>(task.modelBytes) / rule.transferBytesPerS;
  return compute + transfer + rule.slackS;
}

double deadlineWithinBudget(double taskDeadlineS, double budgetS, double elapsedS) {
  if (budgetS <= 0) return taskDeadlineS;
  const double remaining = std::max(kLeastTaskSeconds, budgetS - elapsedS);
  return taskDeadlineS > 0 ? std::min(taskDeadlineS, remaining) : remaining;
}

}  // namespace balancenet::federated
