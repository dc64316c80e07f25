// Worker: one rank of a job: rendezvous, data, model, trainer, outputs.
#pragma once
#include "balancenet/launcher/JobConfig.h"

namespace balancenet::launcher {

int runWorker(const JobConfig& config);  // config.worker must be set; returns the exit code

}  // namespace balancenet::launcher
