// The closed-by-default rule of the rendezvous, and the warning an open job gives.
#include "balancenet/comm/admission/ClosedJob.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "balancenet/core/Error.h"

namespace balancenet::comm {

std::optional<std::string> openJobRefusal(const RendezvousOptions& o) {
  if (o.onOneMachine() || !o.jobToken.empty() || o.insecureOpen) return std::nullopt;
  return fmt::format(
      "the job's store at {}:{} is reachable from other hosts and this process has no job token: give every "
      "process the job's token with --job-token-file FILE, BALANCENET_JOB_TOKEN or --job-token TOKEN "
      "(--job-token auto makes one on the store's host), or run the job open to anyone with --insecure-open-job",
      o.masterAddr, o.masterPort);
}

void requireClosedJob(const RendezvousOptions& o) {
  if (auto why = openJobRefusal(o)) throw UsageError(*why);
}

// c10d 1.13's TCPStore server listens on every interface whatever the master address says, so even a loopback
// job's port is reachable from the network.
void warnIfOpen(const RendezvousOptions& o, int port) {
  if (o.storeFile.empty() && o.jobToken.empty())
    spdlog::warn(
        "the rendezvous store on port {} listens on every interface and admits any process that reaches "
        "it; give the job a token (--job-token-file, BALANCENET_JOB_TOKEN or --job-token), see "
        "docs/reliability.md",
        port);
}

}  // namespace balancenet::comm
