// QuotaPlanner: round length from the median measured speed, quotas proportional to speed.
#include "balancenet/federated/strategies/QuotaPlanner.h"

#include <algorithm>
#include <cmath>

#include "balancenet/core/Median.h"

namespace balancenet::federated {

QuotaPlan planQuotas(const std::vector<double>& stepsPerSecond, const LocalSteps& localSteps, double deadlineS) {
  QuotaPlan plan;
  std::vector<double> measured;
  for (double s : stepsPerSecond)
    if (s > 0) measured.push_back(s);
  if (deadlineS > 0)
    plan.roundSeconds = deadlineS;
  else if (!measured.empty())
    plan.roundSeconds = static_cast<double>(localSteps.high) / median(measured);
  const double maxSteps = static_cast<double>(kMaxQuotaFactor * localSteps.high);
  // (1 + 1e-9): speed x (high / speed) can round to just below high (7 x (61 / 7) does), which would give the
  // median client one step less than planned.
  for (double s : stepsPerSecond)
    plan.steps.push_back(
        s > 0 ? static_cast<int64_t>(std::clamp(std::floor(s * plan.roundSeconds * (1 + 1e-9)), 1.0, maxSteps))
              : std::min(kProbeSteps, localSteps.low));
  return plan;
}

}  // namespace balancenet::federated
