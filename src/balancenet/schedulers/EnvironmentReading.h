// EnvironmentReading: what a launcher's environment says about this process, and which variable said it.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace balancenet::schedulers {

// A variable's value, or nothing when it is unset. The process's own is processEnvironment(); tests pass a map.
using Environment = std::function<std::optional<std::string>(const std::string& name)>;
Environment processEnvironment();

// A value and where it came from ("SLURM_PROCID", "first host of SLURM_STEP_NODELIST=node[01-04]").
template <class T>
struct Sourced {
  T value{};
  std::string from;
};

// One launcher's word on who this process is. A launcher that starts one process per worker (torchrun's
// agent, srun, mpirun) gives rank and world; one that starts a host's launcher (a Kubernetes pod) gives nodeRank.
struct SchedulerReading {
  std::string scheduler;  // "torchrun", "slurm", "openmpi", "mpich", "kubernetes"
  std::optional<Sourced<int>> rank, worldSize, localRank, localWorldSize, nodeRank;
  std::optional<Sourced<std::string>> masterAddr;  // derived from the scheduler's own variables, if it can be
  std::optional<Sourced<int>> masterPort;
  std::string masterHint;  // when masterAddr cannot be derived: how to give it (said if MASTER_ADDR is unset too)
};

// torchrun's default store port: where a launcher's variables name none (MPI, Kubernetes).
constexpr int kTorchrunDefaultPort = 29500;

// The whole value as an integer in [min, max] (digits only: std::stoll would take " 4" and "+4"); else a one-line
// UsageError naming the variable.
int environmentInteger(const std::string& name, const std::string& value, int min, int max);

// `name`'s value as environmentInteger reads it, with its source; nothing when unset.
std::optional<Sourced<int>> readInteger(const Environment& env, const std::string& name, int min, int max);

// The variables of a launcher that starts one process per worker.
struct WorkerVariables {
  const char* scheduler;
  const char* rank;
  const char* worldSize;
  const char* localRank;
  const char* localWorldSize;
};

// Rank, world, local rank and local world from `v` (the first two together or neither); nothing when v.rank is
// unset. The rank must be below the world.
std::optional<SchedulerReading> readWorkerVariables(const Environment& env, const WorkerVariables& v);

}  // namespace balancenet::schedulers
