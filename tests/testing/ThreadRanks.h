// ThreadRanks: runs N ranks as threads of one process over a shared in-memory store (fast multi-rank tests).
#pragma once
#include <functional>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "balancenet/comm/group/Communicator.h"

namespace balancenet::testing {

// Calls fn(comm) on `world` threads, one Gloo rank each, and rethrows the first exception. The ranks
// meet over `store` (null: a fresh in-memory one); pass one to let other threads join groups with them.
void runRanks(int world, const std::function<void(comm::Communicator&)>& fn,
              c10::intrusive_ptr<c10d::Store> store = {});

}  // namespace balancenet::testing
