// ServerProcess: one parameter server process of a job (--comm ps), started by the launcher.
#pragma once
#include "balancenet/job/JobConfig.h"

namespace balancenet::ps {

int runParameterServer(const job::JobConfig& config);  // config.server must be set; returns the exit code

}  // namespace balancenet::ps
