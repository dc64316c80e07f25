// Worker: one rank of a job: rendezvous, data, model, trainer, outputs.
#pragma once
#include "balancenet/launcher/JobConfig.h"

namespace balancenet::launcher {

int runWorker(const JobConfig& config);  // config.worker must be set; returns the exit code
// The same for a pipeline job (config.pipeline.stages > 1); runWorker hands such jobs to it.
int runPipelineWorker(const JobConfig& config);

}  // namespace balancenet::launcher
