// ServerOptFlags: `balancenet federate`'s server optimiser, client momentum, robust aggregation and update
// rejection flags (--server-opt, --server-momentum, --server-beta2, --server-tau, --client-momentum,
// --aggregator, --max-update-norm) and their checks.
#pragma once
#include <string>

#include "balancenet/federated/FederatedOptions.h"

namespace CLI {
class App;
}

namespace balancenet::cli {

// --server-lr's default eta for adam, yogi and adagrad: 10^-2, the low end of Reddi et al.'s best range, which
// also did best of 0.01, 0.03 and 0.1 with FedAdam on Fashion-MNIST at alpha 0.1 (docs/federated.md).
constexpr double kDefaultAdaptiveServerLr = 0.01;

// What the flags hold before validation.
struct ServerOptRaw {
  std::string aggregator = "mean";  // --aggregator
  bool serverLrGiven = false;       // --server-lr on the command line (else adam/yogi/adagrad take 0.01)
};

// Adds the flags into `options` (--aggregator's text and whether --server-lr is given into `raw`) and retells
// --server-lr.
void addServerOptFlags(CLI::App& app, federated::FederatedOptions& options, ServerOptRaw& raw);

// UsageError (one line naming the flag) for a bad value; sets options.trimBeta from the aggregator, and
// options.serverLr to kDefaultAdaptiveServerLr for adam, yogi and adagrad when --server-lr was not given.
void validateServerOptFlags(federated::FederatedOptions& options, const ServerOptRaw& raw);

}  // namespace balancenet::cli
