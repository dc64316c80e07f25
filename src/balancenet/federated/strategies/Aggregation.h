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

// FedNova (Wang et al. 2020) for clients running plain local SGD (no client momentum): d_i = delta_i / a_i with
// a_i = doneSteps_i, tau_eff = sum_i p_i a_i, new = global + serverLr x tau_eff x sum_i p_i d_i. Unequal local
// work thus moves the model by the average step direction, not towards the clients that did the most steps.
at::Tensor fedNovaAggregate(const at::Tensor& global, const std::vector<ClientUpdate>& updates, double serverLr);

// FedBuff's weight of an update `staleness` server versions old: 1 / sqrt(1 + staleness) (Nguyen et al. 2022).
double stalenessWeight(int64_t staleness);

}  // namespace balancenet::federated
