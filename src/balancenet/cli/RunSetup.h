// RunSetup: what every process of a train or federate job resolves before it runs as a launcher, worker or
// server: logging, the progress period and the run directory.
#pragma once
#include "balancenet/cli/flags/TrainFlags.h"

namespace balancenet::cli {

// --progress-seconds' default: a line every 2 s on a terminal, every 10 s into a log.
constexpr double kTerminalProgressSeconds = 2;
constexpr double kLogProgressSeconds = 10;

// Sets up logging at --log-level; fills in the progress period (the defaults above unless given)
// and, when --run-dir was not given, runs/<time>-<pid>.
void settleLoggingAndOutputs(job::JobConfig& config, const RawFlags& raw);

}  // namespace balancenet::cli
