// SyncFactory: the gradient strategy a job asked for (--comm and friends), with its emulation wrappers.
#pragma once
#include <memory>

#include "balancenet/comm/GradientSync.h"
#include "balancenet/comm/group/Communicator.h"
#include "balancenet/job/JobConfig.h"
#include "balancenet/models/Network.h"

namespace balancenet::worker {

// Installs the emulated link (--net-delay-ms, --net-bandwidth-mbps) on `comm` when asked for.
void installLinkEmulation(comm::Communicator& comm, const job::EmulationOptions& emulation);

// Whether the strategy needs the model's fully connected layers built by comm::factorLinearFactory().
bool capturesFactors(const job::CommOptions& comm);

// The real strategy, wrapped by the straggler emulation when asked for (it sleeps after compute).
std::unique_ptr<comm::GradientSync> makeGradientSync(comm::Communicator& comm, models::Network& net,
                                                     const job::JobConfig& config);

}  // namespace balancenet::worker
