// TrainFlags: the flags of `balancenet train`: what they hold before validation (RawFlags), their declaration
// from the flag groups (each group's flags and checks in its own <Group>Flags.h), and parseTrainCommandLine,
// which parses and validates (TrainValidation.h) without running anything (what the unit tests call).
#pragma once
#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "balancenet/cli/flags/AllocationFlags.h"
#include "balancenet/cli/flags/CommFlags.h"
#include "balancenet/cli/flags/DeviceFlags.h"
#include "balancenet/cli/flags/EmulationFlags.h"
#include "balancenet/cli/flags/FlagValues.h"
#include "balancenet/cli/flags/HostFlags.h"
#include "balancenet/cli/flags/OptimizationFlags.h"
#include "balancenet/cli/flags/PipelineFlags.h"
#include "balancenet/cli/flags/ResilienceFlags.h"
#include "balancenet/cli/flags/ResultFlags.h"
#include "balancenet/job/JobConfig.h"

namespace CLI {
class App;
}

namespace balancenet::cli {

// The flags whose value needs checking or resolving before it goes into the JobConfig, as given: each group's
// declared in its <Group>Flags.h, beside the flags that fill it and the checks that read it.
struct RawFlags {
  HostRaw host;
  DeviceRaw device;
  ResilienceRaw resilience;
  AllocationRaw allocation;
  PipelineRaw pipeline;
  EmulationRaw emulation;
  CommRaw comm;
  OptimizationRaw optimization;
  ResultRaw result;
  bool printConfig = false;  // --print-config
  std::string configPath;    // --config: read by expandConfigFile before parsing; declared for --help
};

// Declares every train flag on `train`, bound to `config` and `raw`: the groups in the order --help and
// --print-config list them, then --print-config and --config.
void addTrainFlags(CLI::App& train, job::JobConfig& config, RawFlags& raw);

// Parses `args` (the words after the subcommand's name) into what `app` (named as the subcommand) binds; with
// `expandConfig`, a --config FILE among them is expanded first. A parse error is a UsageError line.
void parseSubcommandWords(CLI::App& app, const std::vector<std::string>& args, bool expandConfig = false);

// `balancenet train ARGS` up to the point of running: ARGS (the words after "train"; --config FILE is
// expanded) parsed, the environment read (RANK, MASTER_PORT, ...), everything validated. Throws
// UsageError, a parse error included; --help is not handled here. config.argv is {"balancenet", "train", ARGS}.
job::JobConfig parseTrainCommandLine(const std::vector<std::string>& args);

// The words after "train" in a launcher's c.argv: what parseTrainCommandLine takes to resolve the job again with
// more words after them (a chosen shape, the hosts' agreed counts). InternalError when there is no "train".
std::vector<std::string> trainWords(const job::JobConfig& c);

}  // namespace balancenet::cli
