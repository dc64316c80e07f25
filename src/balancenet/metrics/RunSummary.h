// RunSummary: the headline numbers of a run, written as summary.json.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace balancenet::metrics {

struct EvalPoint {
  int64_t step = 0;
  double accuracy = 0;  // fraction of the test set classified correctly
  double loss = 0;
  double trainSeconds = 0;  // training time (evaluations excluded) elapsed when it was taken
  int64_t samples = 0;      // test samples it covered (--eval-samples); 0: not counted (a Python-recorded one)
};

struct RunSummary {
  std::string model;
  int worldSize = 1;
  int64_t globalBatch = 0;
  int64_t steps = 0;
  std::string split;        // the split in force at the end
  double trainSeconds = 0;  // wall time of the training steps (evaluation excluded)
  double samplesPerSecond = 0;
  double meanUpdateMs = 0;
  std::vector<double> updateMsPer100;  // the paper's table
  double finalLoss = 0;
  std::vector<EvalPoint> evals;
  std::vector<double> peakMemoryMb;  // each rank's peak resident set (MiB), in rank order; none: not written
  nlohmann::json extra = nlohmann::json::object();  // model info, options: anything worth keeping

  nlohmann::json toJson() const;
};

}  // namespace balancenet::metrics
