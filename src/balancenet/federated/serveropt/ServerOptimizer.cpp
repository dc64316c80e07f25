// Server optimisers over the strategies' pseudo-gradient: FedAvgM, FedAdam, FedYogi, FedAdagrad.
#include "balancenet/federated/serveropt/ServerOptimizer.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "balancenet/core/Error.h"

namespace balancenet::federated {
namespace {

void requireUnitInterval(double value, const char* flag) {
  if (!(value >= 0 && value < 1)) throw UsageError(fmt::format("{} must be in [0, 1), got {}", flag, value));
}

}  // namespace

std::vector<std::string> serverOptNames() { return {"avg", "avgm", "adam", "yogi", "adagrad"}; }

void checkServerOptOptions(const FederatedOptions& o) {
  const auto names = serverOptNames();
  if (std::find(names.begin(), names.end(), o.serverOpt) == names.end())
    throw UsageError(fmt::format("unknown --server-opt '{}'; choose one of: {}", o.serverOpt, fmt::join(names, ", ")));
  requireUnitInterval(o.serverMomentum, "--server-momentum");
  requireUnitInterval(o.serverBeta2, "--server-beta2");
  requireUnitInterval(o.clientMomentum, "--client-momentum");
  if (!(o.serverTau > 0) || !std::isfinite(o.serverTau))
    throw UsageError(fmt::format("--server-tau must be positive, got {}", o.serverTau));
}

FederatedOptions strategyOptions(const FederatedOptions& options) {
  FederatedOptions o = options;
  if (o.serverOpt != "avg") o.serverLr = 1;
  return o;
}

at::Tensor serverStep(const FederatedOptions& o, const at::Tensor& global, const at::Tensor& proposed,
                      ServerOptState& state) {
  if (o.serverOpt == "avg") return proposed;
  const auto x = global.to(at::kDouble);
  const auto delta = proposed.to(at::kDouble) - x;
  if (!state.m.defined()) state.m = at::zeros_like(delta);
  const double b1 = o.serverMomentum, b2 = o.serverBeta2, tau = o.serverTau, eta = o.serverLr;
  if (o.serverOpt == "avgm") {
    state.m = b1 * state.m + delta;
    return (x + eta * state.m).to(global.scalar_type());
  }
  if (!state.v.defined()) state.v = at::full_like(delta, tau * tau);
  state.m = b1 * state.m + (1 - b1) * delta;
  const auto squared = delta * delta;
  if (o.serverOpt == "adagrad")
    state.v = state.v + squared;
  else if (o.serverOpt == "yogi")
    state.v = state.v - (1 - b2) * squared * at::sign(state.v - squared);
  else if (o.serverOpt == "adam")
    state.v = b2 * state.v + (1 - b2) * squared;
  else
    throw InternalError("serverStep: unknown server optimiser '" + o.serverOpt + "'");
  return (x + eta * state.m / (at::sqrt(state.v) + tau)).to(global.scalar_type());
}

}  // namespace balancenet::federated
