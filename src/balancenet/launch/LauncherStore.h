// LauncherStore: the job's store as a launcher opens it before any worker starts.
#pragma once
#include <memory>

#include "balancenet/comm/Rendezvous.h"
#include "balancenet/core/PrivateDirectory.h"
#include "balancenet/job/JobConfig.h"

namespace balancenet::launch {

// The job's store: a private file (one host), a TCP server (host 0), or nothing here but a check that
// host 0's store admits this host. Lives as long as the workers.
struct JobStore {
  std::unique_ptr<PrivateDirectory> dir;
  std::unique_ptr<comm::StoreServer> server;
  int port = 0;  // what the children connect to; 0: the file
};

// One host without a user's program: a private store file (no port open; an elastic job says where a --join
// worker finds it, in RUN_DIR/join-store). Otherwise a TCP store, served by host 0, where every host's launcher
// meets the others and learns the world and its first rank (c.launch is filled in); a launched program's job on
// one host gets a job token made up here when it has none.
JobStore openJobStore(job::JobConfig& c);

}  // namespace balancenet::launch
