// RunSetup: what every process of a train or federate job resolves before it runs as a launcher, worker or
// server: logging, the progress period and the run directory.
#pragma once
#include "balancenet/cli/TrainFlags.h"

namespace balancenet::cli {

// Sets up logging at --log-level; fills in the progress period (2 s on a terminal, else 10 s, unless given)
// and, when --run-dir was not given, runs/<time>-<pid>.
void settleLoggingAndOutputs(job::JobConfig& config, const RawFlags& raw);

}  // namespace balancenet::cli
