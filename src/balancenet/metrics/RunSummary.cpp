// JSON form of a RunSummary.
#include "balancenet/metrics/RunSummary.h"

#include <algorithm>

namespace balancenet::metrics {

nlohmann::json RunSummary::toJson() const {
  nlohmann::json evalJson = nlohmann::json::array();
  for (const auto& e : evals) {
    evalJson.push_back(
        {{"step", e.step}, {"accuracy", e.accuracy}, {"loss", e.loss}, {"train_seconds", e.trainSeconds}});
    if (e.samples > 0) evalJson.back()["samples"] = e.samples;
  }
  nlohmann::json j = {
      {"model", model},
      {"nodes", worldSize},
      {"global_batch", globalBatch},
      {"steps", steps},
      {"split", split},
      {"train_seconds", trainSeconds},
      {"samples_per_second", samplesPerSecond},
      {"mean_weight_update_ms", meanUpdateMs},
      {"weight_update_ms_per_100", updateMsPer100},
      {"final_loss", finalLoss},
      {"final_accuracy", evals.empty() ? nlohmann::json(nullptr) : nlohmann::json(evals.back().accuracy)},
      {"evaluations", evalJson},
  };
  if (!peakMemoryMb.empty()) {
    j["peak_memory_mb"] = peakMemoryMb;
    j["peak_memory_mb_max"] = *std::max_element(peakMemoryMb.begin(), peakMemoryMb.end());
  }
  j.update(extra);
  return j;
}

}  // namespace balancenet::metrics
