// ModelsCommand: `balancenet models`: the model zoo's sizes and costs, or one model's blocks.
#pragma once
#include <string>

namespace CLI {
class App;
}

namespace balancenet::cli {

struct ModelsOptions {
  std::string blocksOf;  // a zoo model or TorchScript file: list its blocks instead of the zoo
  double width = 1.0;
};

// Declares the subcommand's flags on `app`, bound to `options`.
void addModelsFlags(CLI::App& app, ModelsOptions& options);
// Prints the table to stdout; returns the exit code. Throws UsageError for an unknown model or a bad width.
int runModels(const ModelsOptions& options);

}  // namespace balancenet::cli
