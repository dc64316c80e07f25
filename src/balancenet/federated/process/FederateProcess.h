// FederateProcess: one started process of a `balancenet federate` job: the federated server or a client.
#pragma once
#include "balancenet/comm/Rendezvous.h"
#include "balancenet/federated/process/FederatedProcess.h"
#include "balancenet/job/JobConfig.h"

namespace balancenet::federated {

// config.worker set: the server (rank 0) or client rank - 1, over the job's store. Its exit code.
int runFederatedProcess(const job::JobConfig& config);

// The federated server's (and a launched client's) settings from the job's config (also `federate serve`'s).
federated::ProcessSettings processSettings(const job::JobConfig& config, const comm::RendezvousOptions& rv);

}  // namespace balancenet::federated
