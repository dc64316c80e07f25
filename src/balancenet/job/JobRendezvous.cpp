// One mapping from the configuration to rendezvous options, shared by launchers, workers and servers.
#include "balancenet/job/JobRendezvous.h"

#include <algorithm>

namespace balancenet::job {

comm::RendezvousOptions rendezvousOptions(const JobConfig& c) {
  comm::RendezvousOptions rv;
  rv.masterAddr = c.launch.masterAddr;
  rv.masterPort = c.launch.masterPort;
  rv.timeout = c.launch.rendezvousTimeout;
  rv.iface = c.launch.iface;
  rv.storeFile = c.launch.storeFile;
  rv.jobToken = c.launch.jobToken;
  rv.insecureOpen = c.launch.insecureOpen;
  rv.glooThreads = std::min(comm::kDefaultGlooThreads, c.threads);  // no more than the worker's share of the CPU
  rv.collectiveTimeout = c.resilience.elastic ? c.resilience.peerTimeout : c.resilience.stallTimeout;
  rv.worldSize = c.worker ? c.worker->worldSize : c.launch.worldSize();
  if (c.worker) {
    rv.rank = std::max(0, c.worker->rank);  // a joiner (-1) gets its member id from the store later
    rv.hostStore = c.worker->rank == 0 && !c.worker->storeHostedByLauncher && !c.worker->joining;
    rv.attempt = c.worker->attempt;
  }
  return rv;
}

}  // namespace balancenet::job
