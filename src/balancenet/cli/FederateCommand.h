// FederateCommand: `balancenet federate`: one federated server and --clients client processes under the
// train launcher (same supervision, store, multi-host and emulation flags), each client with its own
// non-IID shard of the training set (see docs/federated.md).
#pragma once
#include <string>
#include <vector>

#include "balancenet/cli/flags/ServerOptFlags.h"
#include "balancenet/cli/flags/TrainFlags.h"
#include "balancenet/job/JobConfig.h"
#include "balancenet/job/JobDefaults.h"

namespace CLI {
class App;
}

namespace balancenet::cli {

struct FederateFlags {
  job::JobConfig config = job::defaultJobConfig();
  RawFlags raw;  // the launch and emulation groups shared with train
  federated::FederatedOptions options;
  std::string alpha = "0.5";
  std::string localSteps = "20";
  double peerTimeoutS = 30;
  ServerOptRaw serverOpt;  // --aggregator, whether --server-lr is given (ServerOptFlags.h)
};

void addFederateFlags(CLI::App& app, FederateFlags& flags);

// The federated options alone (--rounds, --strategy, --local-steps, ..., --peer-timeout), shared with
// `federate serve`, and their checks (UsageError naming the flag).
void addFederatedOptions(CLI::App& app, FederateFlags& flags);
void validateFederatedOptions(FederateFlags& flags);

// After parsing (and reading the environment into config.worker): every value and combination checked
// (UsageError, one line naming the flag), config.federated and the launch shape (clients + 1 processes) filled in.
void validateFederateFlags(FederateFlags& flags);

// `balancenet federate ARGS` parsed and validated without running (what the unit tests call).
job::JobConfig parseFederateCommandLine(const std::vector<std::string>& args);

// The server's --resume / --checkpoint-dir check, run by the launcher before any process starts.
void preflightFederatedCheckpoints(const job::JobConfig& config);

// After parsing: a launcher (the server's checkpoints and the job checked first) or one of its processes, as
// the environment says. Its exit code; bad input throws UsageError.
int runFederate(FederateFlags& flags, int argc, char** argv);

}  // namespace balancenet::cli
