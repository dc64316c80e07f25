// PsGroup: the group workers and parameter servers talk over, beside the workers' own group.
#pragma once
#include <chrono>
#include <memory>
#include <string>

#include <c10/util/intrusive_ptr.h>

#include "balancenet/comm/group/Communicator.h"

namespace balancenet::ps {

// Workers are ranks [0, workers) of the group, as in their own group; server k is rank workers + k.
inline int serverRank(int workers, int server) { return workers + server; }

// Forms the group over the job's store under its own key prefix (a worker passes its group's store,
// a server comm::connectJobStore()). Collective over all workers and servers.
std::unique_ptr<comm::Communicator> joinPsGroup(const c10::intrusive_ptr<c10d::Store>& jobStore, int rank, int workers,
                                                int servers, std::chrono::milliseconds timeout,
                                                const std::string& host = "127.0.0.1", const std::string& iface = "");

}  // namespace balancenet::ps
