// The federated server optimiser's and the robust aggregation's flags.
#include "balancenet/cli/flags/ServerOptFlags.h"

#include <cmath>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "balancenet/core/Error.h"
#include "balancenet/federated/UpdateCheck.h"
#include "balancenet/federated/serveropt/ServerOptimizer.h"
#include "balancenet/federated/strategies/TrimmedMean.h"

namespace balancenet::cli {

void addServerOptFlags(CLI::App& app, federated::FederatedOptions& o, ServerOptRaw& raw) {
  app.get_option("--server-lr")
      ->description(fmt::format(
          "Server step size. avg: scales the strategy's aggregated update (1: plain FedAvg); avgm, adam, yogi, "
          "adagrad: their eta on the pseudo-gradient (avgm: 1; adam, yogi, adagrad: {:g} unless given, 0.01 to "
          "0.03 is Reddi et al.'s best range with tau 1e-3)",
          kDefaultAdaptiveServerLr))
      ->each([&raw](const std::string&) { raw.serverLrGiven = true; });
  app.add_option("--server-opt", o.serverOpt,
                 "Server optimiser on the strategy's update (works with every strategy): avg (the strategy's update "
                 "as it is), avgm (server momentum, FedAvgM), adam, yogi, adagrad (FedAdam, FedYogi, FedAdagrad, "
                 "Reddi et al. 2021, no bias correction)")
      ->capture_default_str();
  app.add_option("--server-momentum", o.serverMomentum, "Server optimiser's b1 (avgm, adam, yogi, adagrad), in [0, 1)")
      ->capture_default_str();
  app.add_option("--server-beta2", o.serverBeta2, "Server optimiser's b2 (adam, yogi), in [0, 1)")
      ->capture_default_str();
  app.add_option("--server-tau", o.serverTau,
                 "Server optimiser's adaptivity tau (adam, yogi, adagrad): x += eta m / (sqrt(v) + tau), v from tau^2")
      ->capture_default_str();
  app.add_option("--client-momentum", o.clientMomentum,
                 "Momentum of the clients' local SGD, in [0, 1); the buffer starts at 0 for every task (fednova and "
                 "balanced normalise by it)")
      ->capture_default_str();
  app.add_option("--aggregator", raw.aggregator,
                 "mean, or trimmed-mean[:BETA] (BETA in [0, 0.5), default 0.1): per coordinate, the floor(BETA n) "
                 "largest and smallest of the n accepted updates are dropped before the strategy's weighted average")
      ->capture_default_str();
  app.add_option("--max-update-norm", o.maxUpdateNorm,
                 fmt::format("Reject a client update whose L2 norm is above this (0: above {:g} x the median norm of "
                             "the round's other updates, when there are at least {}); NaN/Inf or wrong-size updates "
                             "are always rejected (status 'rejected' in rounds.csv)",
                             federated::kNormMedianFactor, federated::kMinPeersForMedian))
      ->capture_default_str();
}

void validateServerOptFlags(federated::FederatedOptions& o, const ServerOptRaw& raw) {
  federated::checkServerOptOptions(o);
  if (!raw.serverLrGiven && o.serverOpt != "avg" && o.serverOpt != "avgm") o.serverLr = kDefaultAdaptiveServerLr;
  o.trimBeta = federated::parseAggregator(raw.aggregator);
  if (!(o.maxUpdateNorm >= 0) || !std::isfinite(o.maxUpdateNorm))
    throw UsageError(
        fmt::format("--max-update-norm must be 0 (relative to the median) or positive, got {}", o.maxUpdateNorm));
}

}  // namespace balancenet::cli
