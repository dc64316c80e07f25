// ProgressLine: the one-line progress report of a long run (steps, throughput, loss, ETA).
#pragma once
#include <cstdint>
#include <string>

namespace balancenet::metrics {

struct Progress {
  int64_t step = 0;  // steps done
  int64_t totalSteps = 0;
  double elapsedSeconds = 0;
  int64_t samplesDone = 0;
  double loss = 0;
};

std::string formatProgress(const Progress& p);  // "step 120/2000 (6%)  812.3 samples/s  loss 0.5120  ETA 3m12s"
std::string formatDuration(double seconds);     // "3m12s", "1h02m", "45s"

}  // namespace balancenet::metrics
