// MPI launchers' variables: Open MPI's mpirun and MPICH's Hydra. Neither says where rank 0 runs, so the store's
// address is 127.0.0.1 when every rank is on this host, and MASTER_ADDR otherwise.
#include <fmt/format.h>

#include "balancenet/schedulers/Launchers.h"

namespace balancenet::schedulers {
namespace {

std::optional<SchedulerReading> readMpi(const Environment& env, const WorkerVariables& v, const char* exportFlag) {
  auto r = readWorkerVariables(env, v);
  if (!r) return r;
  if (r->localWorldSize && r->localWorldSize->value == r->worldSize->value)
    r->masterAddr = Sourced<std::string>{
        "127.0.0.1", fmt::format("every rank on this host ({} = {})", v.localWorldSize, v.worldSize)};
  else
    r->masterHint = fmt::format(
        "{} ranks run on several hosts and the launcher does not say where rank 0 is: give every rank MASTER_ADDR "
        "({})",
        v.scheduler, exportFlag);
  r->masterPort = Sourced<int>{kTorchrunDefaultPort, "the default for MPI launchers (set MASTER_PORT to change it)"};
  return r;
}

}  // namespace

std::optional<SchedulerReading> readOpenMpi(const Environment& env) {
  return readMpi(env,
                 {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                  "OMPI_COMM_WORLD_LOCAL_SIZE"},
                 "mpirun -x MASTER_ADDR=<rank 0's host>");
}

std::optional<SchedulerReading> readMpich(const Environment& env) {
  return readMpi(env, {"mpich", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
                 "mpiexec -genv MASTER_ADDR <rank 0's host>");
}

}  // namespace balancenet::schedulers
