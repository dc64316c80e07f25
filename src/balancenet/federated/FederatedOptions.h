// FederatedOptions: what `balancenet federate` runs (one server, N clients with their own data shards).
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include "balancenet/core/FieldList.h"

namespace balancenet::federated {

// --alpha iid: every client's labels follow the whole set's (a uniform random split).
constexpr double kIid = std::numeric_limits<double>::infinity();

// --local-steps N (every client N local steps a round) or LO:HI (each client's count drawn per round,
// uniformly in [LO, HI], from the seed: FedNova's heterogeneous-local-work setting).
struct LocalSteps {
  int64_t low = 20;
  int64_t high = 20;
  bool drawn() const { return high > low; }

  // The fields a launcher sends its workers (core/FieldList.h): every one.
  BALANCENET_FIELDS(low, high);
};
BALANCENET_CHECK_FIELDS(LocalSteps);

struct FederatedOptions {
  int clients = 8;                    // --clients: client processes beside the server
  int64_t rounds = 100;               // --rounds (fedbuff: server updates)
  double timeBudgetS = 0;             // --time-budget-s: also stop after this wall time (0: rounds only)
  std::string strategy = "balanced";  // --strategy (see StrategyRegistry.h)
  double alpha = 0.5;                 // --alpha: Dirichlet concentration of the label split; kIid: iid
  LocalSteps localSteps;              // --local-steps
  int64_t localBatch = 32;            // --local-batch: samples per local step
  double fraction = 1;                // --fraction: share of the clients sampled each round, in (0, 1]
  double deadlineS = 0;               // --deadline-s: a round's deadline (0: wait for all)
  double mu = 0.01;                   // --mu: FedProx's proximal weight
  int bufferSize = 4;                 // --buffer: FedBuff aggregates every K updates
  double serverLr = 1;                // --server-lr: step size of the aggregated update on the server
  double clientLr = 0.05;             // --lr: the clients' local SGD step size
  uint64_t seed = 1;                  // --seed: weights, shards, sampling, local batches, drawn steps
  int evalEvery = 1;                  // --eval-every: rounds between test evaluations on the server
  // --client-eval-fraction: each client's share of its shard held out for federated evaluation (0: none).
  double clientEvalFraction = 0.1;
  // --client-eval-every: rounds between the clients' evaluations (0: the last round only). Not every round by
  // default: a slow client's evaluation of its held-out share takes seconds and holds up its round.
  int clientEvalEvery = 10;
  // The server optimiser (serveropt/ServerOptimizer.h): avg (serverLr scales the strategy's update, as ever),
  // avgm (FedAvgM), adam, yogi, adagrad (Reddi et al. 2021, with serverLr as eta).
  std::string serverOpt = "avg";  // --server-opt
  double serverMomentum = 0.9;    // --server-momentum: b1 (avgm, adam, yogi, adagrad)
  double serverBeta2 = 0.99;      // --server-beta2: b2 (adam, yogi)
  double serverTau = 1e-3;        // --server-tau: adaptivity tau (adam, yogi, adagrad)
  double clientMomentum = 0;      // --client-momentum: local SGD momentum, a fresh buffer each task
  double trimBeta = 0;            // --aggregator trimmed-mean:BETA (0: mean)
  double maxUpdateNorm = 0;       // --max-update-norm: reject a larger update (0: 10x the round's median)

  // The fields a launcher sends its workers (core/FieldList.h): every one.
  BALANCENET_FIELDS(clients, rounds, timeBudgetS, strategy, alpha, localSteps, localBatch, fraction, deadlineS, mu,
                    bufferSize, serverLr, clientLr, seed, evalEvery, clientEvalFraction, clientEvalEvery, serverOpt,
                    serverMomentum, serverBeta2, serverTau, clientMomentum, trimBeta, maxUpdateNorm);
};
BALANCENET_CHECK_FIELDS(FederatedOptions);

}  // namespace balancenet::federated
