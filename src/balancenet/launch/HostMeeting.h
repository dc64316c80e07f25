// HostMeeting: the launchers of a job over several hosts meet in its store before any worker starts, so hosts
// may run different numbers of workers (--nproc-per-node 2 on one, 1 on another).
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include <c10/util/intrusive_ptr.h>

#include "balancenet/job/LaunchOptions.h"

namespace c10d {
class Store;
}

namespace balancenet::launch {

// Each launcher claims its node rank and publishes its worker count and --nnodes; all wait for every host's, take
// the counts into `launch` (agreeOnHosts), and wait for every host's consent. A second launcher with the same node
// rank, hosts with different --nnodes, or a host that refuses the layout is a UsageError on every host at once (the
// one that finds it aborts the meeting); a host that never comes is a RuntimeFailure naming it after `timeout`.
// `where`: the store, for messages.
void meetHosts(c10d::Store& job, const std::string& where, job::LaunchOptions& launch,
               std::chrono::milliseconds timeout);

// Takes the counts the hosts agreed on into `launch` (hostWorkers: the world and each host's first rank). A
// UsageError where this host's flags assumed another layout: its --nproc-per-node list differs, or flags were
// checked against --nnodes x --nproc-per-node (assumedWorldFlags) and the hosts run another world.
void agreeOnHosts(job::LaunchOptions& launch, const std::vector<int>& counts);

}  // namespace balancenet::launch
