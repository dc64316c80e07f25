// The session's configuration from the launcher's environment.
#include "balancenet/python/SessionConfig.h"

#include <cstdlib>

#include "balancenet/core/EnvironmentVariables.h"
#include "balancenet/core/Logging.h"
#include "balancenet/job/JobConfigJson.h"
#include "balancenet/job/JobDefaults.h"
#include "balancenet/launch/WorkerEnvironment.h"

namespace balancenet::python {

job::JobConfig sessionConfigFromEnvironment(const std::string& runDir) {
  job::JobConfig c;
  if (const char* text = std::getenv(kJobConfigVar)) {
    // The job as `balancenet launch` resolved it, run directory and progress period included.
    c = job::jobConfigFromJson(text);
    setupLogging(c.logLevel);
  } else {
    c = job::defaultLaunchConfig();
    if (!runDir.empty()) c.trainer.runDir = runDir;
    job::settleLoggingAndOutputs(c, -1);  // the default progress period
  }
  c.worker = launch::readWorkerEnvironment(c.launch);
  return c;
}

}  // namespace balancenet::python
