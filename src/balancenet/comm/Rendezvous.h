// Rendezvous: ranks meet through a c10d TCPStore and form a Gloo process group.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <c10/util/intrusive_ptr.h>

#include "balancenet/comm/Communicator.h"

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
};

// Connects to (or hosts) the store, waits until all ranks have arrived, and forms the process group.
// Throws RuntimeFailure naming the missing ranks when they do not arrive within the timeout.
std::unique_ptr<Communicator> rendezvous(const RendezvousOptions& options);

// The store of a job as its groups see it (what rendezvous() forms the workers' group over), for a
// process outside that group (a parameter server) that joins a side group with the workers.
c10::intrusive_ptr<c10d::Store> connectJobStore(const RendezvousOptions& options);

// Forms a Gloo group over an existing store (a shared HashStore lets tests run ranks as threads).
std::unique_ptr<Communicator> joinGroup(const c10::intrusive_ptr<c10d::Store>& store, int rank, int worldSize,
                                        std::chrono::milliseconds timeout, const std::string& host = "127.0.0.1",
                                        const std::string& iface = "");

// A second, independent group of the same ranks (e.g. for probes on another thread), formed over
// the main group's store under its own key prefix. Collective: every rank calls it with the same name.
std::unique_ptr<Communicator> sideGroup(Communicator& main, const std::string& name, const RendezvousOptions& options);

// The store server a launcher keeps alive for its workers. Port 0 picks a free port.
class StoreServer {
 public:
  StoreServer(const std::string& host, int port, std::chrono::milliseconds timeout);
  ~StoreServer();
  int port() const;

 private:
  c10::intrusive_ptr<c10d::Store> store_;
  int port_;
};

bool isLoopback(const std::string& host);

}  // namespace balancenet::comm
