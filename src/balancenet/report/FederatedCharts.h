// FederatedCharts: the charts of federated runs, shared by `report` and `compare --federate`.
#pragma once
#include <string>
#include <vector>

#include "balancenet/report/FederatedResults.h"
#include "balancenet/report/GnuplotChart.h"

namespace balancenet::report {

// Test accuracy (%) against wall time, one line per run (labels[i] names runs[i]), from the rounds that
// were evaluated (a run never evaluated has no line): which strategy gets to a given accuracy soonest.
Chart accuracyOverWallTime(const std::vector<FederatedResults>& runs, const std::vector<std::string>& labels);

// The local steps each client did in each round (one step line per client; a client not in a round's rows,
// e.g. fedbuff's aggregations, has no point there): how evenly a strategy spreads the work.
Chart clientStepsPerRound(const FederatedResults& run, const std::string& title);

}  // namespace balancenet::report
