// ServerProcess: one parameter server process of a job (--comm ps), started by the launcher.
#pragma once
#include "balancenet/launcher/JobConfig.h"

namespace balancenet::launcher {

int runParameterServer(const JobConfig& config);  // config.server must be set; returns the exit code

}  // namespace balancenet::launcher
