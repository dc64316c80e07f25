// `balancenet train`: a launcher, a worker or a parameter server, after one validation of the flags.
#include "balancenet/cli/TrainCommand.h"

#include <iostream>

#include <CLI/CLI.hpp>

#include "balancenet/cli/LaunchChecks.h"
#include "balancenet/cli/YamlConfig.h"
#include "balancenet/cli/flags/HostFlags.h"
#include "balancenet/cli/flags/JobTokenFlags.h"
#include "balancenet/cli/flags/TrainValidation.h"
#include "balancenet/job/JobDefaults.h"
#include "balancenet/launch/LocalLauncher.h"
#include "balancenet/launch/WorkerEnvironment.h"
#include "balancenet/ps/process/ServerProcess.h"
#include "balancenet/worker/Checkpointing.h"
#include "balancenet/worker/Worker.h"

namespace balancenet::cli {
namespace {

// The job again for the world the hosts agreed on (launch/LocalLauncher.h): the launcher's words after
// "train" with every host's count, checked as before the launch.
job::JobConfig againForTheHosts(const job::JobConfig& c) {
  return checkBeforeLaunch(parseTrainCommandLine(withAgreedHosts(trainWords(c), c.launch)));
}

}  // namespace

int runTrain(const CLI::App& train, job::JobConfig& config, RawFlags& raw, int argc, char** argv) {
  config.argv.assign(argv, argv + argc);
  config.worker = launch::readWorkerEnvironment(config.launch);
  config.server = launch::readServerEnvironment();
  config.threadsGiven = train.count("--threads") > 0;
  validateTrainFlags(config, raw);
  if (raw.printConfig) {
    std::cout << effectiveConfigYaml(train) << launch::launchSourcesComment(config.launch) << std::flush;
    return 0;
  }
  job::settleLoggingAndOutputs(config, raw.result.progressSeconds);
  announceJobToken(config);
  if (config.server) return ps::runParameterServer(config);
  if (config.worker) return worker::runWorker(config);
  const job::JobConfig checked = checkBeforeLaunch(config);
  // Rank 0, the one that writes them, runs here (a federated server's are checked by runFederate).
  if (checked.launch.nodeRank == 0) worker::preflightCheckpoints(checked);
  return launch::launchLocalWorkers(checked, againForTheHosts);
}

}  // namespace balancenet::cli
