// Aggregation: weighted sums of client deltas in float64.
#include "balancenet/federated/strategies/Aggregation.h"

#include <ATen/ATen.h>

#include <cmath>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/federated/strategies/TrimmedMean.h"

namespace balancenet::federated {

std::vector<double> sampleWeights(const std::vector<ClientUpdate>& updates) {
  double total = 0;
  for (const auto& u : updates) total += static_cast<double>(u.shardSamples);
  if (!(total > 0)) throw InternalError("sampleWeights: the updates' shards hold no samples");
  std::vector<double> p;
  for (const auto& u : updates) p.push_back(static_cast<double>(u.shardSamples) / total);
  return p;
}

at::Tensor applyWeightedDeltas(const at::Tensor& global, const std::vector<ClientUpdate>& updates,
                               const std::vector<double>& weights) {
  if (updates.empty()) throw InternalError("aggregate: no updates");
  if (weights.size() != updates.size())
    throw InternalError(fmt::format("aggregate: {} weights for {} updates", weights.size(), updates.size()));
  auto sum = global.to(at::kDouble);
  for (size_t i = 0; i < updates.size(); ++i) {
    const auto& delta = updates[i].delta;
    if (!delta.defined() || delta.numel() != global.numel())
      throw InternalError(fmt::format("aggregate: client {}'s update has {} values, the model {}", updates[i].client,
                                      delta.defined() ? delta.numel() : 0, global.numel()));
    sum.add_(delta.to(at::kDouble).reshape(global.sizes()), weights[i]);
  }
  return sum.to(global.scalar_type());
}

at::Tensor combineDeltas(const at::Tensor& global, const std::vector<ClientUpdate>& updates,
                         const std::vector<double>& weights, const std::vector<double>& divisors, double trimBeta) {
  if (trimBeta > 0) return trimmedMeanAggregate(global, updates, weights, divisors, trimBeta);
  if (divisors.empty()) return applyWeightedDeltas(global, updates, weights);
  if (divisors.size() != weights.size())
    throw InternalError(fmt::format("combineDeltas: {} divisors for {} weights", divisors.size(), weights.size()));
  std::vector<double> w;
  for (size_t i = 0; i < weights.size(); ++i) w.push_back(weights[i] / divisors[i]);
  return applyWeightedDeltas(global, updates, w);
}

double fedNovaStepWeight(int64_t steps, double momentum) {
  const auto tau = static_cast<double>(steps);
  if (momentum == 0) return tau;
  return (tau - momentum * (1 - std::pow(momentum, tau)) / (1 - momentum)) / (1 - momentum);
}

at::Tensor fedNovaAggregate(const at::Tensor& global, const std::vector<ClientUpdate>& updates,
                            const FederatedOptions& options) {
  const auto p = sampleWeights(updates);
  double tauEff = 0;
  std::vector<double> a;
  for (size_t i = 0; i < updates.size(); ++i) {
    if (updates[i].doneSteps < 1)
      throw InternalError(
          fmt::format("fedNovaAggregate: client {} did {} steps", updates[i].client, updates[i].doneSteps));
    a.push_back(fedNovaStepWeight(updates[i].doneSteps, options.clientMomentum));
    tauEff += p[i] * a[i];
  }
  // serverLr x tau_eff x p_i, over a_i: the weight of delta_i itself.
  std::vector<double> w;
  for (size_t i = 0; i < updates.size(); ++i) w.push_back(options.serverLr * tauEff * p[i]);
  return combineDeltas(global, updates, w, a, options.trimBeta);
}

double stalenessWeight(int64_t staleness) {
  if (staleness < 0) throw InternalError(fmt::format("stalenessWeight: negative staleness {}", staleness));
  return 1.0 / std::sqrt(1.0 + static_cast<double>(staleness));
}

}  // namespace balancenet::federated
