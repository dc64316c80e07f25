// ClientRoster: where a federated server's clients come from, behind one narrow interface so that one server
// loop serves both modes: launched client processes (a fixed number, LaunchedRoster) or clients that enrol
// over the network with their own data and come and go (EnrolledRoster). The server asks at round boundaries.
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "balancenet/data/Dataset.h"
#include "balancenet/federated/process/ClientChannel.h"
#include "balancenet/models/Network.h"

namespace balancenet::federated {

// A client that (re)joined, with its channel formed.
struct Arrival {
  int client = 0;
  std::string name;  // "" for a launched client
  int64_t shardSamples = 0;
  std::unique_ptr<ClientChannel> channel;
};

// What the server has when its clients are first awaited.
struct RosterStart {
  const data::Dataset& train;  // the server's training split (the launched clients' shards are cut from it)
  models::Network& net;        // the global model, as the server built it for its data
  std::string modelName;
  std::chrono::steady_clock::time_point deadline;  // the first clients arrive before it
};

class ClientRoster {
 public:
  virtual ~ClientRoster() = default;
  // The clients the first round may use; throws RuntimeFailure (or UsageError) when too few came in time.
  virtual std::vector<Arrival> first(const RosterStart& start) = 0;
  // The clients that joined or rejoined since the last call (connected[c]: client c has a live channel).
  virtual std::vector<Arrival> arrivals(const std::vector<bool>& connected) = 0;
  // A resumed server's clients as its checkpoint knew them (names by client id): an enrolled roster gives a
  // client that enrols under one of these names that id again. A launched roster's ids are fixed already.
  virtual void restore(const std::vector<std::string>& names) {}
  // The number of clients when it is fixed (launched), else 0.
  virtual int fixedClients() const = 0;
  // The server has finished: clients that still try to join are told so.
  virtual void close() {}
};

}  // namespace balancenet::federated
