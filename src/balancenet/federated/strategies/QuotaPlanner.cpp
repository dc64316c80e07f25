// QuotaPlanner: one step count for all where the batches allow it, batches in proportion to speed.
#include "balancenet/federated/strategies/QuotaPlanner.h"

#include <algorithm>
#include <cmath>

#include "balancenet/core/Median.h"

namespace balancenet::federated {

namespace {

// floor(x), with x computed as a product or quotient that lands just below a whole number (7 x (61 / 7) is
// 60.999... in doubles) taken as that number.
int64_t wholeBelow(double x) { return static_cast<int64_t>(std::floor(x * (1 + 1e-9))); }

}  // namespace

QuotaPlan planQuotas(const std::vector<double>& samplesPerSecond, const LocalSteps& localSteps, int64_t localBatch,
                     double deadlineS) {
  QuotaPlan plan;
  std::vector<double> measured;
  for (double s : samplesPerSecond)
    if (s > 0) measured.push_back(s);
  const double batch = static_cast<double>(localBatch);
  if (deadlineS > 0)
    plan.roundSeconds = deadlineS;
  else if (!measured.empty())
    plan.roundSeconds = static_cast<double>(localSteps.high) * batch / median(measured);
  const double fastest = measured.empty() ? 0 : *std::max_element(measured.begin(), measured.end());
  const int64_t tau =
      std::clamp<int64_t>(wholeBelow(plan.roundSeconds * fastest / batch), 1, kMaxQuotaFactor * localSteps.high);
  const int64_t minBatch = std::max<int64_t>(1, localBatch / kMinBatchDivisor);
  for (double s : samplesPerSecond) {
    if (!(s > 0)) {
      plan.steps.push_back(std::min(kProbeSteps, localSteps.low));
      plan.batches.push_back(localBatch);
      continue;
    }
    const double samples = s * plan.roundSeconds;  // what it trains on in T
    const int64_t b = std::min(localBatch, wholeBelow(samples / static_cast<double>(tau)));
    if (b >= minBatch) {
      plan.steps.push_back(tau);
      plan.batches.push_back(b);
    } else {
      plan.steps.push_back(std::clamp<int64_t>(wholeBelow(samples / static_cast<double>(minBatch)), 1, tau));
      plan.batches.push_back(minBatch);
    }
  }
  return plan;
}

}  // namespace balancenet::federated
