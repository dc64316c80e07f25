// FederatedCompare: `balancenet compare --federate`: one `balancenet federate` run per strategy (and
// --variant), each in OUT/<label>, then one table (compare.csv, compare.md: report's federated columns) and
// test accuracy against wall time for all of them (accuracy_vs_wall_time.png).
#pragma once
#include <string>
#include <vector>

#include "balancenet/cli/CompareCommand.h"
#include "balancenet/cli/CompareRuns.h"

namespace CLI {
class App;
}

namespace balancenet::cli {

// The strategies compared when --strategies is not given.
std::vector<std::string> defaultFederatedStrategies();

// Declares --federate and --strategies on compare's `app`.
void addFederatedCompareFlags(CLI::App& app, CompareOptions& options);

// The `balancenet federate` command line of one compared run: the strategy and run directory, then the
// flags every run shares, then the variant's (which so win over the shared ones). UsageError when the shared
// flags name --strategy or --run-dir, which compare sets per run.
std::vector<std::string> federateArgs(const std::string& strategy, const Variant& variant, const std::string& runDir,
                                      const std::vector<std::string>& sharedFlags);

// Reads the finished runs (labels[i] names runDirs[i]) and writes outDir/compare.csv, compare.md,
// accuracy_vs_wall_time.png and client_steps_<label>.png; returns the markdown table.
std::string writeFederatedComparison(const std::vector<std::string>& runDirs, const std::vector<std::string>& labels,
                                     const std::string& outDir);

// Runs every (strategy, variant) in turn; returns the exit code.
int runFederatedCompare(CompareOptions options, const std::string& self);

}  // namespace balancenet::cli
