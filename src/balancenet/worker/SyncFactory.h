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

// The exchange among the replicas of a pipeline stage (`stage`: their group): one all-reduce of the stage's
// gradients after the schedule, by --comm's algorithm: flat the ring, hd halving-doubling, a2a two all-to-alls;
// auto the ring (one exchange a step: nothing to time). Not the parameter list's: a repartition keeps it. No
// straggler wrapper: a stage's --slowdown is kept by its schedule. InternalError for a mode the pipeline flags
// refuse (allreduce's buckets overlap a backward pass the micro-batches do not have; sfb, hybrid, ps).
std::unique_ptr<comm::GradientSync> makeStageSync(comm::Communicator& stage, const job::JobConfig& config);

}  // namespace balancenet::worker
