// Coordinate-wise (weighted) trimmed mean of client deltas, and its flag.
#include "balancenet/federated/strategies/TrimmedMean.h"

#include <ATen/ATen.h>

#include <cmath>

#include <fmt/format.h>

#include "balancenet/core/Error.h"
#include "balancenet/core/ParseNumber.h"

namespace balancenet::federated {

double parseAggregator(const std::string& text) {
  const std::string prefix = "trimmed-mean";
  if (text == "mean") return 0;
  if (text == prefix) return kDefaultTrimBeta;
  const std::string bad =
      fmt::format("--aggregator must be mean, trimmed-mean or trimmed-mean:BETA with BETA in [0, 0.5), got '{}'", text);
  if (text.rfind(prefix + ":", 0) != 0) throw UsageError(bad);
  const auto beta = parseFiniteNumber(text.substr(prefix.size() + 1));
  if (!beta || !(*beta >= 0 && *beta < 0.5)) throw UsageError(bad);
  return *beta;
}

at::Tensor trimmedMeanAggregate(const at::Tensor& global, const std::vector<ClientUpdate>& updates,
                                const std::vector<double>& weights, const std::vector<double>& divisors, double beta) {
  const auto n = static_cast<int64_t>(updates.size());
  if (n == 0) throw InternalError("trimmedMeanAggregate: no updates");
  if (weights.size() != updates.size() || (!divisors.empty() && divisors.size() != updates.size()))
    throw InternalError(fmt::format("trimmedMeanAggregate: {} weights and {} divisors for {} updates", weights.size(),
                                    divisors.size(), updates.size()));
  std::vector<at::Tensor> rows;
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const auto& delta = updates[i].delta;
    if (!delta.defined() || delta.numel() != global.numel())
      throw InternalError(fmt::format("trimmedMeanAggregate: client {}'s update has {} values, the model {}",
                                      updates[i].client, delta.defined() ? delta.numel() : 0, global.numel()));
    rows.push_back(delta.to(at::kDouble).reshape({-1}) / (divisors.empty() ? 1.0 : divisors[i]));
    total += weights[i];
  }
  // beta < 0.5 keeps at least one value per coordinate: floor(beta n) < n / 2.
  const auto trim = static_cast<int64_t>(std::floor(beta * static_cast<double>(n)));
  const auto sorted = at::stack(rows).sort(0);
  const auto w = at::tensor(weights, at::kDouble).index_select(0, std::get<1>(sorted).reshape({-1})).reshape({n, -1});
  const auto kept = std::get<0>(sorted).narrow(0, trim, n - 2 * trim);
  const auto keptWeights = w.narrow(0, trim, n - 2 * trim);
  // A coordinate whose kept updates all weigh 0 (empty shards) moves by 0, not NaN.
  const auto average = (kept * keptWeights).sum(0) / keptWeights.sum(0).clamp_min(1e-300);
  return (global.to(at::kDouble) + total * average.reshape(global.sizes())).to(global.scalar_type());
}

}  // namespace balancenet::federated
