// LaunchChecks: what a launcher checks once before any worker starts, so that bad input is one error line,
// not one per worker; launch/ then only starts and supervises.
#pragma once
#include "balancenet/job/JobConfig.h"

namespace balancenet::cli {

// The data set is readable and its images fit the model; --pipeline-stages auto is resolved (chooseStages,
// which prints its ranking); the placement fits (checkPlacement). Returns the job to launch. Throws UsageError.
// The checkpoints are the caller's: train and federate check different ones.
job::JobConfig checkBeforeLaunch(const job::JobConfig& config);

}  // namespace balancenet::cli
