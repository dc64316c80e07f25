// RoundLog: rounds.csv and summary.json of a federated run.
#include "balancenet/federated/RoundLog.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "balancenet/core/Error.h"
#include "balancenet/metrics/TimeToAccuracy.h"

namespace balancenet::federated {

namespace {

std::string optionalCell(const std::optional<double>& v) { return v ? fmt::format("{}", *v) : std::string(); }

nlohmann::json evaluationJson(const std::optional<FederatedEvaluation>& e) {
  if (!e) return nullptr;
  return {{"round", e->round},
          {"clients", e->clients.size()},
          {"samples", e->samples},
          {"accuracy", e->accuracy},
          {"loss", e->loss},
          {"min_accuracy", e->minAccuracy},
          {"p10_accuracy", e->p10Accuracy},
          {"per_client", e->clients}};
}

}  // namespace

std::string roundsCsv(const std::vector<RoundRecord>& rounds) {
  std::string csv =
      "round,wall_s,round_s,test_accuracy,test_loss,client,assigned_steps,done_steps,samples,upload_bytes,seconds,"
      "compute_s,staleness,status\n";
  for (const auto& r : rounds) {
    const std::string roundCells = fmt::format("{},{},{},{},{}", r.round, r.wallSeconds, r.roundSeconds,
                                               optionalCell(r.testAccuracy), optionalCell(r.testLoss));
    for (const auto& c : r.clients)
      csv += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", roundCells, c.client, c.assignedSteps, c.doneSteps,
                         c.samples, c.uploadBytes, c.seconds, c.computeSeconds, c.staleness, c.status);
  }
  return csv;
}

std::string clientEvalCsv(const std::vector<RoundRecord>& rounds) {
  std::string csv = "round,client,samples,accuracy,loss\n";
  for (const auto& r : rounds)
    for (const auto& e : r.clientEvaluations)
      csv += fmt::format("{},{},{},{},{}\n", r.round, e.client, e.samples, e.accuracy, e.loss);
  return csv;
}

FederatedSummary summarise(const std::string& strategy, int clients, const std::vector<RoundRecord>& rounds) {
  FederatedSummary s;
  s.strategy = strategy;
  s.clients = clients;
  s.rounds = static_cast<int64_t>(rounds.size());
  double computeSeconds = 0;
  for (const auto& r : rounds) {
    s.wallSeconds = r.wallSeconds;
    s.downloadBytes += r.downloadBytes;
    for (const auto& c : r.clients) {
      s.uploadBytes += c.uploadBytes;
      computeSeconds += c.computeSeconds;
    }
    if (!r.clientEvaluations.empty()) s.federatedEvaluation = summarizeClientEvaluations(r.round, r.clientEvaluations);
    if (!r.testAccuracy) continue;
    s.finalAccuracy = *r.testAccuracy;
    for (double target : metrics::kAccuracyTargets)
      if (*r.testAccuracy >= target && !s.timeToAccuracy.count(target))
        s.timeToAccuracy[target] = {r.wallSeconds, r.round};
  }
  const double clientSeconds = clients * s.wallSeconds;
  s.clientIdleFraction = clientSeconds > 0 ? 1 - computeSeconds / clientSeconds : 0;
  return s;
}

std::string summaryJson(const FederatedSummary& summary, const std::string& extraJson) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(extraJson);
  } catch (const nlohmann::json::exception& e) {
    throw InternalError(std::string("summaryJson: extra is not JSON: ") + e.what());
  }
  if (!j.is_object()) throw InternalError("summaryJson: extra must be a JSON object, got " + extraJson);
  // The summary's own fields win over a setting of the same name in `extra`.
  j["kind"] = "federated";
  j["strategy"] = summary.strategy;
  j["clients"] = summary.clients;
  j["rounds"] = summary.rounds;
  j["wall_seconds"] = summary.wallSeconds;
  j["final_accuracy"] = summary.finalAccuracy;
  auto& times = j["time_to_accuracy"] = nlohmann::json::object();
  for (double target : metrics::kAccuracyTargets) {
    const auto it = summary.timeToAccuracy.find(target);
    auto& entry = times[metrics::accuracyKey(target)] = nullptr;
    if (it != summary.timeToAccuracy.end()) entry = {{"seconds", it->second.first}, {"round", it->second.second}};
  }
  j["upload_bytes"] = summary.uploadBytes;
  j["download_bytes"] = summary.downloadBytes;
  j["client_idle_fraction"] = summary.clientIdleFraction;
  j["federated_evaluation"] = evaluationJson(summary.federatedEvaluation);
  return j.dump(2) + "\n";
}

}  // namespace balancenet::federated
