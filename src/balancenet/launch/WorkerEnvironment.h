// WorkerEnvironment: reads who this process is from its launcher's environment, and writes torchrun's variables
// for the children of balancenet's own launcher.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "balancenet/core/EnvironmentVariables.h"
#include "balancenet/job/LaunchOptions.h"
#include "balancenet/schedulers/EnvironmentReading.h"

namespace balancenet::launch {

// Who this process is, from the first launcher in schedulers::schedulerPrecedence() whose variables are set
// (torchrun's RANK..., Open MPI's, MPICH's, a Slurm step's, a Kubernetes pod's index). Returns nothing when this
// process is not one worker: no launcher at all, or a Kubernetes pod (then launch.nodeRank is its index).
// The store's address: MASTER_ADDR and MASTER_PORT win, then --master-addr/--master-port, then what the launcher's
// variables imply (a Slurm step's first host, 127.0.0.1 when every rank is local, ...). Also launch.storeFile and
// launch.jobToken (from BALANCENET_JOB_TOKEN unless --job-token gave one); launch.scheduler and launch.sources say
// what was read from where.
std::optional<job::WorkerIdentity> readWorkerEnvironment(job::LaunchOptions& launch);
std::optional<job::WorkerIdentity> readWorkerEnvironment(job::LaunchOptions& launch,
                                                         const schedulers::Environment& env);

// launch.sources as YAML comment lines for --print-config (empty when nothing was read).
std::string launchSourcesComment(const job::LaunchOptions& launch);

// BALANCENET_JOB_TOKEN when it is set; set but empty is a UsageError.
std::optional<std::string> jobTokenFromEnvironment();
std::optional<std::string> jobTokenFromEnvironment(const schedulers::Environment& env);

// The parameter server index this process was started as (BALANCENET_PS_SERVER), if any.
std::optional<int> readServerEnvironment();

// A child's environment: `inherited` ("NAME=value", the launcher's own) without the variables that say
// who a process is (see EnvironmentVariables.h), then the job's store (MASTER_ADDR, MASTER_PORT unless
// `port` is 0: a file store, BALANCENET_STORE_FILE, BALANCENET_JOB_TOKEN), then `identity`.
std::vector<std::string> childEnvironment(const std::vector<std::string>& inherited, const job::LaunchOptions& launch,
                                          int port, const std::vector<std::string>& identity);

// A worker's identity: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE (and BALANCENET_JOIN when it joins).
std::vector<std::string> workerIdentity(const job::LaunchOptions& launch, int rank, int localRank, bool joining);

// A parameter server's identity: BALANCENET_PS_SERVER.
std::vector<std::string> serverIdentity(int server);

}  // namespace balancenet::launch
