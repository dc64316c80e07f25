// Strategy: how a federated server configures a round (which clients, how much local work) and folds the
// returned updates into the global model. Pure: no I/O, no clocks; the server (FederatedServer) owns the
// processes, the timing and the measurements, and passes them in.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "balancenet/federated/FederatedOptions.h"

namespace balancenet::federated {

// What the server knows of a client when it configures work.
struct ClientState {
  int client = 0;               // 0 .. clients-1
  bool available = true;        // alive and idle: it may be given a task now
  int64_t shardSamples = 0;     // its shard's size (FedAvg's weight n_i)
  double samplesPerSecond = 0;  // the server's running estimate of its local training speed; 0: not measured yet
};

struct RoundContext {
  int64_t round = 0;                 // rounds configured so far (fedbuff: the server's model version)
  std::vector<ClientState> clients;  // every client, indexed by id
};

// One client's work for a round.
struct ClientTask {
  int client = 0;
  int64_t localSteps = 1;  // local SGD steps of `batch` samples
  int64_t batch = 0;       // samples per local step; 0: --local-batch
  double deadlineS = 0;    // seconds after it starts, the client stops and reports what it did; 0: none
  double mu = 0;           // FedProx's proximal weight (0: plain local SGD)
};

// What a client sent back.
struct ClientUpdate {
  int client = 0;
  at::Tensor delta;  // float32, flat: its weights after local training minus those it was sent
  int64_t assignedSteps = 0;
  int64_t doneSteps = 0;  // < assignedSteps when it stopped at the deadline
  int64_t samples = 0;    // samples it trained on
  int64_t shardSamples = 0;
  int64_t baseVersion = 0;    // the server's model version it started from (staleness = version - this)
  double computeSeconds = 0;  // its local training time, for the speed estimate
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;

  // Tasks for some of the clients marked available: all of a round's at its start for a synchronous
  // strategy; for an asynchronous one, work for whichever clients are idle now. Deterministic in
  // (options' seed, context): a resumed run configures the same rounds.
  virtual std::vector<ClientTask> configure(const RoundContext& context) = 0;

  // Whether an update counts. Default: only complete work (FedAvg drops a client that missed the
  // deadline); strategies that normalise by the work done (FedNova, balanced) take partial work.
  virtual bool accepts(const ClientUpdate& update) const {
    return update.doneSteps > 0 && update.doneSteps == update.assignedSteps;
  }

  // The new global weights (flat): `global` moved by the accepted `updates` (at least one). `version`:
  // the server's model version now (the number of aggregations so far).
  virtual at::Tensor aggregate(const at::Tensor& global, const std::vector<ClientUpdate>& updates, int64_t version) = 0;

  // Asynchronous (FedBuff): no rounds; a client gets new work as soon as it returns, and the server
  // aggregates every bufferSize() accepted updates.
  virtual bool asynchronous() const { return false; }
  virtual int bufferSize() const { return 0; }
};

}  // namespace balancenet::federated
