// PlanCommand: `balancenet plan`: the best placements of a model on N nodes of given speeds and memory caps,
// from a profile on this machine, without training: what --partition auto and --pipeline-stages auto decide.
#pragma once
#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace balancenet::cli {

struct PlanOptions {
  int nodes = 4;
  std::string model = "cnn";
  double width = 1.0;
  std::string stages = "auto";  // a number of stages, or auto: every shape
  int64_t globalBatch = 0;      // 0 until parsed: train's default
  int microBatches = 0;         // 0: each shape's default, 4 x its stages
  std::string schedule = "1f1b";
  std::string optimizer = "sgd";
  std::string slowdown;       // "1,1,2,4": one factor per node
  std::string memoryLimitMb;  // one cap for every node or one per node, MB
  int top = 5;
  bool json = false;
};

// Declares the subcommand's flags on `app`, bound to `options`.
void addPlanFlags(CLI::App& app, PlanOptions& options);
// Prints the ranked placements and the best one's explanation to stdout; returns the exit code. Throws
// UsageError (one line) for bad input or when no placement fits the caps.
int runPlan(const PlanOptions& options);

}  // namespace balancenet::cli
