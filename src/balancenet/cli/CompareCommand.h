// CompareCommand: `balancenet compare`: one scenario, several policies and models (or federated strategies),
// one table and charts.
#pragma once
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace balancenet::cli {

struct CompareOptions {
  std::vector<std::string> policies{"equal", "random", "bno", "balanced"};
  std::vector<std::string> models{"cnn", "alexnet", "resnet50", "vgg16"};
  int64_t steps = 2400;          // the paper's number of weight updates
  double targetAccuracy = 0.80;  // for "time to target accuracy"
  std::string outDir;            // default runs/compare-<time>
  // "NAME=FLAGS": each is one more run per (model, policy) with FLAGS added, labelled NAME
  // (e.g. "no-overlap=--no-overlap"), so communication modes compare side by side too.
  std::vector<std::string> variants;
  std::vector<std::string> trainFlags;  // everything else, passed to each `balancenet train` (or federate)
  // --federate: one `balancenet federate` run per strategy (and variant) instead of train runs per model and
  // policy (FederatedCompare.h); --models, --policies, --steps and --target-accuracy do not apply.
  bool federate = false;
  std::vector<std::string> strategies;  // --strategies; empty: FederatedCompare's default
};

// Declares the subcommand's flags on `app`, bound to `options`.
void addCompareFlags(CLI::App& app, CompareOptions& options);
// Runs every (model, policy) as `balancenet train` in turn; returns the exit code.
int runCompare(CompareOptions options, const std::string& self);

// The width compare uses for a model unless --width is among the train flags: sized for 2 CPU cores.
double defaultCompareWidth(const std::string& model);

}  // namespace balancenet::cli
