// FederatedEvaluation: the server's view of the clients' evaluations of the global model on their own
// held-out samples: one round's rows summed up (sample-weighted means, and the fairness numbers: the worst
// client and the 10th percentile of the clients' accuracies).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "balancenet/federated/FederatedOptions.h"

namespace balancenet::federated {

// One client's held-out samples under the global model it received in a round, before it trained: a round's
// rows describe the model that round started from.
struct ClientEvaluationRecord {
  int client = 0;
  int64_t samples = 0;
  double accuracy = 0;
  double loss = 0;
};

// {"client", "samples", "accuracy", "loss"}: summary.json's per-client rows and the server checkpoint's records.
void to_json(nlohmann::json& j, const ClientEvaluationRecord& r);
void from_json(const nlohmann::json& j, ClientEvaluationRecord& r);

struct FederatedEvaluation {
  int64_t round = 0;
  int64_t samples = 0;     // over the clients
  double accuracy = 0;     // sample-weighted mean over the clients
  double loss = 0;         // sample-weighted mean
  double minAccuracy = 0;  // the worst client's
  double p10Accuracy = 0;  // 10th percentile of the clients' accuracies (percentile() below)
  std::vector<ClientEvaluationRecord> clients;
};

// Whether the tasks of synchronous round `round` ask the clients to evaluate: with --client-eval-fraction
// above 0, the rounds that start from a model the server also evaluates (round % --eval-every == 0, model
// version `round`) and the last round. Never for an asynchronous strategy: its updates start from different
// versions, so a round's rows would mix models.
bool clientsEvaluate(const FederatedOptions& options, int64_t round, bool asynchronous);

// `rows` must not be empty (InternalError); rows with 0 samples weigh nothing but still count as clients.
FederatedEvaluation summarizeClientEvaluations(int64_t round, const std::vector<ClientEvaluationRecord>& rows);

// "client accuracy 81.20% (worst 64.00%, p10 70.10%, round 9)" for the server's final line.
std::string describe(const FederatedEvaluation& e);

// The q-th percentile (q in [0, 100]) with linear interpolation between the closest ranks (numpy's default):
// sorted v, position (n - 1) q / 100. InternalError on an empty list.
double percentile(std::vector<double> values, double q);

}  // namespace balancenet::federated
