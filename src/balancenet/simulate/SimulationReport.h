// SimulationReport: the simulator's results as a table (stdout), a CSV and the efficiency-vs-N chart.
#pragma once
#include <string>
#include <vector>

#include "balancenet/simulate/ClusterSimulator.h"

namespace balancenet::simulate {

// One row per (policy, N), with a header line; the CSV's columns are the table's.
std::string resultsCsv(const std::vector<SimulationResult>& results);
// Aligned columns for a terminal.
std::string resultsTable(const std::vector<SimulationResult>& results);
// Writes <dir>/simulation.csv (atomically) and <dir>/efficiency.png (when gnuplot is installed).
void writeSimulationReport(const std::string& dir, const std::vector<SimulationResult>& results);

}  // namespace balancenet::simulate
