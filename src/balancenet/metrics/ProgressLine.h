// ProgressLine: the one-line progress report of a long run (steps or rounds, throughput, loss or accuracy,
// ETA), the same for every way of training.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace balancenet::metrics {

struct Progress {
  Progress(int64_t step, int64_t totalSteps, double elapsedSeconds, int64_t samplesDone,
           std::optional<double> loss = std::nullopt)
      : step(step), totalSteps(totalSteps), elapsedSeconds(elapsedSeconds), samplesDone(samplesDone), loss(loss) {}

  int64_t step = 0;  // steps (or rounds) done
  int64_t totalSteps = 0;
  double elapsedSeconds = 0;
  int64_t samplesDone = 0;
  std::optional<double> loss;          // the training loss; none: not shown
  std::optional<double> testAccuracy;  // the last evaluation's; none: not shown
  const char* unit = "step";           // "round" for federated training
  const char* rateUnit = "samples";    // "tokens": the rate counts samplesDone x unitsPerSample
  int64_t unitsPerSample = 1;
  // Federated evaluation: the clients' last sample-weighted held-out accuracy; none: not shown.
  std::optional<double> clientAccuracy;
  // --time-budget-s: the run ends at this elapsed time at the latest, so the ETA is never beyond it (0: none).
  double budgetSeconds = 0;
};

// "step 120/2000 (6%)  812.3 samples/s  loss 0.5120  ETA 3m12s", "... 20480.0 tokens/s ...",
// "round 3/10 (30%)  412.0 samples/s  test accuracy 61.20%  client accuracy 58.90%  ETA 1m02s"
std::string formatProgress(const Progress& p);
std::string formatDuration(double seconds);  // "3m12s", "1h02m", "45s"

}  // namespace balancenet::metrics
