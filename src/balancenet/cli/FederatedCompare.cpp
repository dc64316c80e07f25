// compare --federate: the federate runs, their table and charts.
#include "balancenet/cli/FederatedCompare.h"

#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/core/AtomicFile.h"
#include "balancenet/core/Error.h"
#include "balancenet/report/FederatedCharts.h"
#include "balancenet/report/FederatedResults.h"
#include "balancenet/report/RunResults.h"

namespace balancenet::cli {

std::vector<std::string> defaultFederatedStrategies() {
  return {"fedavg", "fedprox", "fednova", "fedbuff", "balanced"};
}

void addFederatedCompareFlags(CLI::App& app, CompareOptions& o) {
  app.add_flag("--federate", o.federate,
               "Compare federated strategies: one 'balancenet federate' run per strategy and variant instead of "
               "train runs (--models, --policies, --steps, --target-accuracy do not apply)");
  app.add_option("--strategies", o.strategies,
                 fmt::format("With --federate: strategies to compare, comma separated (default: {})",
                             fmt::join(defaultFederatedStrategies(), ",")))
      ->delimiter(',');
}

std::vector<std::string> federateArgs(const std::string& strategy, const Variant& variant, const std::string& runDir,
                                      const std::vector<std::string>& sharedFlags) {
  for (const char* own : {"--strategy", "--run-dir"})
    if (hasFlag(sharedFlags, own))
      throw UsageError(fmt::format("compare --federate sets {} for each run; leave it out (--strategies, --out)", own));
  std::vector<std::string> args{"federate", "--strategy", strategy, "--run-dir", runDir};
  args.insert(args.end(), sharedFlags.begin(), sharedFlags.end());
  args.insert(args.end(), variant.flags.begin(), variant.flags.end());
  return args;
}

std::string writeFederatedComparison(const std::vector<std::string>& runDirs, const std::vector<std::string>& labels,
                                     const std::string& outDir) {
  std::vector<report::FederatedResults> runs;
  for (const auto& dir : runDirs) runs.push_back(report::loadFederatedRun(dir));
  const auto table = report::federatedTable(runs, labels);
  writeFileAtomically(outDir + "/compare.csv", table.csv());
  writeFileAtomically(outDir + "/compare.md", table.markdown());
  const auto accuracy = report::accuracyOverWallTime(runs, labels);
  if (!accuracy.series.empty()) report::renderChart(accuracy, outDir + "/accuracy_vs_wall_time.png");
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto steps = report::clientStepsPerRound(runs[i], labels[i] + ": local steps done per client and round");
    if (!steps.series.empty()) report::renderChart(steps, fmt::format("{}/client_steps_{}.png", outDir, labels[i]));
  }
  return table.markdown();
}

int runFederatedCompare(CompareOptions o, const std::string& self) {
  if (o.strategies.empty()) o.strategies = defaultFederatedStrategies();
  if (o.outDir.empty()) o.outDir = defaultCompareOutDir();
  const auto variants = parseVariants(o.variants);
  // Every command line first, so a flag compare owns fails before any run starts.
  struct Planned {
    std::string label, dir;
    std::vector<std::string> args;
  };
  std::vector<Planned> planned;
  for (const auto& strategy : o.strategies)
    for (const auto& variant : variants) {
      const auto label = runLabel(strategy, variant, o.strategies.size());
      const auto dir = fmt::format("{}/{}", o.outDir, label);
      planned.push_back({label, dir, federateArgs(strategy, variant, dir, o.trainFlags)});
    }
  ensureDirectory(o.outDir);
  std::vector<std::string> dirs, labels;
  for (size_t i = 0; i < planned.size(); ++i) {
    const auto& p = planned[i];
    ensureDirectory(p.dir);
    std::cerr << fmt::format("[{}/{}] {} ...", i + 1, planned.size(), p.label) << std::flush;
    runCompared(self, p.args, p.dir + "/federate.log", p.label);
    const auto summary = report::readSummaryJson(p.dir);
    std::cerr << fmt::format(" {} rounds in {:.1f} s, final test accuracy {:.2f}%\n", summary.value("rounds", 0),
                             summary.value("wall_seconds", 0.0), 100 * summary.value("final_accuracy", 0.0));
    dirs.push_back(p.dir);
    labels.push_back(p.label);
  }
  std::cout << writeFederatedComparison(dirs, labels, o.outDir) << std::flush;
  std::cerr << "balancenet: compare results in " << o.outDir
            << " (compare.csv, compare.md, accuracy_vs_wall_time.png, client_steps_*.png)" << std::endl;
  return 0;
}

}  // namespace balancenet::cli
