// The flags of `balancenet train`: names follow torchrun where they overlap; --help is the reference for users.
#include "balancenet/cli/flags/TrainFlags.h"

#include <algorithm>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/cli/YamlConfig.h"
#include "balancenet/cli/flags/AllocationFlags.h"
#include "balancenet/cli/flags/CheckpointFlags.h"
#include "balancenet/cli/flags/CommFlags.h"
#include "balancenet/cli/flags/DeviceFlags.h"
#include "balancenet/cli/flags/EmulationFlags.h"
#include "balancenet/cli/flags/HostFlags.h"
#include "balancenet/cli/flags/ModelFlags.h"
#include "balancenet/cli/flags/OptimizationFlags.h"
#include "balancenet/cli/flags/PipelineFlags.h"
#include "balancenet/cli/flags/ResilienceFlags.h"
#include "balancenet/cli/flags/ResultFlags.h"
#include "balancenet/cli/flags/TrainValidation.h"
#include "balancenet/core/EnvironmentVariables.h"
#include "balancenet/core/Error.h"
#include "balancenet/job/JobDefaults.h"
#include "balancenet/launch/WorkerEnvironment.h"

namespace balancenet::cli {
using job::JobConfig;
namespace {

// The environment variables, listed under --help from their table.
std::string environmentHelp() {
  std::string text = "Environment variables:";
  for (const auto& v : environmentVariables()) text += fmt::format("\n  {:<24} {}", v.name, v.meaning);
  return text;
}

}  // namespace

void addTrainFlags(CLI::App& app, JobConfig& c, RawFlags& raw) {
  // A flag given twice takes its last value, so wrappers and scripts can override defaults.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  // Defaults are recorded so --print-config shows every value in effect, not only those given.
  app.option_defaults()->always_capture_default();
  addHostFlags(app, c, raw.host);
  addDeviceFlags(app, raw.device);
  addResilienceFlags(app, c, raw.resilience);
  addModelFlags(app, c);
  addAllocationFlags(app, c, raw.allocation);
  addPipelineFlags(app, c, raw.pipeline);
  addEmulationFlags(app, raw.emulation);
  addCommFlags(app, c, raw.comm);
  addBatchSizingFlags(app, raw.allocation);
  addRunFlags(app, c);
  addOptimizationFlags(app, c, raw.optimization);
  addOutputFlags(app, c, raw.result);
  addCheckpointFlags(app, c.checkpoint);
  app.add_flag("--print-config", raw.printConfig,
               "Print the effective configuration as YAML (usable as --config) and exit");
  app.add_option("--config", raw.configPath,
                 "YAML file with any of these flags as keys, names without '--' (e.g. 'global-batch: 256' or "
                 "'global_batch: 256', 'split: [100, 28]', 'sync-bn: true'); flags on the command line override it");
  app.footer(environmentHelp());
}

void parseSubcommandWords(CLI::App& app, const std::vector<std::string>& args, bool expandConfig) {
  std::vector<std::string> words{app.get_name()};  // CLI11 takes the first word as the program's name
  words.insert(words.end(), args.begin(), args.end());
  try {
    if (expandConfig) words = expandConfigFile(words, app);
    std::vector<const char*> argv;
    for (const auto& w : words) argv.push_back(w.c_str());
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    throw UsageError(fmt::format("{} (see --help)", firstLine(e.what())));
  }
}

std::vector<std::string> trainWords(const JobConfig& c) {
  const auto train = std::find(c.argv.begin(), c.argv.end(), "train");
  if (train == c.argv.end()) throw InternalError("the launcher's words have no 'train'");
  return {train + 1, c.argv.end()};
}

JobConfig parseTrainCommandLine(const std::vector<std::string>& args) {
  CLI::App train{"balancenet train", "train"};
  JobConfig config = job::defaultJobConfig();
  RawFlags raw;
  addTrainFlags(train, config, raw);
  parseSubcommandWords(train, args, /*expandConfig=*/true);
  config.threadsGiven = train.count("--threads") > 0;
  config.argv = {"balancenet", "train"};
  config.argv.insert(config.argv.end(), args.begin(), args.end());
  config.worker = launch::readWorkerEnvironment(config.launch);
  config.server = launch::readServerEnvironment();
  validateTrainFlags(config, raw);
  return config;
}

}  // namespace balancenet::cli
