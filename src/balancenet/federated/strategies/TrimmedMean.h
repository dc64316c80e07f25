// TrimmedMean: --aggregator, and the coordinate-wise trimmed mean of client deltas (Yin et al., "Byzantine-
// Robust Distributed Learning", ICML 2018), weighted so that it composes with every strategy's weights.
#pragma once
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "balancenet/federated/Strategy.h"

namespace balancenet::federated {

// --aggregator: "mean" -> 0; "trimmed-mean" -> 0.1; "trimmed-mean:BETA" -> BETA in [0, 0.5). UsageError else.
double parseAggregator(const std::string& text);
constexpr double kDefaultTrimBeta = 0.1;

// The values v_i = delta_i / divisors_i (divisors empty: all 1), per coordinate sorted over the n updates; the
// floor(beta n) smallest and largest dropped; the rest averaged with their weights w_i renormalised over those
// kept; the result global + (sum_i w_i) x that average. With equal weights: Yin's trimmed mean; with
// floor(beta n) = 0: the weighted sum global + sum_i w_i v_i (up to rounding). float64 inside, global's dtype
// out. InternalError for no updates, mismatched counts, or a delta of another size than global.
at::Tensor trimmedMeanAggregate(const at::Tensor& global, const std::vector<ClientUpdate>& updates,
                                const std::vector<double>& weights, const std::vector<double>& divisors, double beta);

}  // namespace balancenet::federated
