// WorkerEnvironment: reads torchrun's environment variables (who this process is), and writes them for children.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "balancenet/core/EnvironmentVariables.h"
#include "balancenet/job/JobConfig.h"

namespace balancenet::launch {

// RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT. Returns nothing when RANK is unset;
// fills launch.masterAddr/masterPort/storeFile from the environment when they are set there, and
// launch.jobToken from BALANCENET_JOB_TOKEN unless --job-token gave one.
std::optional<job::WorkerIdentity> readWorkerEnvironment(job::LaunchOptions& launch);

// BALANCENET_JOB_TOKEN when it is set; set but empty is a UsageError.
std::optional<std::string> jobTokenFromEnvironment();

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
