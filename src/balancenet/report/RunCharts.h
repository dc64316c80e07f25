// RunCharts: charts drawn from one run's results, shared by `compare` and `report`.
#pragma once
#include <string>

#include "balancenet/report/GnuplotChart.h"
#include "balancenet/report/RunResults.h"

namespace balancenet::report {

// Samples per node over training, one step line per node, from splits.csv's decisions to the last step.
// No series when the run has no splits.csv.
Chart splitChart(const RunResults& run, const std::string& title);

// The global batch B of each step beside the smoothed gradient noise scale B_noise (--global-batch auto): on one
// axis, since the choice of B follows B_noise. No series when the run did not measure the noise scale.
Chart batchChart(const RunResults& run, const std::string& title);

}  // namespace balancenet::report
