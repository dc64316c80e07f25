// Comparison: several runs of one scenario side by side (the paper's table and what it omits).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "balancenet/report/RunResults.h"

namespace balancenet::report {

struct ComparedRun {
  std::string model;
  std::string policy;
  RunResults results;
};

struct ComparisonRow {
  std::string model, policy;
  double meanUpdateMs = 0;
  std::vector<double> updateMsPer100;
  double samplesPerSecond = 0;
  double secondsToTarget = -1;  // negative: target not reached
  double finalAccuracy = -1;
  double effectiveGlobalBatch = 0;
  double meanSyncMs = 0;    // communication left exposed after backward, per step
  double bytesPerStep = 0;  // sent per rank per step
  std::string finalSplit;
};

class Comparison {
 public:
  Comparison(std::vector<ComparedRun> runs, double targetAccuracy);

  const std::vector<ComparisonRow>& rows() const { return rows_; }
  std::string table() const;  // fixed-width text, one block per model
  std::string csv() const;    // one row per run; per-100 averages as update_ms_100_k columns
  nlohmann::json json() const;

 private:
  std::vector<ComparisonRow> rows_;
  double target_;
};

}  // namespace balancenet::report
