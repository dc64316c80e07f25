// The first evaluation at or above each accuracy target.
#include "balancenet/metrics/TimeToAccuracy.h"

#include <fmt/format.h>

#include <string>

namespace balancenet::metrics {

std::string accuracyKey(double target) {
  // Two decimals ("0.80", federate's keys), more only where a run's own target needs them ("0.875").
  const auto key = fmt::format("{:.2f}", target);
  return std::stod(key) == target ? key : fmt::format("{:g}", target);
}

nlohmann::json timeToAccuracy(const std::vector<EvalPoint>& evals, double alsoTarget) {
  std::vector<double> targets(std::begin(kAccuracyTargets), std::end(kAccuracyTargets));
  if (alsoTarget > 0) targets.push_back(alsoTarget);
  auto times = nlohmann::json::object();
  for (double target : targets) {
    auto& entry = times[accuracyKey(target)] = nullptr;
    for (const auto& e : evals)
      if (e.accuracy >= target) {
        entry = {{"seconds", e.trainSeconds}, {"step", e.step}};
        break;
      }
  }
  return times;
}

}  // namespace balancenet::metrics
