// TimeToAccuracy: summary.json's "time_to_accuracy", the training time and step at which the test accuracy
// first reached each of a fixed set of targets (federated runs give the round instead of the step).
#pragma once
#include <vector>

#include <nlohmann/json.hpp>

#include "balancenet/metrics/RunSummary.h"

namespace balancenet::metrics {

// The accuracy targets of every run's time_to_accuracy, train's and federate's, in the tables' order.
inline constexpr double kAccuracyTargets[] = {0.70, 0.80, 0.85};

// The key of `target` in time_to_accuracy: "0.80".
std::string accuracyKey(double target);

// {"0.70": {"seconds", "step"} | null, ...} for kAccuracyTargets and `alsoTarget` (when > 0: a run's own
// --stop-at-accuracy), from the evaluations in step order.
nlohmann::json timeToAccuracy(const std::vector<EvalPoint>& evals, double alsoTarget = 0);

}  // namespace balancenet::metrics
