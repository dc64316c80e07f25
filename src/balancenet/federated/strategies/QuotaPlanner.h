// QuotaPlanner: balanced's local work per client (steps and batch), from each client's measured speed, so
// that all finish together.
#pragma once
#include <cstdint>
#include <vector>

#include "balancenet/federated/FederatedOptions.h"

namespace balancenet::federated {

struct QuotaPlan {
  std::vector<int64_t> steps;    // per client, in the order of the speeds given
  std::vector<int64_t> batches;  // per client: samples per local step
  double roundSeconds = 0;       // T, the round's planned length; 0 when no deadline is given and none is measured
};

// A step count above this many times localSteps.high is cut: a very fast client running far more local steps
// than the others drifts towards its own (non-IID) data's optimum, which the normalised average cannot undo.
constexpr int64_t kMaxQuotaFactor = 4;

// A client not measured yet (the first round, a rejoined client) gets this many steps (at most localSteps.low)
// of the full batch: enough to measure it, and short, since its speed is unknown: with localSteps.low a slow
// client made the first round as long as a round of FedAvg's that waits for everyone (27 s of a 45 s run).
constexpr int64_t kProbeSteps = 2;

// The smallest batch a slow client is given before it is given fewer steps instead: localBatch / this.
constexpr int64_t kMinBatchDivisor = 8;

// Every client gets the same number of local steps where it can, each with a batch in proportion to its speed
// (balancenet's per-node batches, one level up), so that all finish together by T. Unequal local STEPS are
// what biases FedAvg's objective, and FedNova's correction extrapolates a slow client's few steps: with 1 to
// 15 steps a round on alpha 0.1, FedNova's first round took the test accuracy to 10% where FedAvg's gave 38%.
//   T = deadlineS when > 0, else the time the median-speed client of those measured needs for localSteps.high
//       steps of localBatch (the mean of the two middle speeds for an even count);
//   steps tau = clamp(floor(T x fastest / localBatch), 1, kMaxQuotaFactor x localSteps.high);
//   batch_i = min(localBatch, floor(speed_i x T / tau)); a client whose batch would fall below
//   max(1, localBatch / kMinBatchDivisor) keeps that batch and does floor(speed_i x T / it) steps instead,
//   at least 1 (FedNova's normalisation corrects the unequal steps left).
// Speeds are in samples per second; a client not measured yet (0) gets min(kProbeSteps, localSteps.low) steps
// of localBatch.
QuotaPlan planQuotas(const std::vector<double>& samplesPerSecond, const LocalSteps& localSteps, int64_t localBatch,
                     double deadlineS);

}  // namespace balancenet::federated
