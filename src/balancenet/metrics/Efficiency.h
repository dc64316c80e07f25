// Efficiency: what each worker achieved against its machine's sgemm peak (GemmProbe), in FLOP/s of
// training counted as 3 x forward FLOPs per sample (forward, and backward's two products per layer).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "balancenet/metrics/GemmProbe.h"
#include "balancenet/metrics/StepTable.h"

namespace balancenet::metrics {

// What one worker's hardware can do; a zero peak (not measured) leaves the efficiency figures out.
struct WorkerCapacity {
  GemmPeak peak;
  int threads = 1;            // the worker's intra-op threads
  double flopsPerSample = 0;  // forward FLOPs of one sample of the model
};

struct WorkerEfficiency {
  int rank = 0;
  int threads = 1;             // the worker's intra-op threads
  GemmPeak peak;               // what its probe measured
  double achievedFlops = 0;    // 3 x FLOPs/sample x its samples / the run's training seconds
  double fractionOfPeak = 0;   // achievedFlops / (peak.oneThread x threads)
  double computeFraction = 0;  // the same over its compute time only (forward + backward): the kernels' share
};

// One entry per rank that has records; `peaks` and `threads` are indexed by rank. Zero fractions where a
// peak or the time is unknown.
std::vector<WorkerEfficiency> workerEfficiency(const StepTable& table, const std::vector<GemmPeak>& peaks,
                                               const std::vector<int>& threads, double flopsPerSample,
                                               double trainSeconds);

nlohmann::json toJson(const std::vector<WorkerEfficiency>& workers);
// "rank 0: 61.9 GFLOP/s, 0.65 of peak (1 x 95.2)" joined by "; ", for the last progress line.
std::string formatEfficiency(const std::vector<WorkerEfficiency>& workers);

}  // namespace balancenet::metrics
