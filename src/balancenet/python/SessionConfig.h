// SessionConfig: the job a Python process belongs to, from the environment `balancenet launch` gave it (or a
// job of one when nothing launched it).
#pragma once
#include <string>

#include "balancenet/job/JobConfig.h"

namespace balancenet::python {

// RANK, WORLD_SIZE, MASTER_ADDR, ... (launch/WorkerEnvironment.h) and the job as the launcher resolved it in
// BALANCENET_JOB_CONFIG (its --policy, --split, --node-speed, --run-dir, ...: job/JobConfigJson.h); no flag is
// parsed here. `runDir`, when not empty, is where a process running alone writes (a launched one uses the
// launcher's). Throws UsageError.
job::JobConfig sessionConfigFromEnvironment(const std::string& runDir);

}  // namespace balancenet::python
