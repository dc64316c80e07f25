// QuotaPlanner: balanced's local-step quotas, from each client's measured speed, so that all finish together.
#pragma once
#include <cstdint>
#include <vector>

#include "balancenet/federated/FederatedOptions.h"

namespace balancenet::federated {

struct QuotaPlan {
  std::vector<int64_t> steps;  // per client, in the order of the speeds given
  double roundSeconds = 0;     // T, the round's planned length; 0 when no deadline is given and none is measured
};

// A quota above this many times localSteps.high is cut: a very fast client running far more local steps than
// the others drifts towards its own (non-IID) data's optimum, which the normalised average cannot undo.
constexpr int64_t kMaxQuotaFactor = 4;

// T = deadlineS when > 0, else the time the median-speed client of those measured needs for localSteps.high
// steps (the mean of the two middle speeds for an even count). quota_i = clamp(floor(speed_i x T), 1,
// kMaxQuotaFactor x localSteps.high); a client not measured yet (speed 0) gets localSteps.low, which measures it.
QuotaPlan planQuotas(const std::vector<double>& stepsPerSecond, const LocalSteps& localSteps, double deadlineS);

}  // namespace balancenet::federated
