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

// A client not measured yet (the first round, a rejoined client) gets this many steps (at most localSteps.low):
// enough to measure it, and short, since its speed is unknown: with localSteps.low a slow client made the first
// round as long as a round of FedAvg's that waits for everyone (27 s of a 45 s run, at 12 samples/s).
constexpr int64_t kProbeSteps = 2;

// T = deadlineS when > 0, else the time the median-speed client of those measured needs for localSteps.high
// steps (the mean of the two middle speeds for an even count). quota_i = clamp(floor(speed_i x T), 1,
// kMaxQuotaFactor x localSteps.high); a client not measured yet (speed 0) gets min(kProbeSteps, localSteps.low).
QuotaPlan planQuotas(const std::vector<double>& stepsPerSecond, const LocalSteps& localSteps, double deadlineS);

}  // namespace balancenet::federated
