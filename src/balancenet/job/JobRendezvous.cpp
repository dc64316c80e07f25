// One mapping from the configuration to rendezvous options, shared by launchers, workers and servers.
#include "balancenet/job/JobRendezvous.h"

#include <algorithm>

#include <fmt/format.h>

#include "balancenet/comm/HostAddress.h"
#include "balancenet/core/Error.h"

namespace balancenet::job {
namespace {

// Without --iface: the interface that routes to the master; where none does, a host whose name is loopback stops at
// once with one line, instead of advertising 127.0.0.1 and timing out at the rendezvous.
std::string glooInterface(const comm::RendezvousOptions& rv) {
  if (!rv.iface.empty()) return rv.iface;
  const std::string routed = comm::interfaceTowardMaster(rv);
  if (!routed.empty() || rv.onOneMachine()) return routed;
  const std::string loopback = comm::loopbackAddressOfHostName();
  if (!loopback.empty())
    throw UsageError(
        fmt::format("no interface of this host routes to the master at {}, and the host's name resolves "
                    "to {}, which other hosts cannot reach: give --iface with the interface the master "
                    "reaches this host on",
                    rv.masterAddr, loopback));
  return routed;
}

}  // namespace

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
  rv.iface = glooInterface(rv);
  return rv;
}

}  // namespace balancenet::job
