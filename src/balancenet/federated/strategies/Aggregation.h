// Aggregation: the server-side update rules the strategies share (weighted sums of client deltas, FedAvg's
// sample weights, FedNova's normalisation, FedBuff's staleness weights).
#pragma once
#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "balancenet/federated/Strategy.h"

namespace balancenet::federated {

// FedAvg's p_i = shardSamples_i / sum over `updates`.
std::vector<double> sampleWeights(const std::vector<ClientUpdate>& updates);

// global + sum_i weights_i x delta_i, summed in float64 (the result in global's dtype). InternalError for no
// updates, a weight count unlike the update count, or a delta of another size than global.
at::Tensor applyWeightedDeltas(const at::Tensor& global, const std::vector<ClientUpdate>& updates,
                               const std::vector<double>& weights);

// The strategies' one way to fold updates: the values delta_i / divisors_i (empty: all 1) combined with weights
// w_i. trimBeta 0 (--aggregator mean): global + sum_i (w_i / divisors_i) delta_i (applyWeightedDeltas, bit for
// bit as before --aggregator existed); else the weighted coordinate-wise trimmed mean (TrimmedMean.h), which
// trims the values the strategy averages (FedNova's normalised d_i, not the raw deltas).
at::Tensor combineDeltas(const at::Tensor& global, const std::vector<ClientUpdate>& updates,
                         const std::vector<double>& weights, const std::vector<double>& divisors, double trimBeta);

// FedNova's a_i for `steps` local steps of SGD with momentum rho (Wang et al. 2020, section 4): the sum over the
// steps of each gradient's total weight in the delta, [steps - rho (1 - rho^steps) / (1 - rho)] / (1 - rho);
// `steps` itself for plain SGD (rho 0).
double fedNovaStepWeight(int64_t steps, double momentum);

// FedNova (Wang et al. 2020): d_i = delta_i / a_i with a_i = fedNovaStepWeight(doneSteps_i, the clients'
// momentum), tau_eff = sum_i p_i a_i, new = global + serverLr x tau_eff x sum_i p_i d_i (a trimmed mean of the
// d_i with trimBeta > 0, tau_eff over all accepted). Unequal local work thus moves the model by the average step
// direction, not towards the clients that did the most steps.
at::Tensor fedNovaAggregate(const at::Tensor& global, const std::vector<ClientUpdate>& updates,
                            const FederatedOptions& options);

// FedBuff's weight of an update `staleness` server versions old: 1 / sqrt(1 + staleness) (Nguyen et al. 2022).
double stalenessWeight(int64_t staleness);

}  // namespace balancenet::federated
