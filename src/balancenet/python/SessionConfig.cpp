// The session's configuration from the launcher's environment.
#include "balancenet/python/SessionConfig.h"

#include <cstdlib>

#include "balancenet/cli/RunSetup.h"
#include "balancenet/cli/flags/LaunchFlags.h"
#include "balancenet/core/EnvironmentVariables.h"
#include "balancenet/core/Logging.h"
#include "balancenet/launch/WorkerEnvironment.h"

namespace balancenet::python {

job::JobConfig sessionConfigFromEnvironment(const std::string& runDir) {
  job::JobConfig c;
  if (const char* words = std::getenv(kLaunchArgsVar)) {
    // The launcher's flags, with the run directory and progress period it resolved for every worker.
    c = cli::parseLaunchFlags(launch::decodeLaunchArgs(words));
    setupLogging(c.logLevel);
  } else {
    c = cli::defaultLaunchConfig();
    if (!runDir.empty()) c.trainer.runDir = runDir;
    cli::settleLoggingAndOutputs(c, cli::RawFlags{});
  }
  c.worker = launch::readWorkerEnvironment(c.launch);
  return c;
}

}  // namespace balancenet::python
