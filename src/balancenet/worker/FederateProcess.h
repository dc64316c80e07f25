// FederateProcess: one started process of a `balancenet federate` job: the federated server or a client.
#pragma once
#include "balancenet/job/JobConfig.h"

namespace balancenet::worker {

// config.worker set: the server (rank 0) or client rank - 1, over the job's store. Its exit code.
int runFederatedProcess(const job::JobConfig& config);

}  // namespace balancenet::worker
