// The job's store, opened by the launcher: a private file on one host, a TCP store and the hosts' meeting on several.
#include "balancenet/launch/LauncherStore.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "balancenet/comm/admission/JobAdmission.h"
#include "balancenet/comm/admission/JobToken.h"
#include "balancenet/core/AtomicFile.h"
#include "balancenet/job/JobRendezvous.h"
#include "balancenet/launch/HostMeeting.h"

namespace balancenet::launch {
using job::JobConfig;
using job::rendezvousOptions;
namespace {

constexpr const char* kJoinStoreFile = "join-store";

// A worker started later with --join finds a single-machine elastic job through its store file.
void announceJoinStore(const std::string& storeFile, const std::string& runDir) {
  writeFileAtomically(runDir + "/" + kJoinStoreFile, storeFile + "\n");
  spdlog::info(
      "more workers can join this job: balancenet train --join --store-file {} (and the job's flags; "
      "the path is also in {}/{})",
      storeFile, runDir, kJoinStoreFile);
}

// Several hosts: host 0 serves the store; every host's launcher meets the others there (HostMeeting.h) and learns
// the world and its first rank before any worker starts. Host 0 publishes the world its workers check.
void meetTheOtherHosts(JobConfig& c, comm::RendezvousOptions rv, JobStore& store) {
  if (c.launch.nodeRank == 0) {
    rv.worldSize = 0;  // known after the meeting
    store.server = std::make_unique<comm::StoreServer>(rv);
    store.port = rv.masterPort = store.server->port();
  }
  const auto job = comm::admitLauncher(rv);  // a wrong token: one line here, before any worker starts
  meetHosts(*job, fmt::format("{}:{}", rv.masterAddr, rv.masterPort), c.launch, rv.timeout);
  if (c.launch.nodeRank == 0) comm::publishWorldSize(*job, c.launch.worldSize());
  spdlog::info("hosts: {} workers ({} by node rank); this host runs ranks {}-{}", c.launch.worldSize(),
               job::workersPerHostText(c.launch.hostWorkers), c.launch.firstRank(),
               c.launch.firstRank() + c.launch.nprocPerNode - 1);
}

}  // namespace

JobStore openJobStore(JobConfig& c) {
  JobStore store;
  // torch's env:// needs a TCPStore, so a launched program's job serves one even on one host; its port is open
  // to every interface, so a job token the launcher makes up keeps the job's own keys from strangers there.
  if (c.program.given() && c.launch.nnodes == 1 && c.launch.jobToken.empty())
    c.launch.jobToken = comm::randomJobToken();
  comm::RendezvousOptions rv = rendezvousOptions(c);
  store.port = c.launch.masterPort;
  if (c.launch.nnodes == 1 && !c.program.given()) {
    // Every worker is on this host: they meet through a file only this user can reach, so the job
    // opens no store port (c10d's TCPStore would listen on every interface) and Gloo stays on loopback.
    if (c.launch.masterPort != 0)
      spdlog::warn(
          "--master-port {} is not used: the workers of a single-host job meet through a private store "
          "file",
          c.launch.masterPort);
    store.dir = std::make_unique<PrivateDirectory>("balancenet-store");
    c.launch.storeFile = rv.storeFile = store.dir->file("store");
    store.server = std::make_unique<comm::StoreServer>(rv);
    if (c.resilience.elastic) announceJoinStore(c.launch.storeFile, c.trainer.runDir);
  } else {
    meetTheOtherHosts(c, rv, store);
  }
  return store;
}

}  // namespace balancenet::launch
