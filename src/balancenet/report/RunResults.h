// RunResults: what a finished run directory holds (summary.json, steps.csv, splits.csv, pipeline.csv), read back.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "balancenet/report/PipelineTrace.h"

namespace balancenet::report {

struct SplitChange {
  int64_t step = 0;
  std::vector<int64_t> batches;  // per rank
};

// One rank's mean step phases over a run (step 0, the warm-up, left out).
struct RankBreakdown {
  int rank = 0;
  double computeMs = 0, commMs = 0, waitMs = 0;
  // steps.csv's CPU-quota columns (0 for runs from before them): throttled_periods, throttled_ms, sync_cpu_ms,
  // comm_phases.
  double throttledPeriods = 0, throttledMs = 0, syncCpuMs = 0, commPhases = 0;
};

struct RunResults {
  std::string dir;
  nlohmann::json summary;
  std::vector<double> updateMsPerStep;  // slowest rank's weight-update time of each step
  // Time left exposed to communication after backward (sync_ms, mean over ranks) of each step.
  std::vector<double> syncMsPerStep;
  double bytesSentPerStep = 0;         // per rank, mean over ranks and steps
  std::vector<double> samplesPerStep;  // global batch actually trained in each step
  // The smoothed gradient noise scale after each step (steps.csv's noise_scale, issue 32); empty when the run
  // did not measure it, < 0 in steps before it was known.
  std::vector<double> noiseScalePerStep;
  std::vector<RankBreakdown> ranks;      // per rank, in rank order
  std::vector<SplitChange> splits;       // every decision of splits.csv, in order
  std::vector<double> peakMemoryMb;      // summary.json's peak_memory_mb, per rank; empty for older runs
  std::vector<PipelineAction> pipeline;  // pipeline.csv's rows; empty when the run was not pipelined

  // Mean of syncMsPerStep without the first step (connection set-up, first buffers).
  double meanSyncMs() const;
  // Training seconds until test accuracy first reached `target`; negative if never.
  double secondsToAccuracy(double target) const;
};

// Throws UsageError naming the file when a run directory is missing or malformed.
RunResults loadRun(const std::string& dir);

// A run directory's summary.json (a training or a federated run's); UsageError when unreadable or not JSON.
nlohmann::json readSummaryJson(const std::string& dir);
// The run directory's own name, as a label: "runs/a" and "runs/a/" (a shell glob's `runs/*/`) both give "a".
std::string runName(const std::string& dir);

// A CSV file of a run directory as rows of fields, header first (our files never quote); UsageError when
// it cannot be read or is empty.
std::vector<std::vector<std::string>> readCsv(const std::string& path);
// The index of column `name` in `header`; UsageError naming `path` when there is none.
int column(const std::vector<std::string>& header, const std::string& name, const std::string& path);
// The index of column `name` in `header`, or -1 when there is none (a column that older runs lack).
int optionalColumn(const std::vector<std::string>& header, const std::string& name);

}  // namespace balancenet::report
