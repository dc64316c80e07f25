// FederatedServer: the server process of `balancenet federate`: the global model, the rounds (or, for an
// asynchronous strategy, the buffered updates), the clients' channels, evaluation, checkpoints and the
// run's outputs (partition.csv, rounds.csv, summary.json). See docs/federated.md.
#pragma once
#include <c10/util/intrusive_ptr.h>

#include "balancenet/federated/process/ClientRoster.h"
#include "balancenet/federated/process/FederatedProcess.h"

namespace c10d {
class Store;
}

namespace balancenet::federated {

// Runs the whole federated training with the clients `roster` brings; returns the exit code (0).
int runFederatedServer(const ProcessSettings& settings, ClientRoster& roster);
// The launched job's server: its clients are the launcher's --clients processes (LaunchedRoster).
int runFederatedServer(const ProcessSettings& settings, const c10::intrusive_ptr<c10d::Store>& store);

}  // namespace balancenet::federated
