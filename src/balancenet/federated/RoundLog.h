// RoundLog: what each round did, per client (rounds.csv), and the run's summary (summary.json), as text
// for trainer::writeRunFile.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "balancenet/federated/FederatedEvaluation.h"

namespace balancenet::federated {

// One client in one round (fedbuff: one server update).
struct ClientRoundRecord {
  int client = 0;
  int64_t assignedSteps = 0;
  int64_t doneSteps = 0;
  int64_t samples = 0;
  int64_t uploadBytes = 0;    // its update's bytes on the wire
  double seconds = 0;         // from the task's send to its update's arrival
  double computeSeconds = 0;  // of which it trained (paced); the rest is transfer and waiting
  int64_t staleness = 0;      // server versions between its start and its aggregation
  // ok | late (missed the deadline, left out) | rejected (UpdateCheck refused it: NaN/Inf, wrong size, huge
  // norm) | dead | skipped (not sampled)
  std::string status = "ok";
};

struct RoundRecord {
  int64_t round = 0;
  double wallSeconds = 0;              // since training started, at the round's end (aggregation done)
  double roundSeconds = 0;             // the round's own length
  std::optional<double> testAccuracy;  // when evaluated after this round
  std::optional<double> testLoss;
  int64_t downloadBytes = 0;  // model bytes the server sent this round
  std::vector<ClientRoundRecord> clients;
  std::vector<ClientEvaluationRecord> clientEvaluations;  // in client order; empty: none this round
};

// rounds.csv, one row per (round, client): round,wall_s,round_s,test_accuracy,test_loss,client,
// assigned_steps,done_steps,samples,upload_bytes,seconds,compute_s,staleness,status (accuracy empty when not
// evaluated).
std::string roundsCsv(const std::vector<RoundRecord>& rounds);

// client_eval.csv, one row per client evaluation: round,client,samples,accuracy,loss.
std::string clientEvalCsv(const std::vector<RoundRecord>& rounds);

struct FederatedSummary {
  std::string strategy;
  int clients = 0;
  int64_t rounds = 0;
  double wallSeconds = 0;
  double finalAccuracy = 0;  // the last evaluation's
  // For 0.70, 0.80, 0.85: the wall time and round of the first evaluation at or above it (absent: never).
  std::map<double, std::pair<double, int64_t>> timeToAccuracy;
  int64_t uploadBytes = 0;
  int64_t downloadBytes = 0;
  // Over the run, the share of client time spent not training: 1 - sum of computeSeconds /
  // (clients x wall time).
  double clientIdleFraction = 0;
  // The last round with client evaluations (FederatedEvaluation.h); none: no client evaluated.
  std::optional<FederatedEvaluation> federatedEvaluation;
};

FederatedSummary summarise(const std::string& strategy, int clients, const std::vector<RoundRecord>& rounds);

// summary.json: {"kind": "federated", "strategy", "clients", "rounds", "wall_seconds", "final_accuracy",
// "time_to_accuracy": {"0.70": {"seconds", "round"} | null, ...}, "upload_bytes", "download_bytes",
// "client_idle_fraction", "federated_evaluation": {"round", "clients", "samples", "accuracy", "loss",
// "min_accuracy", "p10_accuracy", "per_client": [{"client", "samples", "accuracy", "loss"}, ...]} | null, plus
// `extra` (the run's settings) merged in}. Throws InternalError unless `extraJson` is a JSON object.
std::string summaryJson(const FederatedSummary& summary, const std::string& extraJson = "{}");

}  // namespace balancenet::federated
