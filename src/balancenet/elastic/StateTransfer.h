// StateTransfer: one rank's training state to every rank of a newly formed group, as bytes over a
// c10d broadcast (length first, then a uint8 tensor).
#pragma once
#include <string>

#include "balancenet/comm/group/Collectives.h"

namespace balancenet::elastic {

// Collective: returns `bytes` of rank `root` on every rank (the others' `bytes` are ignored).
std::string broadcastBytes(comm::Collectives& comm, int root, const std::string& bytes);

}  // namespace balancenet::elastic
