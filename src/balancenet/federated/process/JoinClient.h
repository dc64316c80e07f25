// JoinClient: `balancenet federate join`: a client with its own data that enrols with a running server
// (`federate serve`) over the network, builds the server's model for its data, and then serves tasks until the
// server stops (see docs/federated.md).
#pragma once
#include <optional>
#include <string>

#include <c10/util/intrusive_ptr.h>

#include "balancenet/data/DataOptions.h"
#include "balancenet/emulation/Pacing.h"
#include "balancenet/federated/Enrolment.h"
#include "balancenet/federated/process/ClientChannel.h"
#include "balancenet/federated/process/ClientLink.h"
#include "balancenet/models/ModelZoo.h"
#include "balancenet/objective/ObjectiveOptions.h"

namespace c10d {
class Store;
}

namespace balancenet::federated {

struct JoinSettings {
  data::DataOptions data;  // the client trains on its whole training split
  objective::ObjectiveOptions objective;
  ChannelOptions channel;
  std::string name;   // --name: the same name after a restart gets the same client id back
  std::string model;  // --model when given: the server refuses the client when it trains another
  std::optional<emulation::PaceMode> paceMode;  // --node-speed (Paced) or --slowdown (Relative)
  double pace = 1;
  ClientLink link;                           // --net-delay-ms, --net-bandwidth-mbps
  std::string where;                         // the server's HOST:PORT, for messages
  std::chrono::milliseconds timeout{60000};  // for the server's model record to appear
};

// The server's model options as it publishes them (its seed and evaluation share too), and back: the model a
// client builds before fitting it to its data.
ServedModel servedModelOf(const models::ModelOptions& model, uint64_t seed, double clientEvalFraction);
models::ModelOptions modelOptionsOf(const ServedModel& served);

// Local batches of joined clients are salted with (round * kJoinSaltClients + id): ids stay below it.
inline constexpr int kJoinSaltClients = 1 << 20;

// Enrols on `store` (the server's job store), waits for the answer, then serves tasks. Returns 0 when the server
// stops it or has finished; UsageError when the server refuses it.
int runJoinClient(const JoinSettings& settings, const c10::intrusive_ptr<c10d::Store>& store);

}  // namespace balancenet::federated
