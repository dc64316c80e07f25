// JobRendezvous: how a job's processes reach its store, from its configuration.
#pragma once
#include "balancenet/comm/Rendezvous.h"
#include "balancenet/job/JobConfig.h"

namespace balancenet::job {

// For a worker: its rank and world size, and whether it hosts the store (rank 0 started without a
// launcher). For a launcher or a parameter server: the job's world size, rank 0, no hosting.
comm::RendezvousOptions rendezvousOptions(const JobConfig& c);

}  // namespace balancenet::job
