// ThreadRanks: runs N ranks as threads of one process over a shared in-memory store (fast multi-rank tests).
#pragma once
#include <functional>

#include "balancenet/comm/Communicator.h"

namespace balancenet::testing {

// Calls fn(comm) on `world` threads, one Gloo rank each, and rethrows the first exception.
void runRanks(int world, const std::function<void(comm::Communicator&)>& fn);

}  // namespace balancenet::testing
