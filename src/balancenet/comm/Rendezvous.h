// Rendezvous: ranks meet through a c10d store (a TCPStore, or a private FileStore on one machine) and
// form a Gloo process group.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <c10/util/intrusive_ptr.h>

#include "balancenet/comm/group/GlooGroup.h"

namespace balancenet::comm {

constexpr std::chrono::milliseconds kDefaultRendezvousTimeout{60000};

struct RendezvousOptions {
  std::string masterAddr = "127.0.0.1";  // where the store listens
  int masterPort = 0;
  int rank = 0;
  int worldSize = 1;
  bool hostStore = false;  // this process serves the store (rank 0 started without a launcher)
  std::chrono::milliseconds timeout = kDefaultRendezvousTimeout;  // for arrival and for every collective
  // How long one collective may wait for its peers (the stall watchdog); 0: `timeout`.
  std::chrono::milliseconds collectiveTimeout{0};
  std::chrono::milliseconds opTimeout() const { return collectiveTimeout.count() > 0 ? collectiveTimeout : timeout; }
  std::string iface;  // Gloo network interface; empty: loopback for a loopback master, else the host's address
  // A c10d FileStore at this path instead of the TCPStore: a single-machine job opens no store port at all
  // (c10d 1.13's TCPStore listens on every interface, whatever masterAddr says). Gloo then uses loopback.
  std::string storeFile;
  std::string jobToken;       // only processes with the same token join (see JobAdmission.h); empty: none
  bool insecureOpen = false;  // --insecure-open-job: a TCP store beyond loopback may go without a token (ClosedJob.h)
  // A job restarted whole by its launcher meets again under fresh keys (attemptPrefix): the dead attempt's
  // rank claims and addresses stay in the store.
  int attempt = 0;
  int glooThreads = kDefaultGlooThreads;  // Gloo's own threads per group (a worker under a CPU limit takes fewer)

  // Where Gloo listens unless iface names an interface: loopback for a file store, whose peers are all
  // on this machine, else the master's address decides (see joinGroup).
  std::string glooHost() const { return storeFile.empty() ? masterAddr : "127.0.0.1"; }
  // A job whose processes all run on this machine: a file store, or a store on a loopback address.
  bool onOneMachine() const { return !storeFile.empty() || isLoopback(masterAddr); }
};

// Connects to (or hosts) the store, checks the job token, the world size and that this rank is not
// taken yet, waits until all ranks have arrived, and forms the process group. Throws RuntimeFailure
// naming the missing ranks when they do not arrive within the timeout, UsageError for a process that
// does not belong to the job.
std::unique_ptr<Communicator> rendezvous(const RendezvousOptions& options);

// The store of a job as its groups see it (what rendezvous() forms the workers' group over), for a
// process outside that group (a parameter server) that joins a side group with the workers.
c10::intrusive_ptr<c10d::Store> connectJobStore(const RendezvousOptions& options);

// A launcher of a job over several hosts, before it starts workers: the job's keys once the store admits its
// token (a wrong token is one line from the launcher rather than one per worker), where the hosts meet.
c10::intrusive_ptr<c10d::Store> admitLauncher(const RendezvousOptions& options);

// joinGroup over `store` seen under `prefix` (one of GroupPrefixes.h): each group of a store keeps to its own keys.
std::unique_ptr<Communicator> joinGroupUnder(const std::string& prefix, const c10::intrusive_ptr<c10d::Store>& store,
                                             int rank, int worldSize, std::chrono::milliseconds timeout,
                                             const std::string& host = "127.0.0.1", const std::string& iface = "",
                                             int threads = kDefaultGlooThreads);

// A second, independent group of the same ranks (e.g. for probes on another thread), formed over
// the main group's store under `prefix` (GroupPrefixes.h). Collective: every rank calls it with the same prefix.
std::unique_ptr<Communicator> sideGroup(Communicator& main, const std::string& prefix,
                                        const RendezvousOptions& options);

// The store a launcher keeps alive for its workers (a TCPStore server, or the FileStore at
// options.storeFile), with the job published (token record, world size). Port 0 picks a free port.
class StoreServer {
 public:
  explicit StoreServer(const RendezvousOptions& options);
  ~StoreServer();
  int port() const;

 private:
  c10::intrusive_ptr<c10d::Store> store_;
  int port_;
};

}  // namespace balancenet::comm
