// `balancenet worker`: the job from the launcher, the identity from the environment, then run.
#include "balancenet/cli/WorkerCommand.h"

#include <cstdlib>

#include "balancenet/core/EnvironmentVariables.h"
#include "balancenet/core/Error.h"
#include "balancenet/core/Logging.h"
#include "balancenet/job/JobConfigJson.h"
#include "balancenet/launch/WorkerEnvironment.h"
#include "balancenet/ps/process/ServerProcess.h"
#include "balancenet/worker/Worker.h"
#include "balancenet/worker/WorkerThreads.h"

namespace balancenet::cli {

int runLaunchedProcess() {
  const char* text = std::getenv(kJobConfigVar);
  require(text != nullptr,
          "balancenet worker is how balancenet's launcher starts its processes (BALANCENET_JOB_CONFIG is not set): "
          "run balancenet train, federate or launch");
  job::JobConfig c = job::jobConfigFromJson(text);
  c.worker = launch::readWorkerEnvironment(c.launch);
  c.server = launch::readServerEnvironment();
  require(c.worker || c.server, "balancenet worker: the launcher set neither RANK nor BALANCENET_PS_SERVER");
  // Each worker shares its own host's cores among the workers there (LOCAL_WORLD_SIZE).
  if (c.worker && !c.threadsGiven) worker::chooseDefaultThreads(c);
  setupLogging(c.logLevel);  // the run directory and progress period came settled by the launcher
  if (c.server) return ps::runParameterServer(c);
  return worker::runWorker(c);
}

}  // namespace balancenet::cli
