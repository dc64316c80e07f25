// ServerOptFlags: `balancenet federate`'s server optimiser, client momentum, robust aggregation and update
// rejection flags (--server-opt, --server-momentum, --server-beta2, --server-tau, --client-momentum,
// --aggregator, --max-update-norm) and their checks.
#pragma once
#include <string>

#include <CLI/CLI.hpp>

#include "balancenet/federated/FederatedOptions.h"

namespace balancenet::cli {

// Adds the flags into `options` (--aggregator's text into `aggregator`) and retells --server-lr.
void addServerOptFlags(CLI::App& app, federated::FederatedOptions& options, std::string& aggregator);

// UsageError (one line naming the flag) for a bad value; sets options.trimBeta from `aggregator`.
void validateServerOptFlags(federated::FederatedOptions& options, const std::string& aggregator);

}  // namespace balancenet::cli
