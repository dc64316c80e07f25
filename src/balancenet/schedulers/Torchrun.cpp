// torchrun's variables (also what balancenet's own launcher sets on its workers).
#include "balancenet/core/EnvironmentVariables.h"
#include "balancenet/schedulers/Launchers.h"

namespace balancenet::schedulers {

std::optional<SchedulerReading> readTorchrun(const Environment& env) {
  // No derived store address: torchrun (and our launcher) always set MASTER_ADDR/MASTER_PORT or a store file.
  return readWorkerVariables(env, {"torchrun", kRankVar, kWorldSizeVar, kLocalRankVar, kLocalWorldSizeVar});
}

}  // namespace balancenet::schedulers
