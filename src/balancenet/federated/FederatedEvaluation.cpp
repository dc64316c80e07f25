// One round's client evaluations summed up.
#include "balancenet/federated/FederatedEvaluation.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "balancenet/core/Error.h"

namespace balancenet::federated {

void to_json(nlohmann::json& j, const ClientEvaluationRecord& r) {
  j = {{"client", r.client}, {"samples", r.samples}, {"accuracy", r.accuracy}, {"loss", r.loss}};
}

void from_json(const nlohmann::json& j, ClientEvaluationRecord& r) {
  r.client = j.at("client");
  r.samples = j.at("samples");
  r.accuracy = j.at("accuracy");
  r.loss = j.at("loss");
}

bool clientsEvaluate(const FederatedOptions& options, int64_t round, bool asynchronous) {
  if (asynchronous || options.clientEvalFraction <= 0) return false;
  return (options.clientEvalEvery > 0 && round % options.clientEvalEvery == 0) || round == options.rounds - 1;
}

std::string describe(const FederatedEvaluation& e) {
  return fmt::format("client accuracy {:.2f}% (worst {:.2f}%, p10 {:.2f}%, round {})", 100 * e.accuracy,
                     100 * e.minAccuracy, 100 * e.p10Accuracy, e.round);
}

double percentile(std::vector<double> values, double q) {
  if (values.empty()) throw InternalError("percentile of no values");
  std::sort(values.begin(), values.end());
  const double position = (static_cast<double>(values.size()) - 1) * std::clamp(q, 0.0, 100.0) / 100;
  const auto below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (position - static_cast<double>(below)) * (values[above] - values[below]);
}

FederatedEvaluation summarizeClientEvaluations(int64_t round, const std::vector<ClientEvaluationRecord>& rows) {
  if (rows.empty()) throw InternalError("summarizeClientEvaluations: no rows");
  FederatedEvaluation e;
  e.round = round;
  e.clients = rows;
  double correct = 0, lossSum = 0;
  std::vector<double> accuracies;
  for (const auto& r : rows) {
    e.samples += r.samples;
    correct += r.accuracy * static_cast<double>(r.samples);
    lossSum += r.loss * static_cast<double>(r.samples);
    accuracies.push_back(r.accuracy);
  }
  if (e.samples > 0) {
    e.accuracy = correct / static_cast<double>(e.samples);
    e.loss = lossSum / static_cast<double>(e.samples);
  }
  e.minAccuracy = *std::min_element(accuracies.begin(), accuracies.end());
  e.p10Accuracy = percentile(accuracies, 10);
  return e;
}

}  // namespace balancenet::federated
