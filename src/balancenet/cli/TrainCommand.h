// TrainCommand: `balancenet train`: this process runs as what its environment says it is.
#pragma once
#include "balancenet/cli/flags/TrainFlags.h"

namespace CLI {
class App;
}

namespace balancenet::cli {

// After `train` (the subcommand, for --print-config and which flags were given) parsed into `config` and `raw`:
// the environment says what this process is (a launcher, a worker started by one or by torchrun, a parameter
// server); the flags are validated against it; then it runs as that. A launcher checks the job first
// (LaunchChecks.h, and host 0 the checkpoints). Its exit code; bad input throws UsageError.
int runTrain(const CLI::App& train, job::JobConfig& config, RawFlags& raw, int argc, char** argv);

}  // namespace balancenet::cli
