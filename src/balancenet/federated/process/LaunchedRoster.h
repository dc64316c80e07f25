// LaunchedRoster: the clients of `balancenet federate`: --clients processes started by the launcher, each with
// its Dirichlet shard of the server's own training set; a dead one comes back when the launcher restarts it.
#pragma once
#include <map>

#include <c10/util/intrusive_ptr.h>

#include "balancenet/federated/process/ClientRoster.h"
#include "balancenet/federated/process/FederatedProcess.h"

namespace balancenet::federated {

class LaunchedRoster : public ClientRoster {
 public:
  LaunchedRoster(c10::intrusive_ptr<c10d::Store> store, const ProcessSettings& settings);
  // The shards (partition.csv), then every client's channel: each announces generation 1 and waits for the
  // server; one restarted before the server reached it has announced a later one, which the server opens.
  std::vector<Arrival> first(const RosterStart& start) override;
  // A client restarted by the launcher (a new generation) takes part again from this boundary on.
  std::vector<Arrival> arrivals(const std::vector<bool>& connected) override;
  int fixedClients() const override { return s_.options.clients; }

 private:
  c10::intrusive_ptr<c10d::Store> store_;
  const ProcessSettings& s_;
  std::map<int, int64_t> generations_;
};

}  // namespace balancenet::federated
