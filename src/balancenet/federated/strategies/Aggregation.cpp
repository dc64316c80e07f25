// Aggregation: weighted sums of client deltas in float64.
#include "balancenet/federated/strategies/Aggregation.h"

#include <ATen/ATen.h>

#include <cmath>

#include <fmt/format.h>

#include "balancenet/core/Error.h"

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

at::Tensor fedNovaAggregate(const at::Tensor& global, const std::vector<ClientUpdate>& updates, double serverLr) {
  const auto p = sampleWeights(updates);
  double tauEff = 0;
  for (size_t i = 0; i < updates.size(); ++i) {
    if (updates[i].doneSteps < 1)
      throw InternalError(
          fmt::format("fedNovaAggregate: client {} did {} steps", updates[i].client, updates[i].doneSteps));
    tauEff += p[i] * static_cast<double>(updates[i].doneSteps);
  }
  // serverLr x tau_eff x p_i / a_i: the weight of delta_i itself.
  std::vector<double> w;
  for (size_t i = 0; i < updates.size(); ++i) w.push_back(serverLr * tauEff * p[i] / double(updates[i].doneSteps));
  return applyWeightedDeltas(global, updates, w);
}

double stalenessWeight(int64_t staleness) {
  if (staleness < 0) throw InternalError(fmt::format("stalenessWeight: negative staleness {}", staleness));
  return 1.0 / std::sqrt(1.0 + static_cast<double>(staleness));
}

}  // namespace balancenet::federated
