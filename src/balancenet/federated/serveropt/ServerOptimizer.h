// ServerOptimizer: what the federated server does with a strategy's aggregated update (Reddi et al., "Adaptive
// Federated Optimization", ICLR 2021, Algorithm 2). The strategy proposes a new global; the difference to the
// global, Delta_t, is the pseudo-gradient the server optimiser steps with. Pure: state in, state out.
#pragma once
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "balancenet/federated/FederatedOptions.h"

namespace balancenet::federated {

// The optimiser's state (float64, flat, the model's length); undefined before its first step. avgm keeps m
// only; adam, yogi and adagrad m and v.
struct ServerOptState {
  at::Tensor m;
  at::Tensor v;
};

// avg, avgm, adam, yogi, adagrad.
std::vector<std::string> serverOptNames();

// UsageError (one line) for an unknown --server-opt, or --server-momentum / --server-beta2 outside [0, 1),
// --server-tau not positive, --client-momentum outside [0, 1).
void checkServerOptOptions(const FederatedOptions& options);

// The options the strategy is built with: for avg, --server-lr scales the strategy's update as it always
// did; for the others it is the optimiser's eta, so the strategy proposes the unscaled update (serverLr 1).
FederatedOptions strategyOptions(const FederatedOptions& options);

// The new global from the global x_t and the strategy's proposal (Delta_t = proposed - global), with eta =
// --server-lr, b1 = --server-momentum, b2 = --server-beta2, tau = --server-tau:
//   avg:     proposed itself (bit for bit what the strategy gave)
//   avgm:    m_t = b1 m_{t-1} + Delta_t;  x_{t+1} = x_t + eta m_t      (FedAvgM, Hsu et al. 2019)
//   adam, yogi, adagrad: m_t = b1 m_{t-1} + (1 - b1) Delta_t, m_{-1} = 0, v_{-1} = tau^2, and
//     adagrad: v_t = v_{t-1} + Delta_t^2
//     yogi:    v_t = v_{t-1} - (1 - b2) Delta_t^2 sign(v_{t-1} - Delta_t^2)
//     adam:    v_t = b2 v_{t-1} + (1 - b2) Delta_t^2
//     x_{t+1} = x_t + eta m_t / (sqrt(v_t) + tau)     (no bias correction, as in the paper)
// Computed in float64; the result in global's dtype. `state` is updated.
at::Tensor serverStep(const FederatedOptions& options, const at::Tensor& global, const at::Tensor& proposed,
                      ServerOptState& state);

}  // namespace balancenet::federated
