// Worker: one rank of a job: rendezvous, data, model, trainer, outputs.
#pragma once
#include "balancenet/job/JobConfig.h"

namespace balancenet::worker {

int runWorker(const job::JobConfig& config);  // config.worker must be set; returns the exit code
// The same for a pipeline job (config.pipeline.stages > 1); runWorker hands such jobs to it.
int runPipelineWorker(const job::JobConfig& config);

}  // namespace balancenet::worker
