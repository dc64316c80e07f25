// RunResults: what a finished run directory holds (summary.json, steps.csv, splits.csv), read back.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace balancenet::report {

struct SplitChange {
  int64_t step = 0;
  std::vector<int64_t> batches;  // per rank
};

struct RunResults {
  std::string dir;
  nlohmann::json summary;
  std::vector<double> updateMsPerStep;  // slowest rank's weight-update time of each step
  std::vector<SplitChange> splits;      // every decision of splits.csv, in order

  // Training seconds until test accuracy first reached `target`; negative if never.
  double secondsToAccuracy(double target) const;
};

// Throws UsageError naming the file when a run directory is missing or malformed.
RunResults loadRun(const std::string& dir);

}  // namespace balancenet::report
