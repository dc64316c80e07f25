// JobDefaults: the job every command starts from before its flags, and what every launcher (and a Python
// process nothing launched) resolves before it runs: logging, the progress period and the run directory.
#pragma once
#include "balancenet/job/JobConfig.h"

namespace balancenet::job {

// `balancenet train`'s defaults (cnn on the embedded Fashion-MNIST, lr 0.05); federate starts from them too.
JobConfig defaultJobConfig();

// `balancenet launch`'s: train's, but no global batch (a program's data loader sizes it; --split sets it).
JobConfig defaultLaunchConfig();

// --progress-seconds' default: a line every 2 s on a terminal, every 10 s into a log.
constexpr double kTerminalProgressSeconds = 2;
constexpr double kLogProgressSeconds = 10;

// Sets up logging at c.logLevel; fills in the progress period (`progressSeconds` when >= 0, else the defaults
// above) and, when c.trainer.runDir is empty, runs/<time>-<pid>.
void settleLoggingAndOutputs(JobConfig& c, double progressSeconds);

}  // namespace balancenet::job
