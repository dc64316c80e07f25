// ServerCheckpoint: the federated server's state in the checkpoint module's files (atomic, checksummed,
// the newest K kept): global weights, rounds done, model version, the clients' speed estimates and the
// round records so far. Clients hold nothing a resume needs (their batches follow from seed and round).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "balancenet/checkpoint/CheckpointFile.h"
#include "balancenet/federated/FederatedOptions.h"
#include "balancenet/federated/RoundLog.h"
#include "balancenet/federated/serveropt/ServerOptimizer.h"
#include "balancenet/models/Network.h"

namespace balancenet::federated {

struct ServerState {
  int64_t round = 0;                     // rounds (fedbuff: server updates) done
  int64_t version = 0;                   // aggregations done
  at::Tensor global;                     // flat float32 weights
  std::vector<double> samplesPerSecond;  // per client; 0: not measured
  // Per client id: an enrolled client's --name ("" for a launched one). A resumed `federate serve` gives a
  // returning name its old id, so its speed estimate stays its own whatever order the clients join in.
  std::vector<std::string> clientNames;
  std::vector<RoundRecord> records;
  double wallSeconds = 0;    // training time so far (a resumed run's clock goes on from here)
  ServerOptState optimizer;  // --server-opt's m and v (undefined: none yet), raw float64 after the weights
  // Tasks out at clients when the checkpoint was written (fedbuff always has some): their work is not in the
  // checkpoint, so a resume loses it; the resumed run logs and counts them (summary.json tasks_lost_on_resume).
  int64_t tasksInFlight = 0;
  int64_t tasksLostOnResume = 0;  // lost by the resumes before this checkpoint
};

// What must match for a resume: the model, clients (worldSize), --local-batch (globalBatch), the seed;
// the strategy and a --server-opt other than avg are compared as the "optimizer".
// "federated <strategy>[ <server optimiser other than avg>]".
std::string federatedIdentityOptimizer(const FederatedOptions& options);
checkpoint::RunIdentity federatedIdentity(const FederatedOptions& options, const std::string& modelName,
                                          const models::Network& net);

std::string encodeServerState(const ServerState& state);
// Throws RuntimeFailure on bytes that are not a server state.
ServerState decodeServerState(const std::string& bytes);

// The launcher's check before any process starts (reads only; UsageError): with --resume an intact
// checkpoint of this run with fewer than options.rounds rounds must exist; without, the directory must hold none.
void preflightServerCheckpoints(const std::string& dir, int keep, bool resume, const FederatedOptions& options,
                                const std::string& modelName, const models::Network& net);

}  // namespace balancenet::federated
