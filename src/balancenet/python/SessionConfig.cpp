// The session's configuration from the launcher's environment.
#include "balancenet/python/SessionConfig.h"

#include "balancenet/cli/RunSetup.h"
#include "balancenet/cli/TrainFlags.h"
#include "balancenet/launch/WorkerEnvironment.h"

namespace balancenet::python {

job::JobConfig sessionConfigFromEnvironment(const std::string& runDir) {
  job::JobConfig c = cli::defaultJobConfig();
  if (!runDir.empty()) c.trainer.runDir = runDir;
  cli::settleLoggingAndOutputs(c, cli::RawFlags{});
  c.worker = launch::readWorkerEnvironment(c.launch);
  return c;
}

}  // namespace balancenet::python
